/**
 * The grouping window (docs/behaviour.md "Replies"): a listener on `message.received` (and on
 * `message.media_pending`, a media message stored, whose `message.received` comes later), run inside
 * the transaction that stored the customer message, moves the conversation's `replyDueAt` to now +
 * the agent's messageGroupingTime (operator settings GROUPING_*_MS) and enqueues a reply job for
 * that time. Each message restarts the window; the jobs of earlier messages find the due time moved
 * and do nothing (reply.ts). It also schedules the auto-close from the new last message. The UPDATE
 * is its share of the event batch's one statement (src/shared/events.ts).
 *
 * A window restarted by a media message is answered once its media work ends: the media job starts
 * the reply (src/media/job.ts), so the window's own job is only the backstop, due when the reply
 * would go ahead without the media (MEDIA_WAIT_MS after the window closed). Run at the window's
 * close it would only find the media pending and come back then.
 */
import type { Deps } from "../../context.ts";
import type { SqlTx } from "../../db/client.ts";
import type { EventListener } from "../../shared/events.ts";
import { Prisma } from "../../generated/prisma/client.ts";
import { scheduleTimers } from "../timers.ts";

export const REPLY_QUEUE = "conversation-reply";

export interface ReplyJob {
  conversationId: string;
}

/** What the window's UPDATE returns per conversation (JSON: times as ISO strings). */
interface Restarted {
  id: string;
  /** The window's length, ms: the reply job is due this long from now. */
  windowMs: number;
  lastMessageAt: string | null;
  lastContactMessageAt: string | null;
  lastAgentMessageAt: string | null;
  reminderSentAt: string | null;
  status: string;
  autoCloseMinutes: number;
  enabledReminder: boolean;
}

/**
 * The listener: its share of the batch's statement moves the window of every conversation with a
 * message.received in the batch (and returns what the timers are computed from, so they need no
 * read of their own); after it, each such conversation gets its reply job and its timers.
 */
export function replyWindowListener(deps: Pick<Deps, "jobs" | "clock" | "config">): EventListener {
  return {
    statement(events) {
      const ids = [
        ...new Set(
          events.filter((e) =>
            ((e.type === "message.received" && !e.afterMedia) || e.type === "message.media_pending") &&
            e.conversationId
          ).map((e) => e.conversationId!),
        ),
      ];
      if (!ids.length) return undefined;
      const now = deps.clock.now();
      const { FAST, MEDIUM, SLOW } = deps.config.groupingMs;
      return {
        ctes: Prisma.sql`window_restarted AS (
          UPDATE "Conversation" c
             SET "replyDueAt" = ${now}::timestamptz + make_interval(secs => w.ms / 1000.0)
            FROM "Agent" a, LATERAL (SELECT CASE a."messageGroupingTime" WHEN 'FAST' THEN ${FAST}::int
                   WHEN 'SLOW' THEN ${SLOW}::int ELSE ${MEDIUM}::int END AS ms) w
           WHERE c.id = ANY(${ids}::text[]) AND a.id = c."agentId" AND c.status <> 'CLOSED'
          RETURNING c.id, w.ms AS "windowMs", c."lastMessageAt", c."lastContactMessageAt", c."lastAgentMessageAt",
                    c."reminderSentAt", c.status::text AS status, a."autoCloseMinutes", a."enabledReminder")`,
        result: Prisma.sql`(SELECT COALESCE(json_agg(w), '[]') FROM window_restarted w)`,
      };
    },
    async after(tx, events, result) {
      const withMedia = new Set(
        events.filter((e) => e.type === "message.media_pending").map((e) => e.conversationId),
      );
      for (const row of (result ?? []) as Restarted[]) {
        await scheduleReply(deps, tx, row, withMedia.has(row.id));
      }
    },
  };
}

/**
 * After the media wait the reply's claim no longer waits for the media (reply.ts): the backstop
 * comes this long after it, so that its claim finds the wait over (times are compared in ms).
 */
export const MEDIA_WAIT_MARGIN_MS = 100;

async function scheduleReply(
  deps: Pick<Deps, "jobs" | "clock" | "config">,
  tx: SqlTx,
  row: Restarted,
  mediaPending: boolean,
) {
  const job = { conversationId: row.id } satisfies ReplyJob;
  if (mediaPending) {
    await deps.jobs.send(tx, REPLY_QUEUE, [{
      data: job,
      startAfterMs: row.windowMs + deps.config.media.waitMs + MEDIA_WAIT_MARGIN_MS,
    }]);
  } else {
    // The process that stored the message answers it when the window closes (no fetch: the
    // queue runs here).
    await deps.jobs.send(tx, REPLY_QUEUE, [{ data: job, startAfterMs: row.windowMs }]);
  }
  const at = (iso: string | null) => iso === null ? null : new Date(iso);
  await scheduleTimers(deps, tx, row.id, {
    lastMessageAt: at(row.lastMessageAt),
    lastContactMessageAt: at(row.lastContactMessageAt),
    lastAgentMessageAt: at(row.lastAgentMessageAt),
    reminderSentAt: at(row.reminderSentAt),
    status: row.status,
    agent: { autoCloseMinutes: row.autoCloseMinutes, enabledReminder: row.enabledReminder },
  });
}
