/**
 * Delivery fairness benchmark, part of `deno task bench`; alone: `deno task bench fairness`.
 * On a throwaway PostgreSQL, one app process with the real delivery workers and two workspaces: one
 * webhook's receiver hangs 5 s on every call (so every attempt runs into the 5 s timeout, and is
 * retried), the other's answers at once. Both get steady traffic for DURATION seconds. Reported: the
 * fast receiver's latency from commit of the publishing transaction to the start of the first
 * attempt, and how many calls the hanging one had in flight at most; and, as the baseline measured in
 * the same run, the fast receiver's latency with the same traffic and no hanging receiver beside it.
 * Writes bench/results/fairness.md.
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
import { benchEnv, seedOwner } from "./_seed.ts";
import { startReceiver } from "./_receiver.ts";

const DURATION_S = Number(Deno.env.get("BENCH_FAIRNESS_SECONDS") ?? 30);
const FAST_PER_S = 20;
const SLOW_PER_S = 20;
const HANG_MS = 5000;

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/** Most intervals [start, start + duration) overlapping at one instant. */
function maxOverlap(intervals: Array<{ start: number; ms: number }>): number {
  const points = intervals.flatMap((i) => [[i.start, 1], [i.start + i.ms, -1]]);
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0, max = 0;
  for (const [, d] of points) max = Math.max(max, now += d);
  return max;
}

interface Figures {
  n: number;
  failed: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  slowAttempts: number;
  slowInFlight: number;
  slowPending: number;
}

async function scenario(url: string, withSlow: boolean): Promise<Figures> {
  const fastReceiver = await startReceiver(0);
  const slowReceiver = await startReceiver(HANG_MS);
  const app = await buildApp(
    loadConfig(benchEnv(url)),
    { bootstrap: false, logger: silentLogger, workers: false },
  );
  try {
    const deps = app.deps;
    const run = withSlow ? "beside" : "alone";
    const setUp = async (name: string, base: string) => {
      const ctx = await seedOwner(deps, `bench-${name}-${run}@example.test`);
      const agent = await createAgent(ctx, { name, jobName: "Bench Co" });
      await createWebhook(ctx, agent.id, {
        event: "message.received",
        url: `${base}/hook`,
        method: "POST",
        headers: {},
      });
      return { workspaceId: ctx.actor.workspaceId, agentId: agent.id };
    };
    const fast = await setUp("fast", fastReceiver.base);
    const slow = await setUp("slow", slowReceiver.base);
    await startWebhookDeliveryWorker(deps.jobs as Jobs, deps);

    // Warm-up (not measured): the first deliveries of a fresh process are slower (JIT, pools).
    for (let n = 0; n < 100; n++) {
      await deps.db.$transaction((tx) =>
        deps.events.publish(tx, { type: "message.received", ...fast, data: { n: -1 } })
      );
    }
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
    for (let i = 0; withSlow && i < DURATION_S * SLOW_PER_S; i++) {
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
        where: {
          number: 1,
          delivery: { webhook: { agentId: fast.agentId }, eventId: { in: [...commits.keys()] } },
        },
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
    const slowAttempts = await deps.db.deliveryAttempt.findMany({
      where: { delivery: { webhook: { agentId: slow.agentId } } },
      select: { startedAt: true, durationMs: true },
    });
    return {
      n: lat.length,
      failed: rows.filter((r) => r.httpStatus !== 200).length,
      p50: pct(lat, 50),
      p95: pct(lat, 95),
      p99: pct(lat, 99),
      max: lat[lat.length - 1],
      slowAttempts: slowAttempts.length,
      slowInFlight: maxOverlap(slowAttempts.map((a) => ({ start: a.startedAt.getTime(), ms: a.durationMs }))),
      slowPending: await deps.db.webhookDelivery.count({
        where: { status: "PENDING", webhook: { agentId: slow.agentId } },
      }),
    };
  } finally {
    await app.stop();
    for (const r of [fastReceiver, slowReceiver]) {
      r.child.kill("SIGTERM");
      await r.child.status;
    }
  }
}

export async function runFairnessBench(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-fairness-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const url = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(url);
    const load = () => Deno.readTextFile("/proc/loadavg").then((t) => t.split(" ")[0]).catch(() => "?");
    const loadBefore = await load();
    const alone = await scenario(url, false);
    console.error(`fast alone: p50 ${alone.p50} p95 ${alone.p95} ms`);
    const beside = await scenario(url, true);
    console.error(`fast beside a hanging receiver: p50 ${beside.p50} p95 ${beside.p95} ms`);
    const loadAfter = await load();
    const row = (label: string, f: Figures) =>
      `| ${label} | ${f.n} (${f.failed} failed) | ${f.p50} | ${f.p95} | ${f.p99} | ${f.max} |`;

    const md = `# Delivery fairness

Measured ${
      new Date().toISOString()
    } by \`deno task bench fairness\` (bench/fairness.ts) on ${navigator.hardwareConcurrency} cores,
Deno ${Deno.version.deno}, one process for publishers and workers (${webhookWorkOptions.localConcurrency} workers x batch
${webhookWorkOptions.batchSize}, at most ${WEBHOOK_CONCURRENCY} attempts in flight per webhook), PostgreSQL 18 (embedded),
receivers in processes of their own. For ${DURATION_S} s, ${FAST_PER_S} events/s go to a workspace whose receiver answers
at once and ${SLOW_PER_S} events/s to another whose receiver hangs ${
      HANG_MS / 1000
    } s on every call (each attempt runs into
the 5 s timeout and is retried: 3 attempts per event, far more than its cap lets through, so most of
its jobs are deferred). Baseline, in the same run: the same fast traffic with no hanging receiver.
Latency: commit of the publishing transaction to the start of the fast receiver's first attempt.
Machine load average (1 min) before / after the run: ${loadBefore} / ${loadAfter} (other work shares these
cores; compare the two rows, which ran back to back).

| fast receiver | events | p50 ms | p95 ms | p99 ms | max ms |
|---|---|---|---|---|---|
${row("alone (baseline)", alone)}
${row("beside the hanging receiver", beside)}

| goal | value |
|---|---|
| fast receiver's p95 beside the hanging one < 50 ms | ${beside.p95} ms (${
      beside.p95 < 50 ? "met" : "not met"
    }) |
| hanging receiver: attempts made / most in flight at once | ${beside.slowAttempts} / ${beside.slowInFlight} (cap ${WEBHOOK_CONCURRENCY}) |
| hanging receiver: deliveries still PENDING at the end (deferred backlog) | ${beside.slowPending} |
`;
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile("bench/results/fairness.md", md);
    console.log(md);
    return md;
  } finally {
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await runFairnessBench();
