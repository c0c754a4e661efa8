/**
 * A deferred job is due its delay after it was enqueued (src/jobs/boss.ts `enqueueEach`), not after
 * the start of the transaction that enqueued it: the conversation timers compute their delay from a
 * time read inside that transaction, and a timer job that comes due before its time does nothing.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";

Deno.test("enqueueEach: a job deferred by 2 s inside a transaction that began 1.5 s earlier is due 2 s after the enqueue", async () => {
  const t = await startTestApp({}, { workers: false });
  try {
    const { db, jobs } = t.app.deps;
    const queue = "conversation-timer";
    let enqueuedAt = 0;
    await db.$transaction(async (tx) => {
      // The transaction's now() stays at its start, 1.5 s before the enqueue.
      await tx.$executeRawUnsafe("SELECT pg_sleep(1.5)");
      enqueuedAt = Date.now();
      await jobs.send(tx, queue, [{
        data: { conversationId: "c1", kind: "auto-close" },
        startAfterMs: 2000,
      }]);
    }, { timeout: 10_000 });
    const [job] = await db.$queryRawUnsafe<Array<{ start_after: Date }>>(
      `SELECT start_after FROM pgboss.job WHERE name = $1`,
      queue,
    );
    const early = enqueuedAt + 2000 - job.start_after.getTime();
    // Due within a few ms of enqueue + 2 s (it was 1.5 s early when counted from the transaction's start).
    assert.ok(Math.abs(early) < 100, `due ${early} ms before its time`);
  } finally {
    await t.close();
  }
});
