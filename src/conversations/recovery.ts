/**
 * Claims of processes that are gone (docs/behaviour.md "Replies": a reply that a dead process had
 * claimed is taken over within seconds, well inside the 30 s the platform promises). Every claim is stamped with its process (db/instance.ts), and
 * a process is alive exactly while its lock connection is open, so a killed process' claims are
 * free the moment the kernel closes its sockets. Each process with workers looks every
 * CHECK_INTERVAL_MS, on its lock connection (one small statement; the pool is not touched), for
 * claims whose holder is gone, and then, in one transaction:
 * - frees each reply claim and queues a reply job for the conversation, which answers what the
 *   dead reply left (its model call is made again; nothing of it was stored, or its store's
 *   messages are marked answered and only their sends are left);
 * - frees each send claim: a message whose channel call began may have reached the customer and
 *   becomes UNCONFIRMED (never sent twice); the others get a send job.
 * Row locks make two processes doing this at once free each claim once. A process that is only
 * slow keeps its claims; one whose lock connection dropped while it lives (a database restart) may
 * lose them, and then stores nothing under them (a reply stores only under its own claim, a send
 * only under its own claim), so nothing reaches the customer twice.
 *
 * The period is a process timer rather than a pg-boss schedule: cron's resolution is a minute.
 */
import type { Deps } from "../context.ts";
import { LIVE_INSTANCES, watchOrphanedClaims } from "../db/instance.ts";
import { sqlTransaction } from "../db/transaction.ts";
import { REPLY_QUEUE, type ReplyJob } from "./pipeline/window.ts";
import { MESSAGE_SEND_QUEUE, type SendJob } from "./outbound.ts";
import { releaseDeadReplyClaims, releaseDeadSendClaims } from "./sql.ts";

/** How often a process looks for claims of dead processes. */
export const CHECK_INTERVAL_MS = 2_000;
/** Claims freed by one transaction, at most (the next pass takes the rest at once). */
const BATCH = 500;

/** Whether a claim of a dead process is waiting: on the lock connection, both indexes tiny. */
const ORPHANS_SQL = `WITH live AS (${LIVE_INSTANCES})
  SELECT EXISTS (SELECT 1 FROM "Conversation"
                  WHERE "replyClaimedAt" IS NOT NULL AND "replyClaimedBy" NOT IN (SELECT id FROM live))
      OR EXISTS (SELECT 1 FROM "Message"
                  WHERE status = 'PENDING' AND "sendClaimedAt" IS NOT NULL
                    AND "sendClaimedBy" NOT IN (SELECT id FROM live)) AS found`;

/**
 * Frees the claims of dead processes and queues the work they left (see the module comment).
 * Returns how many reply and send claims it freed.
 */
export async function recoverDeadClaims(
  deps: Pick<Deps, "db" | "jobs" | "clock">,
): Promise<{ replies: number; sends: number }> {
  let replies = 0;
  let sends = 0;
  for (;;) {
    const freed = await sqlTransaction(deps.db, async (tx) => {
      const conversations = await releaseDeadReplyClaims.rows(tx, { limit: BATCH });
      const messages = await releaseDeadSendClaims.rows(tx, { now: deps.clock.now(), limit: BATCH });
      await deps.jobs.send(
        tx,
        REPLY_QUEUE,
        conversations.map(({ id }) => ({ data: { conversationId: id } satisfies ReplyJob })),
      );
      await deps.jobs.send(
        tx,
        MESSAGE_SEND_QUEUE,
        messages.map(({ id }) => ({ data: { messageId: id, attempt: 1 } satisfies SendJob })),
      );
      return { conversations: conversations.length, messages: messages.length };
    });
    replies += freed.conversations;
    sends += freed.messages;
    if (freed.conversations < BATCH && freed.messages < BATCH) break;
  }
  return { replies, sends };
}

/**
 * Looks for claims of dead processes at once and every CHECK_INTERVAL_MS (see the module comment);
 * returns the function that stops it (once a pass under way has ended).
 */
export function watchDeadClaims(
  deps: Pick<Deps, "db" | "jobs" | "clock" | "logger" | "instance">,
): () => Promise<void> {
  return watchOrphanedClaims(deps, {
    orphansSql: ORPHANS_SQL,
    intervalMs: CHECK_INTERVAL_MS,
    what: "claims",
    async recover() {
      const freed = await recoverDeadClaims(deps);
      if (freed.replies || freed.sends) deps.logger.info("took over the claims of a stopped process", freed);
    },
  });
}
