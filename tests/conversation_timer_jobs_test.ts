/**
 * The timer jobs on pg-boss: one waiting job per conversation and kind however often the times
 * move, a job that runs before the due time queues the one for it, a due time moved forward brings
 * the waiting job forward, and the timer workers take due jobs in batches (counted per fetch in
 * pgboss.job), so a due timer queued behind a backlog of 300 others fires.
 */
import assert from "node:assert/strict";
import { startTestApp, type TestApp } from "./_helpers/app.ts";
import { type App, buildApp } from "../src/app.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { customerMessage, seedChannel, waitUntil } from "./_helpers/conversations.ts";
import {
  CONVERSATION_TIMER_QUEUE,
  rescheduleTimers,
  runTimer,
  type TimerJob,
  timerKey,
} from "../src/conversations/timers.ts";

const MINUTE = 60_000;

/** An app that runs no workers (the tests run the jobs, or start a second app that does). */
async function setup(clock: ManualClock | undefined, fields: Record<string, unknown> = {}) {
  const t = await startTestApp({ GROUPING_MEDIUM_MS: "3600000" }, { clock, workers: false });
  const { workspaceId, owner } = await t.seed.workspace();
  const agent = await t.seed.agent(owner.client, { autoCloseMinutes: 60, enabledReminder: true, ...fields });
  const channel = await seedChannel(t.app, workspaceId, agent.id, "API");
  const write = (content: string, externalId = "5511999990000") =>
    customerMessage(t.app, {
      workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content,
      contact: { externalId, name: "Maria" },
    });
  return { t, agent, write };
}

/** The agent's reply at `now` as the pipeline records it, with the timers it schedules. */
async function agentReplied(t: TestApp, conversationId: string, now: Date) {
  await t.app.deps.db.$transaction(async (tx) => {
    await tx.conversation.update({
      where: { id: conversationId },
      data: { lastMessageAt: now, lastAgentMessageAt: now },
    });
    await rescheduleTimers(t.app.deps, tx, conversationId);
  });
}

/** The timer jobs waiting for the conversation: kind and seconds from the database's now. */
async function waiting(t: TestApp, conversationId: string) {
  return await t.app.deps.db.$queryRawUnsafe<Array<{ kind: string; secs: number }>>(
    `SELECT data->>'kind' AS kind, extract(epoch FROM start_after - now())::float AS secs FROM pgboss.job
      WHERE name = $1 AND data->>'conversationId' = $2 AND state = 'created' ORDER BY 1`,
    CONVERSATION_TIMER_QUEUE,
    conversationId,
  );
}

Deno.test("20 exchanges leave exactly one waiting job per timer kind; a job run early queues the one for the new due time", async () => {
  const clock = new ManualClock(new Date("2026-11-20T10:00:00.000Z"));
  const { t, write } = await setup(clock);
  try {
    let conversationId = "";
    for (let i = 0; i < 20; i++) {
      conversationId = (await write(`mensagem ${i}`)).conversationId;
      clock.advance(1000);
      await agentReplied(t, conversationId, clock.now());
      clock.advance(1000);
    }
    const jobs = await waiting(t, conversationId);
    assert.deepEqual(jobs.map((j) => j.kind), ["auto-close", "reminder"], JSON.stringify(jobs));
    // Each still due at the time of its first scheduling: due early, it will queue the next.
    const [close, reminder] = jobs;
    assert.ok(close.secs > 59 * 60 && close.secs <= 60 * 60, `auto-close in ${close.secs} s`);
    assert.ok(reminder.secs > 29 * 60 && reminder.secs <= 30 * 60, `reminder in ${reminder.secs} s`);

    // The first auto-close job runs at its time, 38 s before the conversation's due time: nothing
    // closes, and the waiting job is the one for the due time.
    await t.app.deps.db.$executeRawUnsafe(
      `DELETE FROM pgboss.job WHERE name = $1 AND data->>'conversationId' = $2`,
      CONVERSATION_TIMER_QUEUE,
      conversationId,
    );
    const lastAt = new Date("2026-11-20T10:00:39.000Z"); // the 20th agent reply
    clock.set(new Date(lastAt.getTime() + 60 * MINUTE - 38_000));
    await runTimer(t.app.deps, { conversationId, kind: "auto-close" });
    const conv = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: conversationId } });
    assert.equal(conv.status, "OPEN");
    const next = await waiting(t, conversationId);
    assert.deepEqual(next.map((j) => j.kind), ["auto-close"]);
    assert.ok(next[0].secs > 37 && next[0].secs <= 38, `requeued for ${next[0].secs} s later`);

    clock.set(new Date(lastAt.getTime() + 60 * MINUTE));
    await runTimer(t.app.deps, { conversationId, kind: "auto-close" });
    const closed = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: conversationId } });
    assert.equal(closed.status, "CLOSED");
    assert.equal(closed.closeReason, "INACTIVITY");
  } finally {
    await t.close();
  }
});

