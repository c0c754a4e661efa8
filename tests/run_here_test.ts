/**
 * An accepted inbound post is stored by the process that accepted it, without a worker fetching
 * its job (src/jobs/boss.ts `send` on a queue whose worker runs here): the job is inserted due 30 s later as the backstop
 * and completed by the run. A failed run is a failed attempt of the job, retried by a worker; a run that has not ended
 * leaves the job waiting for its backstop time, untaken. A job sent in a transaction (the reply
 * window) runs here once that committed and the job is due; a queue without the rule goes to the workers.
 * The jobs of a run without a row (runAfterCommit: the caller's own rows claim the work) run after
 * the commit and leave no row, unless the run fails: then they are inserted with their ids, for a
 * worker to retry; with `runHereBatches`, the jobs waiting for the runs count in the limit.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import { createWhatsAppChannel, postSigned, textMessage } from "./_helpers/whatsapp.ts";
import { WHATSAPP_INBOUND_QUEUE } from "../src/channels/whatsapp/process.ts";
import type { Jobs } from "../src/jobs/boss.ts";
import { sqlTransaction } from "../src/db/transaction.ts";

interface JobRow {
  id: string;
  state: string;
  fetched: boolean;
  backstopMs: number;
  data: Record<string, unknown>;
}

Deno.test("jobs run where they were accepted", async (t) => {
  const ta = await startTestApp();
  const jobsOf = (queue: string) =>
    ta.app.deps.db.$queryRawUnsafe<JobRow[]>(
      `SELECT id::text, state::text, started_on IS NOT NULL AS fetched,
              (extract(epoch FROM start_after - created_on) * 1000)::int AS "backstopMs", data
         FROM pgboss.job WHERE name = $1 ORDER BY created_on, id`,
      queue,
    );
  const jobsWithRetries = (queue: string) =>
    ta.app.deps.db.$queryRawUnsafe<Array<JobRow & { retryCount: number }>>(
      `SELECT id::text, started_on IS NOT NULL AS fetched, retry_count AS "retryCount", data
         FROM pgboss.job WHERE name = $1`,
      queue,
    );
  const clear = (queue: string) =>
    ta.app.deps.db.$executeRawUnsafe(`DELETE FROM pgboss.job WHERE name = $1`, queue);
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);

    await t.step("a post is stored by the accepting process: its job completed, never fetched", async () => {
      const res = await postSigned(
        ta.anon,
        channel.id,
        textMessage(channel.phoneNumberId, "wamid.here-1", "hi"),
      );
      assert.equal(res.status, 200);
      await eventually(async () =>
        (await jobsOf(WHATSAPP_INBOUND_QUEUE))[0]?.state === "completed" || undefined
      );
      const [job] = await jobsOf(WHATSAPP_INBOUND_QUEUE);
      assert.equal(job.fetched, false);
      assert.ok(job.backstopMs >= 29_900 && job.backstopMs <= 30_100, `backstop ${job.backstopMs} ms`);
      assert.equal(await ta.app.deps.db.message.count({ where: { externalId: "wamid.here-1" } }), 1);
      assert.equal((await jobsOf(WHATSAPP_INBOUND_QUEUE)).length, 1);
    });

    // A queue of the test's own, whose handler the steps script.
    const q = "test-run-here";
    const jobs = ta.app.deps.jobs as Jobs;
    await jobs.boss.createQueue(q, { retryLimit: 1, retryDelay: 1 });
    let behave: (data: object) => Promise<void> = () => Promise.resolve();
    const handled: object[] = [];
    const work = (queue: string, runHere: boolean) =>
      jobs.work<object>(queue, { runHere, localConcurrency: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
        handled.push(job.data);
        await behave(job.data);
      });
    await work(q, true);
    const rows = () => jobsOf(q);

    await t.step(
      "a failed run is a failed attempt of its job: retried by a worker after the queue's delay",
      async () => {
        // The run here fails; its retry, fetched by a worker, succeeds.
        let failures = 1;
        behave = () => failures-- > 0 ? Promise.reject(new Error("boom")) : Promise.resolve();
        await jobs.send(ta.app.deps.db, q, [{ data: { n: 1 } }]);
        await eventually(async () => (await rows())[0]?.state === "completed" || undefined);
        const [job] = await jobsWithRetries(q);
        assert.equal(job.retryCount, 1);
        // The retry went the usual way: fetched by a worker.
        assert.equal(job.fetched, true);
        assert.deepEqual(job.data, { n: 1 });
        assert.equal((await rows()).length, 1);
        assert.deepEqual(handled, [{ n: 1 }, { n: 1 }]);
        await clear(q);
        handled.length = 0;
      },
    );

    await t.step("a run under way: its job waits for the backstop time, untaken", async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => release = resolve);
      behave = () => held;
      await jobs.send(ta.app.deps.db, q, [{ data: { n: 2 } }]);
      // A worker woken meanwhile does not take it: it is not due.
      jobs.wake(q);
      await eventually(() => Promise.resolve(handled.length === 1 || undefined));
      const [waiting] = await rows();
      assert.equal(waiting.state, "created");
      assert.equal(waiting.fetched, false);
      release();
      await eventually(async () => (await rows())[0].state === "completed" || undefined);
      assert.equal((await rows()).length, 1);
      assert.deepEqual(handled, [{ n: 2 }]);
      await clear(q);
      handled.length = 0;
      behave = () => Promise.resolve();
    });

    await t.step(
      "sent in a transaction: runs here once committed and due, never if rolled back; a queue without the rule: a worker's",
      async () => {
        let ran!: () => void;
        const done = new Promise<void>((resolve) => ran = resolve);
        behave = () => Promise.resolve(ran());
        await ta.app.deps.db.$transaction(async (tx) => {
          await jobs.send(tx, q, [{ data: { n: 3 }, startAfterMs: 50 }]);
          assert.deepEqual(handled, [], "not before the commit");
        });
        await done;
        await eventually(async () => (await rows())[0]?.state === "completed" || undefined);
        const [job] = await rows();
        assert.equal(job.fetched, false);
        assert.ok(job.backstopMs >= 30_000 && job.backstopMs <= 30_150, `backstop ${job.backstopMs} ms`);
        assert.deepEqual(handled, [{ n: 3 }]);
        await clear(q);
        handled.length = 0;

        await assert.rejects(ta.app.deps.db.$transaction(async (tx) => {
          await jobs.send(tx, q, [{ data: { n: 4 }, startAfterMs: 1 }]);
          throw new Error("roll back");
        }));
        // A queue whose worker has no runHere rule: the job goes to the workers.
        const q2 = "test-run-here-not";
        await jobs.boss.createQueue(q2, { retryLimit: 0 });
        await work(q2, false);
        await ta.app.deps.db.$transaction((tx) => jobs.send(tx, q2, [{ data: { n: 5 }, startAfterMs: 1 }]));
        await eventually(async () => (await jobsOf(q2))[0]?.state === "completed" || undefined);
        const [plain] = await jobsOf(q2);
        assert.equal(plain.fetched, true);
        assert.deepEqual(plain.data, { n: 5 });
        assert.deepEqual(handled, [{ n: 5 }], "the rolled-back job never ran");
        assert.deepEqual(await rows(), []);
        await clear(q2);
        handled.length = 0;
      },
    );

    await t.step(
      "twenty deferred jobs due at once: at most sixteen run here together, the rest when they end",
      async () => {
        let release!: () => void;
        const held = new Promise<void>((resolve) => release = resolve);
        let running = 0;
        let most = 0;
        behave = async () => {
          most = Math.max(most, ++running);
          await held;
          running--;
        };
        await ta.app.deps.db.$transaction(
          (tx) => jobs.send(tx, q, Array.from({ length: 20 }, (_, n) => ({ data: { n }, startAfterMs: 1 }))),
        );
        await eventually(() => Promise.resolve(handled.length === 16 || undefined));
        release();
        await eventually(async () => {
          const r = await rows();
          return r.length === 20 && r.every((j) => j.state === "completed") || undefined;
        });
        assert.equal(most, 16);
        assert.equal(handled.length, 20);
        assert.equal(new Set(handled.map((d) => (d as { n: number }).n)).size, 20);
        assert.ok((await rows()).every((j) => !j.fetched), "all run here");
      },
    );
  } finally {
    await ta.close();
  }
});

Deno.test("jobs run here without a row: none left when the run succeeds, inserted with their ids when it fails", async () => {
  const ta = await startTestApp({}, { workers: false });
  try {
    const db = ta.app.deps.db;
    const jobs = ta.app.deps.jobs as Jobs;
    const q = "test-run-here-rowless";
    await jobs.boss.createQueue(q, { retryLimit: 1, retryDelay: 1 });
    const batches: number[][] = [];
    let behave: (ns: number[]) => Promise<void> = () => Promise.resolve();
    await jobs.work<{ n: number }>(
      q,
      { runHere: true, runHereLimit: 4, runHereBatches: 1, batchSize: 16, pollingIntervalSeconds: 1 },
      async (batch) => {
        const ns = batch.map((j) => j.data.n);
        batches.push(ns);
        await behave(ns);
      },
    );
    const rows = () =>
      db.$queryRawUnsafe<Array<{ id: string; state: string; fetched: boolean; data: object }>>(
        `SELECT id::text, state::text, started_on IS NOT NULL AS fetched, data FROM pgboss.job WHERE name = $1`,
        q,
      );
    /** Commits a transaction that runs `ns` here (one job each, with a fresh id); returns the ids. */
    const commit = (ns: number[]) =>
      sqlTransaction(db, (tx) => {
        const local = jobs.runAfterCommit(tx, q);
        if (!local) return Promise.resolve(null);
        const started = ns.map((n) => ({ id: crypto.randomUUID(), data: { n } }));
        local.start(started);
        return Promise.resolve(started.map((j) => j.id));
      });

    // Run after the commit; nothing inserted, nothing completed.
    await commit([1]);
    await eventually(() => Promise.resolve(batches.length === 1 || undefined));
    assert.deepEqual(batches, [[1]]);
    assert.deepEqual(await rows(), []);

    // Never when rolled back.
    await assert.rejects(sqlTransaction(db, (tx) => {
      jobs.runAfterCommit(tx, q)!.start([{ id: crypto.randomUUID(), data: { n: 99 } }]);
      return Promise.reject(new Error("roll back"));
    }));

    // A failed run: its job is inserted with its id, and a worker retries it after the queue's delay.
    let failures = 1;
    behave = () => failures-- > 0 ? Promise.reject(new Error("boom")) : Promise.resolve();
    const [failed] = (await commit([2]))!;
    await eventually(async () => (await rows())[0]?.state === "completed" || undefined);
    const [retried] = await rows();
    assert.equal(retried.id, failed);
    assert.equal(retried.fetched, true);
    assert.deepEqual(retried.data, { n: 2 });
    assert.deepEqual(batches.slice(1), [[2], [2]]);
    assert.equal((await rows()).length, 1);
    await db.$executeRawUnsafe(`DELETE FROM pgboss.job WHERE name = $1`, q);
    batches.length = 0;

    // One run at a time: jobs committed meanwhile wait and run as one batch; with the limit held
    // (the run's job and three waiting), the next transaction's jobs are not run here.
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    behave = (ns) => ns.includes(3) ? held : Promise.resolve();
    await commit([3]);
    await eventually(() => Promise.resolve(batches.length === 1 || undefined));
    await commit([4]);
    await commit([5, 6]);
    assert.equal(await commit([7]), null);
    release();
    await eventually(() => Promise.resolve(batches.length === 2 || undefined));
    assert.deepEqual(batches, [[3], [4, 5, 6]]);
    assert.deepEqual(await rows(), []);
  } finally {
    await ta.close();
  }
});
