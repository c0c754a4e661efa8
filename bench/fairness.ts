/**
 * Delivery fairness benchmark (issue 7), part of `deno task bench`; alone: `deno task bench fairness`.
 * On a throwaway PostgreSQL, one app process with the real delivery workers and two workspaces: one
 * webhook's receiver hangs 5 s on every call (so every attempt runs into the 5 s timeout, and is
 * retried), the other's answers at once. Both get steady traffic for DURATION seconds. Reported: the
 * fast receiver's latency from commit of the publishing transaction to the start of the first
 * attempt, and how many calls the hanging one had in flight at most. Writes bench/results/fairness.md.
 */
import { ensureDatabase, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import type { Jobs } from "../src/jobs/boss.ts";
import { createAgent } from "../src/agents/mod.ts";
import { createWebhook } from "../src/webhooks/mod.ts";
import {
  startWebhookDeliveryWorker,
  WEBHOOK_CONCURRENCY,
  webhookWorkOptions,
} from "../src/jobs/workers/webhook_delivery.ts";
import { seedOwner } from "./_seed.ts";

const DURATION_S = Number(Deno.env.get("BENCH_FAIRNESS_SECONDS") ?? 30);
const FAST_PER_S = 20;
const SLOW_PER_S = 20;
const HANG_MS = 5000;

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/** A receiver process: `/fast` answers 200 at once, `/slow` after HANG_MS. */
async function startReceiver(): Promise<{ base: string; child: Deno.ChildProcess }> {
  const code =
    `Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log("ready " + port) },
    async (req) => {
      await req.arrayBuffer();
      if (new URL(req.url).pathname === "/slow") await new Promise((r) => setTimeout(r, ${HANG_MS}));
      return new Response("ok");
    });`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdout: "piped",
    stderr: "inherit",
  })
    .spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/ready (\d+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error("receiver exited");
    seen += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return { base: `http://127.0.0.1:${/ready (\d+)/.exec(seen)![1]}`, child };
}

/** Most intervals [start, start + duration) overlapping at one instant. */
function maxOverlap(intervals: Array<{ start: number; ms: number }>): number {
  const points = intervals.flatMap((i) => [[i.start, 1], [i.start + i.ms, -1]]);
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0, max = 0;
  for (const [, d] of points) max = Math.max(max, now += d);
  return max;
}

export async function runFairnessBench(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-fairness-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  const receiver = await startReceiver();
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const url = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(url);
    const app = await buildApp(
      loadConfig({
        DATABASE_URL: url,
        JWT_SECRET: "bench-secret-bench-secret-bench-secret-000",
        OUTBOUND_ALLOWLIST: "127.0.0.1/32",
        LOG_LEVEL: "error",
      }),
      { bootstrap: false, logger: silentLogger, workers: false },
    );
    const deps = app.deps;
    const setUp = async (name: string, path: string) => {
      const ctx = await seedOwner(deps, `bench-${name}@example.test`);
      const agent = await createAgent(ctx, { name, jobName: "Bench Co" });
      await createWebhook(ctx, agent.id, { event: "message.received", url: `${receiver.base}${path}` });
      return { workspaceId: ctx.actor.workspaceId, agentId: agent.id };
    };
    const fast = await setUp("fast", "/fast");
    const slow = await setUp("slow", "/slow");
    await startWebhookDeliveryWorker(deps.jobs as Jobs, deps);

    const commits = new Map<string, number>();
    const publish = async (to: { workspaceId: string; agentId: string }, n: number) => {
      const id = await deps.db.$transaction((tx) =>
        deps.events.publish(tx, { type: "message.received", ...to, data: { n } })
      );
      if (to === fast) commits.set(id, Date.now());
    };
    // Both streams paced on one timeline, interleaved.
    const ticks: Array<{ at: number; to: typeof fast }> = [];
    for (let i = 0; i < DURATION_S * FAST_PER_S; i++) ticks.push({ at: (i * 1000) / FAST_PER_S, to: fast });
    for (let i = 0; i < DURATION_S * SLOW_PER_S; i++) {
      ticks.push({ at: (i * 1000) / SLOW_PER_S + 500 / SLOW_PER_S, to: slow });
    }
    ticks.sort((a, b) => a.at - b.at);
    const t0 = performance.now();
    const pending: Promise<void>[] = [];
    for (const [n, tick] of ticks.entries()) {
      const wait = t0 + tick.at - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(publish(tick.to, n));
    }
    await Promise.all(pending);

    const firstAttempts = () =>
      deps.db.deliveryAttempt.findMany({
        where: { number: 1, delivery: { webhook: { agentId: fast.agentId } } },
        select: { startedAt: true, httpStatus: true, delivery: { select: { eventId: true } } },
      });
    const deadline = Date.now() + 60_000;
    let rows = await firstAttempts();
    while (rows.length < commits.size) {
      if (Date.now() > deadline) throw new Error(`bench: ${rows.length} of ${commits.size} fast deliveries`);
      await new Promise((r) => setTimeout(r, 100));
      rows = await firstAttempts();
    }
    const lat = rows.map((r) => Math.max(0, r.startedAt.getTime() - commits.get(r.delivery.eventId)!))
      .sort((a, b) => a - b);
    const failed = rows.filter((r) => r.httpStatus !== 200).length;
    const slowAttempts = await deps.db.deliveryAttempt.findMany({
      where: { delivery: { webhook: { agentId: slow.agentId } } },
      select: { startedAt: true, durationMs: true },
    });
    const slowInFlight = maxOverlap(
      slowAttempts.map((a) => ({ start: a.startedAt.getTime(), ms: a.durationMs })),
    );
    const slowPending = await deps.db.webhookDelivery.count({
      where: { status: "PENDING", webhook: { agentId: slow.agentId } },
    });
    await app.stop();

    const md = `# Delivery fairness

Measured ${
      new Date().toISOString()
    } by \`deno task bench fairness\` (bench/fairness.ts) on ${navigator.hardwareConcurrency} cores,
Deno ${Deno.version.deno}, one process for publishers and workers (${webhookWorkOptions.localConcurrency} workers x batch
${webhookWorkOptions.batchSize}, at most ${WEBHOOK_CONCURRENCY} attempts in flight per webhook), PostgreSQL 18 (embedded).
For ${DURATION_S} s, ${FAST_PER_S} events/s go to a workspace whose receiver answers at once and ${SLOW_PER_S} events/s
to another whose receiver hangs ${
      HANG_MS / 1000
    } s on every call (each attempt times out at 5 s and is retried: 3
attempts per event, far more than its cap lets through, so most of its jobs are deferred).
Latency: commit of the publishing transaction to the start of the fast receiver's first attempt.

| fast receiver | value | goal |
|---|---|---|
| events | ${lat.length} (${failed} failed) | - |
| p50 commit to first attempt | ${pct(lat, 50)} ms | - |
| p95 commit to first attempt | ${pct(lat, 95)} ms | < 50 ms |
| p99 / max | ${pct(lat, 99)} / ${lat[lat.length - 1]} ms | - |

| hanging receiver | value |
|---|---|
| attempts made in the run | ${slowAttempts.length} |
| most attempts in flight at once | ${slowInFlight} (cap ${WEBHOOK_CONCURRENCY}) |
| deliveries still PENDING at the end (backlog, deferred) | ${slowPending} |
`;
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile("bench/results/fairness.md", md);
    console.log(md);
    return md;
  } finally {
    receiver.child.kill("SIGTERM");
    await receiver.child.status;
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await runFairnessBench();
