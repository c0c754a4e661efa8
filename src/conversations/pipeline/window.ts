/**
 * The grouping window (decisions.md "Conversations"): a listener on `message.received`, run inside
 * the transaction that stored the customer message, moves the conversation's `replyDueAt` to now +
 * the agent's messageGroupingTime (operator settings GROUPING_*_MS) and enqueues a reply job for
 * that time. Each message restarts the window; the jobs of earlier messages find the due time moved
 * and do nothing (reply.ts). It also schedules the auto-close from the new last message.
 */
import type { Deps } from "../../context.ts";
import type { Tx } from "../../db/client.ts";
import type { EventListener } from "../../shared/events.ts";
import { scheduleTimers, type TimerState } from "../timers.ts";

export const REPLY_QUEUE = "conversation-reply";

export interface ReplyJob {
  conversationId: string;
}

/** The listener: after the batch's statement, each message.received of the batch in turn. */
export function replyWindowListener(deps: Pick<Deps, "jobs" | "clock" | "config">): EventListener {
  return {
    async after(tx, events) {
      for (const event of events) {
        if (event.type === "message.received" && event.conversationId) {
          await restartWindow(deps, tx, event.conversationId);
        }
      }
    },
  };
}

async function restartWindow(deps: Pick<Deps, "jobs" | "clock" | "config">, tx: Tx, conversationId: string) {
  const now = deps.clock.now();
  const { FAST, MEDIUM, SLOW } = deps.config.groupingMs;
  // Also returns what the timers are computed from, so they need no read of their own.
  const [row] = await tx.$queryRaw<Array<Omit<TimerState, "agent"> & TimerState["agent"] & { due: Date }>>`
      UPDATE "Conversation" c
         SET "replyDueAt" = ${now}::timestamptz + make_interval(secs => (CASE a."messageGroupingTime"
               WHEN 'FAST' THEN ${FAST}::int WHEN 'SLOW' THEN ${SLOW}::int ELSE ${MEDIUM}::int END) / 1000.0)
        FROM "Agent" a
       WHERE c.id = ${conversationId} AND a.id = c."agentId" AND c.status <> 'CLOSED'
      RETURNING c."replyDueAt" AS due, c."lastMessageAt", c."lastContactMessageAt", c."lastAgentMessageAt",
                c."reminderSentAt", c.status::text AS status, a."autoCloseMinutes", a."enabledReminder"`;
  if (!row) return;
  await deps.jobs.enqueue(tx, REPLY_QUEUE, [{ conversationId } satisfies ReplyJob], {
    startAfterMs: row.due.getTime() - now.getTime(),
    // The process that stored the message answers it when the window closes (no fetch).
    runHere: true,
  });
  const { due: _due, autoCloseMinutes, enabledReminder, ...times } = row;
  await scheduleTimers(deps, tx, conversationId, {
    ...times,
    agent: { autoCloseMinutes, enabledReminder },
  });
}
