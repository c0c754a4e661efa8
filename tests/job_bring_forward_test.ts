/**
 * A keyed enqueue that meets a job already waiting under its key (the conversation timers: one
 * waiting job per conversation and kind) brings that job forward when the new due time is earlier
 * (in the insert's own statement), leaves it untouched when it is later, and finds it through the
 * index: the statement reads the waiting jobs of its keys, not every waiting job of the queue (one
 * per open conversation).
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { BRING_FORWARD_SQL } from "../src/jobs/boss.ts";

const QUEUE = "conversation-timer";
const WAITING = 2000;

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows": number;
  Plans?: PlanNode[];
}

/** Rows the scans of the job table returned, over the whole plan. */
function jobRowsRead(node: PlanNode): number {
  const own = node["Relation Name"]?.startsWith("job") && node["Node Type"].includes("Scan")
    ? node["Actual Rows"]
    : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + jobRowsRead(p), 0);
}

Deno.test("bringing a waiting keyed job forward: earlier moves it, later leaves it, and only its row is read", async () => {
  const t = await startTestApp({}, { workers: false });
  try {
    const { db, jobs } = t.app.deps;
    const hour = 3_600_000;
    await db.$transaction((tx) =>
      jobs.send(
        tx,
        QUEUE,
        Array.from({ length: WAITING }, (_, i) => ({
          data: { conversationId: `c${i}`, kind: "auto-close" },
          startAfterMs: hour,
          key: `auto-close:c${i}`,
        })),
      ), { timeout: 30_000 });
    const row = async (key: string) =>
      (await db.$queryRawUnsafe<Array<{ start_after: Date; xmin: string }>>(
        `SELECT start_after, xmin::text FROM pgboss.job WHERE name = $1 AND singleton_key = $2 AND state = 'created'`,
        QUEUE,
        key,
      ))[0];
    const before = await row("auto-close:c7");

    // Later: the waiting job keeps its time and is not rewritten.
    await db.$transaction((tx) =>
      jobs.send(tx, QUEUE, [{
        data: { conversationId: "c7", kind: "auto-close" },
        startAfterMs: 2 * hour,
        key: "auto-close:c7",
      }])
    );
    const later = await row("auto-close:c7");
    assert.equal(later.start_after.getTime(), before.start_after.getTime());
    assert.equal(later.xmin, before.xmin, "an unchanged job is not rewritten");

    // Earlier: brought forward, one job under the key.
    const enqueuedAt = Date.now();
    await db.$transaction((tx) =>
      jobs.send(tx, QUEUE, [{
        data: { conversationId: "c7", kind: "auto-close" },
        startAfterMs: 60_000,
        key: "auto-close:c7",
      }])
    );
    const earlier = await row("auto-close:c7");
    assert.ok(Math.abs(earlier.start_after.getTime() - (enqueuedAt + 60_000)) < 1000);
    const [{ n }] = await db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND singleton_key = 'auto-close:c7'`,
      QUEUE,
    );
    assert.equal(n, 1);

    // One call with a waiting key and a new one (one statement): the first brought forward, the
    // second inserted.
    const c8 = await row("auto-close:c8");
    await db.$transaction((tx) =>
      jobs.send(tx, QUEUE, [
        {
          data: { conversationId: "c8", kind: "auto-close" },
          startAfterMs: 60_000,
          key: "auto-close:c8",
        },
        {
          data: { conversationId: "n1", kind: "auto-close" },
          startAfterMs: 60_000,
          key: "auto-close:n1",
        },
      ])
    );
    assert.ok((await row("auto-close:c8")).start_after < c8.start_after, "brought forward");
    assert.ok(await row("auto-close:n1"), "inserted");

    // The statement's plan, run for real and rolled back: the job scans return the key's row alone.
    const plan = await db.$transaction(async (tx) => {
      const [{ "QUERY PLAN": json }] = await tx.$queryRawUnsafe<
        Array<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>
      >(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${BRING_FORWARD_SQL}`,
        QUEUE,
        ["auto-close:c9"],
        [new Date(Date.now() + 1000).toISOString()],
      );
      throw { rollback: json[0].Plan };
    }).catch((e) => {
      if (e?.rollback) return e.rollback as PlanNode;
      throw e;
    });
    assert.equal(jobRowsRead(plan), 1, `rows of the job table read (${WAITING} waiting)`);
  } finally {
    await t.close();
  }
});
