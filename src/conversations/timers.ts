/**
 * The conversation timers on pg-boss (decisions.md "Conversations"): the reminder (once per
 * silence, half of autoCloseMinutes after the agent's last message) and the auto-close
 * (autoCloseMinutes after the last message, `conversation.closed` reason INACTIVITY). A job is
 * scheduled for the due time each time the times change; when it runs it reloads the conversation
 * and acts only if the rule (timing.ts) still says due for the stored times, in an UPDATE whose
 * WHERE repeats the check: a stale job, or the second of two processes, does nothing.
 */
import type { Deps } from "../context.ts";
import type { Tx } from "../db/client.ts";
import { autoCloseDueAt, isDue, reminderDueAt } from "./timing.ts";
import { shapeReply } from "./shaping.ts";
import { sendCommitted, storeOutgoing } from "./outbound.ts";
import { closeConversation } from "./handoff.ts";

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

/**
 * Inside `tx`, after the conversation's times changed: a job for the reminder (when one is due
 * and the agent sends reminders) and one for the auto-close, each at its due time. `known`: the
 * state as the caller has just written it in `tx` (saves reading it again).
 */
export async function scheduleTimers(
  deps: Pick<Deps, "jobs" | "clock">,
  tx: Tx,
  conversationId: string,
  known?: TimerState,
): Promise<void> {
  const conv: TimerState | null = known ?? await tx.conversation.findUnique({
    where: { id: conversationId },
    select: { ...TIMES, status: true, agent: { select: { autoCloseMinutes: true, enabledReminder: true } } },
  });
  if (!conv || conv.status === "CLOSED") return;
  const now = deps.clock.now().getTime();
  const reminder = conv.agent.enabledReminder ? reminderDueAt(conv, conv.agent.autoCloseMinutes) : null;
  const autoClose = autoCloseDueAt(conv, conv.agent.autoCloseMinutes);
  const jobs = ([["reminder", reminder], ["auto-close", autoClose]] as const)
    .filter(([, due]) => due)
    .map(([kind, due]) => ({
      data: { conversationId, kind } satisfies TimerJob,
      startAfterMs: due!.getTime() - now,
    }));
  await deps.jobs.enqueueEach(tx, CONVERSATION_TIMER_QUEUE, jobs);
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
        },
      },
    },
  });
  if (!conv || conv.status !== "OPEN" || conv.agent.status !== "ACTIVE" || !conv.agent.enabledReminder) {
    return;
  }
  const now = deps.clock.now();
  if (!isDue(reminderDueAt(conv, conv.agent.autoCloseMinutes), now)) return;
  const sent = await deps.db.$transaction(async (tx): Promise<Array<{ id: string; content: string }>> => {
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
    const parts = shapeReply(REMINDER_TEXT, conv.agent);
    const { stored } = await storeOutgoing(
      deps,
      tx,
      now,
      parts.map((content) => ({
        workspaceId: conv.workspaceId,
        agentId: conv.agentId,
        conversationId: conv.id,
        channelId: conv.channelId,
        channelType: conv.channel.type,
        sender: "AI" as const,
        content,
      })),
      { direct: true },
    );
    return stored;
  });
  await sendCommitted(
    deps,
    { channelId: conv.channelId, channelType: conv.channel.type, to: conv.contact.externalId },
    sent,
  );
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
  if (!isDue(autoCloseDueAt(conv, conv.agent.autoCloseMinutes), deps.clock.now())) return;
  await deps.db.$transaction((tx) =>
    // The WHERE repeats lastMessageAt: a message since the check keeps the conversation open.
    closeConversation(deps, tx, conv, "INACTIVITY", { lastMessageAt: conv.lastMessageAt })
  );
}