Deno.test("a due time moved forward brings the waiting job forward", async () => {
  const clock = new ManualClock(new Date("2026-11-20T10:00:00.000Z"));
  const { t, agent, write } = await setup(clock);
  try {
    const { conversationId } = await write("oi");
    assert.ok((await waiting(t, conversationId))[0].secs > 3590);
    await t.app.deps.db.agent.update({ where: { id: agent.id }, data: { autoCloseMinutes: 5 } });
    await t.app.deps.db.$transaction((tx) => rescheduleTimers(t.app.deps, tx, conversationId));
    const jobs = await waiting(t, conversationId);
    assert.equal(jobs.length, 1);
    assert.ok(jobs[0].secs > 290 && jobs[0].secs <= 300, `auto-close in ${jobs[0].secs} s`);
  } finally {
    await t.close();
  }
});

/** The timer workers' batch size: TIMER_OPTIONS in src/jobs/workers/conversations.ts. */
const TIMER_BATCH = 20;

/** The jobs of the timer queue grouped by fetch: one fetch claims its jobs in one statement. */
async function fetches(t: TestApp, conversationId: string) {
  return await t.app.deps.db.$queryRawUnsafe<Array<{ jobs: number; ours: boolean }>>(
    `SELECT count(*)::int AS jobs, bool_or(data->>'conversationId' = $2) AS ours FROM pgboss.job
      WHERE name = $1 AND started_on IS NOT NULL GROUP BY started_on ORDER BY min(started_on)`,
    CONVERSATION_TIMER_QUEUE,
    conversationId,
  );
}

Deno.test("timer workers take due jobs 20 to a fetch, and an auto-close queued behind 300 of them fires", async () => {
  // This app runs no workers: the whole backlog is queued before one starts.
  const { t, write } = await setup(undefined, { autoCloseMinutes: 1 });
  let workers: App | undefined;
  try {
    // Jobs of conversations long gone, due now, queued before the conversation's own. Each under
    // its own key, as rescheduleTimers queues them: the queue keeps one waiting job per key, so
    // unkeyed jobs would collapse into one.
    const others = Array.from({ length: 300 }, () => {
      const data: TimerJob = { conversationId: crypto.randomUUID(), kind: "auto-close" };
      return { data, key: timerKey(data) };
    });
    await t.app.deps.db.$transaction((tx) => t.app.deps.jobs.send(tx, CONVERSATION_TIMER_QUEUE, others));
    const { conversationId } = await write("oi");
    await t.app.deps.db.conversation.update({
      where: { id: conversationId },
      data: { lastMessageAt: new Date(Date.now() - 2 * MINUTE) },
    });
    // Brings its waiting auto-close (the newest job of the queue: a fetch takes the oldest first)
    // forward to now.
    await t.app.deps.db.$transaction((tx) => rescheduleTimers(t.app.deps, tx, conversationId));
    assert.deepEqual(
      await t.app.deps.db.$queryRawUnsafe(
        `SELECT count(*)::int AS due FROM pgboss.job WHERE name = $1 AND state = 'created'
          AND start_after <= now()`,
        CONVERSATION_TIMER_QUEUE,
      ),
      [{ due: 301 }],
    );

    workers = await buildApp(t.app.deps.config, { logger: silentLogger, bootstrap: false, workers: true });
    // A fetch's jobs all become visible at once (one UPDATE): the first is whole as soon as seen.
    // (The deadlines here only guard against a hang.)
    const [first] = await waitUntil(() => fetches(t, conversationId), (f) => f.length > 0, 60_000);
    assert.equal(first.jobs, TIMER_BATCH, `the first fetch handed over ${first.jobs} job(s)`);

    await waitUntil(
      () => t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: conversationId } }),
      (c) => c.status === "CLOSED",
      120_000,
    );
    await waitUntil(
      () =>
        t.app.deps.db.$queryRawUnsafe<Array<{ n: number }>>(
          `SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state <> 'completed'`,
          CONVERSATION_TIMER_QUEUE,
        ),
      ([{ n }]) => n === 0,
    );
    // Every job taken once, at most 20 to a fetch, and the conversation's job by one of the last two
    // fetches: taken after the jobs queued before it. (Two workers fetch side by side and skip the
    // rows the other has locked, so on a loaded machine the last 21 jobs may split either way.)
    const all = await fetches(t, conversationId);
    const detail = JSON.stringify(all);
    assert.equal(all.reduce((n, f) => n + f.jobs, 0), 301, detail);
    assert.ok(all.every((f) => f.jobs <= TIMER_BATCH), detail);
    assert.ok(all.slice(0, 14).every((f) => f.jobs === TIMER_BATCH && !f.ours), detail);
    assert.ok(all.slice(-2).some((f) => f.ours), detail);
  } finally {
    await workers?.stop();
    await t.close();
  }
});
