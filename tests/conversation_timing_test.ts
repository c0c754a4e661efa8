/**
 * The time rules of a conversation (src/conversations/timing.ts): grouping windows, the UTC day of
 * maxDailyMessages, the reminder (half of autoCloseMinutes, once per silence) and the auto-close.
 */
import assert from "node:assert/strict";
import {
  autoCloseDueAt,
  groupingWindowEndsAt,
  isDue,
  mayReplyToday,
  reminderDueAt,
  utcDay,
} from "../src/conversations/timing.ts";

const at = (iso: string) => new Date(iso);
const T0 = "2026-11-22T10:00:00.000Z";

Deno.test("groupingWindowEndsAt() is 2, 5 or 10 s after the last customer message, or the operator's delays", () => {
  assert.deepEqual(groupingWindowEndsAt(at(T0), "FAST"), at("2026-11-22T10:00:02.000Z"));
  assert.deepEqual(groupingWindowEndsAt(at(T0), "MEDIUM"), at("2026-11-22T10:00:05.000Z"));
  assert.deepEqual(groupingWindowEndsAt(at(T0), "SLOW"), at("2026-11-22T10:00:10.000Z"));
  assert.deepEqual(
    groupingWindowEndsAt(at(T0), "SLOW", { FAST: 1, MEDIUM: 1, SLOW: 50 }),
    at("2026-11-22T10:00:00.050Z"),
  );
});

Deno.test("utcDay() and mayReplyToday(): the limit counts replies of the current UTC day; null is no limit", () => {
  assert.deepEqual(utcDay(at("2026-11-22T23:59:59.999Z")), {
    start: at("2026-11-22T00:00:00.000Z"),
    end: at("2026-11-23T00:00:00.000Z"),
  });
  assert.deepEqual(utcDay(at("2026-11-23T00:00:00.000Z")).start, at("2026-11-23T00:00:00.000Z"));
  assert.equal(mayReplyToday(2, 3), true);
  assert.equal(mayReplyToday(3, 3), false);
  assert.equal(mayReplyToday(0, 0), false);
  assert.equal(mayReplyToday(10_000, null), true);
});

Deno.test("reminderDueAt() is half of autoCloseMinutes after the agent's last message, once per silence", () => {
  const base = { lastMessageAt: null, reminderSentAt: null };
  // The agent spoke last: due 30 minutes later (autoCloseMinutes 60).
  assert.deepEqual(
    reminderDueAt(
      { ...base, lastContactMessageAt: at("2026-11-22T09:59:00Z"), lastAgentMessageAt: at(T0) },
      60,
    ),
    at("2026-11-22T10:30:00.000Z"),
  );
  assert.deepEqual(
    reminderDueAt({ ...base, lastContactMessageAt: null, lastAgentMessageAt: at(T0) }, 15),
    at("2026-11-22T10:07:30.000Z"),
  );
  // The customer spoke last, or nobody from the agent's side yet: no reminder.
  assert.equal(
    reminderDueAt(
      { ...base, lastContactMessageAt: at("2026-11-22T10:01:00Z"), lastAgentMessageAt: at(T0) },
      60,
    ),
    null,
  );
  assert.equal(reminderDueAt({ ...base, lastContactMessageAt: at(T0), lastAgentMessageAt: null }, 60), null);
  // A reminder already sent in this silence: none again, even though it is the agent's latest message.
  assert.equal(
    reminderDueAt({
      ...base,
      lastContactMessageAt: at("2026-11-22T09:00:00Z"),
      lastAgentMessageAt: at("2026-11-22T10:30:00Z"),
      reminderSentAt: at("2026-11-22T10:30:00Z"),
    }, 60),
    null,
  );
  // After the customer answers and the agent replies, a new silence gets its reminder.
  assert.deepEqual(
    reminderDueAt({
      ...base,
      lastContactMessageAt: at("2026-11-22T11:00:00Z"),
      lastAgentMessageAt: at("2026-11-22T11:00:05Z"),
      reminderSentAt: at("2026-11-22T10:30:00Z"),
    }, 60),
    at("2026-11-22T11:30:05.000Z"),
  );
});

Deno.test("autoCloseDueAt() is autoCloseMinutes after the last message of either side; isDue() compares with now", () => {
  const due = autoCloseDueAt({ lastMessageAt: at(T0) }, 60);
  assert.deepEqual(due, at("2026-11-22T11:00:00.000Z"));
  assert.equal(autoCloseDueAt({ lastMessageAt: null }, 60), null);
  assert.equal(isDue(due, at("2026-11-22T10:59:59.999Z")), false);
  assert.equal(isDue(due, at("2026-11-22T11:00:00.000Z")), true);
  assert.equal(isDue(null, at(T0)), false);
});
