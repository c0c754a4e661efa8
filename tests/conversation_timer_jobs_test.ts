/**
 * The timer jobs on pg-boss: one waiting job per conversation and kind however often the times
 * move, a job that runs before the due time queues the one for it, a due time moved forward brings
 * the waiting job forward, and a due timer is not held up by a backlog of other timer jobs.
 */
import assert from "node:assert/strict";
import { startTestApp, type TestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { customerMessage, seedChannel, waitUntil } from "./_helpers/conversations.ts";
import { CONVERSATION_TIMER_QUEUE, runTimer, scheduleTimers } from "../src/conversations/timers.ts";

const MINUTE = 60_000;

async function setup(clock: ManualClock | undefined, fields: Record<string, unknown> = {}, workers = false) {
  const t = await startTestApp({ GROUPING_MEDIUM_MS: "3600000" }, { clock, workers });
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
    await scheduleTimers(t.app.deps, tx, conversationId);
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
    await t.app.deps.db.$transaction((tx) => scheduleTimers(t.app.deps, tx, conversationId));
    const jobs = await waiting(t, conversationId);
    assert.equal(jobs.length, 1);
    assert.ok(jobs[0].secs > 290 && jobs[0].secs <= 300, `auto-close in ${jobs[0].secs} s`);
  } finally {
    await t.close();
  }
});

Deno.test("a due auto-close is not held up by 300 other timer jobs due before it", async () => {
  const { t, write } = await setup(undefined, { autoCloseMinutes: 1 }, true);
  try {
    const { conversationId } = await write("oi");
    await t.app.deps.db.conversation.update({
      where: { id: conversationId },
      data: { lastMessageAt: new Date(Date.now() - 2 * MINUTE) },
    });
    // Jobs of conversations long gone, due now, queued first (the fetch takes the oldest first).
    const others = Array.from({ length: 300 }, () => ({
      data: { conversationId: crypto.randomUUID(), kind: "auto-close" },
    }));
    await t.app.deps.db.$transaction((tx) =>
      t.app.deps.jobs.enqueueEach(tx, CONVERSATION_TIMER_QUEUE, others)
    );
    await t.app.deps.db.$transaction((tx) => scheduleTimers(t.app.deps, tx, conversationId));
    // Waits for the close; the deadline only guards against a hang.
    await waitUntil(
      () => t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: conversationId } }),
      (c) => c.status === "CLOSED",
      120_000,
    );
  } finally {
    await t.close();
  }
});
