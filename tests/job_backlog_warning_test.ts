/**
 * pg-boss' backlog warning (src/jobs/boss.ts): deferred jobs (a conversation timer per open
 * conversation, due in an hour) are not a backlog and log no warning; jobs due now and not taken
 * still do.
 */
import assert from "node:assert/strict";
import { Jobs } from "../src/jobs/boss.ts";
import { createPrisma } from "../src/db/client.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { logSink } from "./_helpers/logs.ts";
import { eventually } from "./_helpers/receiver.ts";

const QUEUE = "backlog-warning-test";
/** The queue's own threshold, small so a few jobs make a backlog. */
const THRESHOLD = 5;

Deno.test("backlog warning: 20 deferred jobs log none (debug), 20 jobs due and not taken warn", async () => {
  const db = await createTestDatabase();
  const logs = logSink();
  // Supervision (and so the monitor that counts the queues) every second.
  const jobs = new Jobs(db.url, logs.logger, { superviseIntervalSeconds: 1 });
  const client = createPrisma(db.url, { max: 1 });
  const backlog = (level: string) =>
    logs.lines.filter((l) => l.level === level && (l.queue === QUEUE || l.warning?.data?.name === QUEUE));
  try {
    await jobs.start([{ name: QUEUE, retryLimit: 0, warningQueueSize: THRESHOLD }]);
    // Twenty jobs due in an hour, no worker: pg-boss counts them as queued.
    await jobs.send(
      client,
      QUEUE,
      Array.from({ length: 20 }, (_, n) => ({ data: { n }, startAfterMs: 3_600_000 })),
    );
    await logs.waitFor((l) => l.msg === "pg-boss backlog of deferred jobs" && l.queue === QUEUE);
    const deferred = backlog("debug")[0];
    assert.equal(deferred.due, 0);
    assert.equal(deferred.deferred, 20);
    assert.equal(deferred.threshold, THRESHOLD);
    assert.deepEqual(backlog("warn"), [], "no warning for deferred jobs");

    // Twenty jobs due now that no worker takes: a backlog, warned as before.
    await jobs.send(client, QUEUE, Array.from({ length: 20 }, (_, n) => ({ data: { n } })));
    const warned = await eventually(() => Promise.resolve(backlog("warn")[0]));
    assert.equal(warned.msg, "pg-boss warning");
    assert.match(
      warned.warning.message,
      /^Warning: large queue backlog: queue "backlog-warning-test" has 40 jobs/,
    );
    assert.equal(warned.due, 20);
    assert.equal(warned.deferred, 20);
  } finally {
    await jobs.stop();
    await client.$disconnect();
    await db.drop();
  }
});
