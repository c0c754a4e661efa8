/**
 * `runBacked` (src/jobs/boss.ts): work that a durable job already stands behind runs through its
 * queue's handler here at once, with no job row of its own; a failed run is queued for a worker a
 * second later; a process without a worker of the queue enqueues it as a job.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { Jobs } from "../src/jobs/boss.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { eventually } from "./_helpers/receiver.ts";

const QUEUE = "run-backed-test";

Deno.test("runBacked: run here without a row; a failed run queued a second later; no worker: a job", async () => {
  const db = await createTestDatabase();
  const jobs = new Jobs(db.url, silentLogger);
  const side = new pg.Client({ connectionString: db.url });
  try {
    await jobs.start([{ name: QUEUE, retryLimit: 0 }]);
    await side.connect();
    const rows = async () =>
      (await side.query<{ data: { n: number }; after_ms: number }>(
        `SELECT data, extract(epoch FROM start_after - created_on) * 1000 AS after_ms
           FROM pgboss.job WHERE name = $1 ORDER BY created_on`,
        [QUEUE],
      )).rows;

    // No worker of the queue here yet: enqueued as a job, due at once.
    await jobs.runBacked(QUEUE, { n: 0 });
    const queued = await rows();
    assert.equal(queued.length, 1);
    assert.deepEqual(queued[0].data, { n: 0 });
    assert.ok(Math.abs(queued[0].after_ms) < 100, String(queued[0].after_ms));
    await side.query(`DELETE FROM pgboss.job WHERE name = $1`, [QUEUE]);

    // With a worker (polling far apart, so only runs here happen): run here, no row.
    const ran: number[] = [];
    await jobs.work<{ n: number }>(QUEUE, { pollingIntervalSeconds: 60 }, ([job]) => {
      ran.push(job.data.n);
      return job.data.n === 2 ? Promise.reject(new Error("fails once")) : Promise.resolve();
    });
    await jobs.runBacked(QUEUE, { n: 1 });
    await eventually(() => Promise.resolve(ran.length === 1 ? ran : undefined));
    assert.deepEqual(ran, [1]);
    assert.equal((await rows()).length, 0, "no job row for a run here");

    // A failed run: queued for a worker about a second later (the row follows the rejection).
    await jobs.runBacked(QUEUE, { n: 2 });
    const retry = await eventually(async () => {
      const found = await rows();
      return found.length ? found : undefined;
    });
    assert.equal(retry.length, 1);
    assert.deepEqual(retry[0].data, { n: 2 });
    assert.ok(Math.abs(retry[0].after_ms - 1000) < 100, String(retry[0].after_ms));
  } finally {
    await side.end().catch(() => {});
    await jobs.stop();
    await db.drop();
  }
});
