/**
 * The conversation timers on pg-boss (docs/behaviour.md "Replies"): the reminder (once per
 * silence, half of autoCloseMinutes after the agent's last message; outside WhatsApp's 24-hour
 * window, the agent's reminderTemplate or nothing) and the auto-close
 * (autoCloseMinutes after the last message, `conversation.closed` reason INACTIVITY). Each
 * conversation has at most one waiting job per kind (the queue's 'short' policy and a singleton
 * key): when the times change, a job is added only if none waits, and a waiting one is brought
 * forward when the new due time is earlier. A job that runs before its due time (the times moved
 * on since it was queued) queues the next for the new due time. When it is due it acts only if the
 * rule (timing.ts) still says so for the stored times, in an UPDATE whose WHERE repeats the check:
 * the second of two processes does nothing. So the queue holds one job per pending timer, not one
 * per message, and a due timer never waits behind a backlog of stale ones.
 */
import type { Deps } from "../context.ts";
import type { SqlTx, Tx } from "../db/client.ts";
import { autoCloseDueAt, isDue, reminderDueAt } from "./timing.ts";
import { windowOf } from "./views.ts";
import { shapeReply } from "./shaping.ts";
import { type Outgoing, sendCommitted, type StoredOutgoing, storeOutgoing } from "./outbound.ts";
import { closeConversation } from "./transitions.ts";
import { AppError } from "../shared/errors.ts";
import { templateChoiceSchema } from "../templates/parameters.ts";
import { type ApprovedTemplate, approvedTemplate } from "../templates/approved.ts";

export const CONVERSATION_TIMER_QUEUE = "conversation-timer";

export interface TimerJob {
  conversationId: string;
  kind: "reminder" | "auto-close";
}

/** What the reminder says (Portuguese, like the SUPORTE template); shaped with the agent's flags. */
export const REMINDER_TEXT = "Ainda está por aí? Se precisar de mais alguma coisa, é só responder.";

const TIMES = {
  lastMessageAt: true,
  lastContactMessageAt: true,
  lastAgentMessageAt: true,
  reminderSentAt: true,
} as const;

/** What the timers are computed from: the conversation's times and status, the agent's settings. */
export interface TimerState {
  lastMessageAt: Date | null;
  lastContactMessageAt: Date | null;
  lastAgentMessageAt: Date | null;
  reminderSentAt: Date | null;
  status: string;
  agent: { autoCloseMinutes: number; enabledReminder: boolean };
}

/** The timers due for `conv` (null: none of that kind). */
function dueTimes(conv: TimerState): Record<TimerJob["kind"], Date | null> {
  if (conv.status === "CLOSED") return { reminder: null, "auto-close": null };
  return {
    reminder: conv.agent.enabledReminder ? reminderDueAt(conv, conv.agent.autoCloseMinutes) : null,
    "auto-close": autoCloseDueAt(conv, conv.agent.autoCloseMinutes),
  };
}

/** The singleton key of a conversation's timer of one kind: one waiting job per key. */
export const timerKey = (job: TimerJob) => `${job.kind}:${job.conversationId}`;

/** Queues the timer jobs for their due times (inside `tx`, or at once with the pool). */
async function queueTimers(
  deps: Pick<Deps, "jobs" | "clock">,
  tx: SqlTx,
  conversationId: string,
  due: Array<[TimerJob["kind"], Date]>,
): Promise<void> {
  const now = deps.clock.now().getTime();
  await deps.jobs.send(
    tx,
    CONVERSATION_TIMER_QUEUE,
    due.map(([kind, at]) => {
      const data: TimerJob = { conversationId, kind };
      return { data, startAfterMs: at.getTime() - now, key: timerKey(data) };
    }),
  );
}

/**
 * Inside `tx`, after the conversation's times changed: the reminder (when one is due and the agent
 * sends reminders) and the auto-close, each at its due time (see the module comment). `state`:
 * the conversation's times as the caller has just written them in `tx`.
 */
export async function scheduleTimers(
  deps: Pick<Deps, "jobs" | "clock">,
  tx: SqlTx,
  conversationId: string,
  state: TimerState,
): Promise<void> {
  const due = Object.entries(dueTimes(state)).filter((e): e is [TimerJob["kind"], Date] => e[1] !== null);
  await queueTimers(deps, tx, conversationId, due);
}

/** As scheduleTimers, reading the conversation's times in `tx` first (nothing when it is gone). */
export async function rescheduleTimers(deps: Pick<Deps, "jobs" | "clock">, tx: Tx, conversationId: string) {
  const conv = await tx.conversation.findUnique({
    where: { id: conversationId },
    select: { ...TIMES, status: true, agent: { select: { autoCloseMinutes: true, enabledReminder: true } } },
  });
  if (conv) await scheduleTimers(deps, tx, conversationId, conv);
}

/**
 * A job that ran before its conversation's due time: the job for that time (a waiting one is
 * brought forward, if later). Nothing when no timer of that kind is due any more.
 */
