/**
 * The time rules of a conversation (docs/behaviour.md "Replies"), as pure functions of stored
 * timestamps and the clock's now, so the pg-boss jobs that act on them can be scheduled, checked
 * again when they run (a job may run late or twice), and tested with an injected clock:
 * the grouping window, the daily reply limit, the reminder and the auto-close.
 */

export type MessageGroupingTime = "FAST" | "MEDIUM" | "SLOW";

/** Default windows: FAST 2 s, MEDIUM 5 s, SLOW 10 s after the last customer message (operator-configurable). */
export const GROUPING_DELAY_MS: Readonly<Record<MessageGroupingTime, number>> = {
  FAST: 2_000,
  MEDIUM: 5_000,
  SLOW: 10_000,
};

const MINUTE = 60_000;

/**
 * When the grouping window of a customer message received at `lastCustomerMessageAt` closes; each
 * new customer message restarts it. `delays` replaces the defaults (operator settings, the bench).
 */
export function groupingWindowEndsAt(
  lastCustomerMessageAt: Date,
  grouping: MessageGroupingTime,
  delays: Readonly<Record<MessageGroupingTime, number>> = GROUPING_DELAY_MS,
): Date {
  return new Date(lastCustomerMessageAt.getTime() + delays[grouping]);
}

/** Start and end (exclusive) of the UTC day of `now`: the period `maxDailyMessages` counts in. */
export function utcDay(now: Date): { start: Date; end: Date } {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { start: new Date(start), end: new Date(start + 24 * 60 * MINUTE) };
}

/**
 * Whether the agent may still reply to this contact today: `repliesToday` are the agent's replies
 * to the contact in the current UTC day; null `maxDailyMessages` means no limit.
 */
export function mayReplyToday(repliesToday: number, maxDailyMessages: number | null): boolean {
  return maxDailyMessages === null || repliesToday < maxDailyMessages;
}

export interface ConversationTimes {
  /** Last message of either side. */
  lastMessageAt: Date | null;
  lastContactMessageAt: Date | null;
  lastAgentMessageAt: Date | null;
  reminderSentAt: Date | null;
}

/**
 * When the reminder is due, or null when none is: the customer has been silent since the agent's
 * last message for half of `autoCloseMinutes`. One per silence: none once a reminder was sent after
 * the customer's last message (the reminder itself does not start a new silence).
 */
export function reminderDueAt(t: ConversationTimes, autoCloseMinutes: number): Date | null {
  if (!t.lastAgentMessageAt) return null;
  const contact = t.lastContactMessageAt?.getTime() ?? -Infinity;
  if (t.lastAgentMessageAt.getTime() <= contact) return null;
  if (t.reminderSentAt && t.reminderSentAt.getTime() > contact) return null;
  return new Date(t.lastAgentMessageAt.getTime() + (autoCloseMinutes * MINUTE) / 2);
}

/** When the conversation closes for inactivity: `autoCloseMinutes` after the last message of either side. */
export function autoCloseDueAt(
  t: Pick<ConversationTimes, "lastMessageAt">,
  autoCloseMinutes: number,
): Date | null {
  return t.lastMessageAt ? new Date(t.lastMessageAt.getTime() + autoCloseMinutes * MINUTE) : null;
}

/** Whether a due time has come at `now` (a job that runs early, after a newer message, does nothing). */
export const isDue = (due: Date | null, now: Date): boolean => due !== null && due.getTime() <= now.getTime();