async function requeueIfLater(deps: Deps, job: TimerJob, due: Date | null): Promise<void> {
  if (!due || due.getTime() <= deps.clock.now().getTime()) return;
  await deps.db.$transaction((tx) => queueTimers(deps, tx, job.conversationId, [[job.kind, due]]));
}

/** Runs one timer job: sends the reminder or closes the conversation, if still due. */
export async function runTimer(deps: Deps, job: TimerJob): Promise<void> {
  if (job.kind === "reminder") await runReminder(deps, job.conversationId);
  else await runAutoClose(deps, job.conversationId);
}

async function runReminder(deps: Deps, conversationId: string): Promise<void> {
  const conv = await deps.db.conversation.findUnique({
    where: { id: conversationId },
    select: {
      ...TIMES,
      id: true,
      workspaceId: true,
      agentId: true,
      status: true,
      channelId: true,
      windowClosedAt: true,
      channel: { select: { type: true } },
      contact: { select: { externalId: true } },
      agent: {
        select: {
          status: true,
          name: true,
          autoCloseMinutes: true,
          enabledReminder: true,
          splitMessages: true,
          enabledEmoji: true,
          signMessages: true,
          reminderTemplate: true,
        },
      },
    },
  });
  if (!conv || conv.status !== "OPEN" || !conv.agent.enabledReminder) return;
  const now = deps.clock.now();
  const due = reminderDueAt(conv, conv.agent.autoCloseMinutes);
  if (!isDue(due, now)) return await requeueIfLater(deps, { conversationId, kind: "reminder" }, due);
  // A PAUSED agent sends no reminder for this silence.
  if (conv.agent.status !== "ACTIVE") return;
  // Outside WhatsApp's 24-hour window a free-form reminder cannot reach the customer: the agent's
  // reminderTemplate goes instead, or nothing.
  let template: ApprovedTemplate | null = null;
  if (!windowOf(conv, now).open) {
    template = await reminderTemplate(deps, conv);
    if (!template) return;
  }
  const sent = await deps.db.$transaction(async (tx): Promise<StoredOutgoing[]> => {
    // Claims this silence's reminder: the times must be those checked above, so only one process
    // (and no stale job) gets here.
    const claimed = await tx.conversation.updateMany({
      where: {
        id: conv.id,
        status: "OPEN",
        lastAgentMessageAt: conv.lastAgentMessageAt,
        lastContactMessageAt: conv.lastContactMessageAt,
        reminderSentAt: conv.reminderSentAt,
      },
      data: { reminderSentAt: now },
    });
    if (claimed.count !== 1) return [];
    // The reminder does not move lastMessageAt: the auto-close still counts from the last exchange.
    const base = {
      workspaceId: conv.workspaceId,
      agentId: conv.agentId,
      conversationId: conv.id,
      channelId: conv.channelId,
      channelType: conv.channel.type,
      sender: "AI" as const,
    };
    const messages: Outgoing[] = template
      ? [{ ...base, content: template.content, template }]
      : shapeReply(REMINDER_TEXT, conv.agent).map((content) => ({ ...base, content }));
    const { stored } = await storeOutgoing(deps, tx, now, messages, { direct: true });
    return stored;
  });
  await sendCommitted(
    deps,
    { channelId: conv.channelId, channelType: conv.channel.type, to: conv.contact.externalId },
    sent,
  );
}

/**
 * The agent's reminderTemplate as it may go out on the conversation's channel now, or null (no
 * template: skipped as before; one that no longer fits or is not APPROVED: skipped with a warning).
 */
async function reminderTemplate(
  deps: Deps,
  conv: { id: string; channelId: string; agent: { reminderTemplate: unknown } },
): Promise<ApprovedTemplate | null> {
  if (conv.agent.reminderTemplate === null) return null;
  const choice = templateChoiceSchema.safeParse(conv.agent.reminderTemplate);
  try {
    if (!choice.success) {
      throw new AppError("TEMPLATE_PARAMETERS", 422, "the stored reminderTemplate is malformed");
    }
    return await approvedTemplate(deps, conv.channelId, choice.data);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    deps.logger.warn("reminder skipped outside the window: its template cannot be sent", {
      conversationId: conv.id,
      code: error.code,
      reason: error.message,
    });
    return null;
  }
}

async function runAutoClose(deps: Deps, conversationId: string): Promise<void> {
  const conv = await deps.db.conversation.findUnique({
    where: { id: conversationId },
    select: {
      id: true,
      workspaceId: true,
      agentId: true,
      status: true,
      lastMessageAt: true,
      agent: { select: { autoCloseMinutes: true } },
    },
  });
  if (!conv || conv.status === "CLOSED") return;
  const due = autoCloseDueAt(conv, conv.agent.autoCloseMinutes);
  if (!isDue(due, deps.clock.now())) {
    return await requeueIfLater(deps, { conversationId, kind: "auto-close" }, due);
  }
  await deps.db.$transaction((tx) =>
    // The WHERE repeats lastMessageAt: a message since the check keeps the conversation open.
    closeConversation(deps, tx, conv, "INACTIVITY", { lastMessageAt: conv.lastMessageAt })
  );
}
