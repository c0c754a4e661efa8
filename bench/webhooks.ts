/**
 * Event webhook delivery benchmark, part of `deno task bench`; alone:
 * `deno run -A --unstable-no-legacy-abort bench/webhooks.ts`. On a throwaway PostgreSQL, against a
 * receiver process that answers 200 at once, and a baseline in the same run: pg-boss doing the same
 * number of no-op jobs with the same queue and worker settings, enqueued the same way (one
 * transaction per job). Three scenarios, baseline first each time:
 *   burst: N events published by 8 concurrent publishers while the workers run (3 rounds);
 *   drain: N events already queued, then the workers start (worker throughput alone);
 *   paced: 50 events/s for a while: time from commit to first attempt.
 * Writes bench/results/webhooks.md. Not part of the tests.
 */
import { ensureDatabase, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { Jobs } from "../src/jobs/boss.ts";

import { createAgent } from "../src/agents/mod.ts";
import { createWebhook } from "../src/webhooks/mod.ts";
import {
  startWebhookDeliveryWorker,
  webhookDeliveryQueue,
  webhookWorkOptions,
} from "../src/jobs/workers/webhook_delivery.ts";
import type { Db } from "../src/db/client.ts";
import { benchEnv, seedOwner } from "./_seed.ts";
import { startReceiver } from "./_receiver.ts";
import { cpuTimeMs } from "./_cpu.ts";
import {
  openStats,
  postgresCpuMs,
  printStatements,
  resetStatements,
  startStatsPostgres,
  statementsRun,
} from "./_pg_stats.ts";

const EVENTS = Number(Deno.env.get("BENCH_WEBHOOK_EVENTS") ?? 10_000);
const PACED_EVENTS = Number(Deno.env.get("BENCH_WEBHOOK_PACED") ?? 1_000);
const PACE_PER_S = 50;
const PUBLISHERS = 8;
const ROUNDS = Number(Deno.env.get("BENCH_WEBHOOK_ROUNDS") ?? 3);

interface Figures {
  n: number;
  /** Completed (first attempt started) per second over the whole scenario. */
  perSecond: number;
  p50: number;
  p95: number;
  p99: number;
  /** Publishes (commits) per second. */
  published: number;
  /** CPU ms per event of this process (publishers and workers), PostgreSQL and the receiver. */
  cpu: CpuTimes;
}

interface CpuTimes {
  app: number;
  pg: number;
  receiver: number;
}

/** The CPU ms used so far by this process, the cluster's processes and the receiver. */
type CpuSampler = () => CpuTimes;

function cpuPerEvent(from: CpuTimes, to: CpuTimes, n: number): CpuTimes {
  return {
    app: (to.app - from.app) / n,
    pg: (to.pg - from.pg) / n,
    receiver: (to.receiver - from.receiver) / n,
  };
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

function figures(
  commits: Map<string, number>,
  starts: Map<string, number>,
  t0: number,
  publishMs: number,
  cpu: CpuTimes,
): Figures {
  const lat: number[] = [];
  let last = t0;
  for (const [id, committed] of commits) {
    const started = starts.get(id);
    if (started === undefined) throw new Error(`no first attempt for ${id}`);
    lat.push(Math.max(0, started - committed));
    last = Math.max(last, started);
  }
  lat.sort((a, b) => a - b);
  return {
    n: lat.length,
    perSecond: lat.length / ((last - t0) / 1000),
    p50: pct(lat, 50),
    p95: pct(lat, 95),
    p99: pct(lat, 99),
    published: lat.length / (publishMs / 1000),
    cpu,
  };
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("bench: timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs `count` publishes, `concurrency` at a time, or paced at `perSecond` when given. */
async function drive(
  count: number,
  publishOne: (i: number) => Promise<void>,
  opts: { concurrency?: number; perSecond?: number },
) {
  if (opts.perSecond) {
    const t0 = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const due = t0 + (i * 1000) / opts.perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(publishOne(i));
    }
    await Promise.all(pending);
    return;
  }
  let next = 0;
  await Promise.all(Array.from({ length: opts.concurrency ?? 1 }, async () => {
    while (next < count) await publishOne(next++);
  }));
}

/** Commit-to-start of no-op jobs, same queue options and worker settings as the deliveries. */
async function baseline(
  url: string,
  db: Db,
  sampleCpu: CpuSampler,
  count: number,
  mode: "burst" | "drain" | "paced",
  round = 0,
): Promise<Figures> {
  const queue = `bench-noop-${mode}-${round}`;
  const jobs = new Jobs(url, silentLogger);
  await jobs.start([{ ...webhookDeliveryQueue, name: queue }]);
  const commits = new Map<string, number>();
  const starts = new Map<string, number>();
  const work = () =>
    jobs.work<{ i: string }>(queue, webhookWorkOptions, (batch) => {
      const now = Date.now();
      for (const job of batch) starts.set(job.data.i, now);
      return Promise.resolve();
    });
  const publishOne = async (i: number) => {
    await db.$transaction((tx) => jobs.send(tx, queue, [{ data: { i: String(i) } }]));
    commits.set(String(i), Date.now());
  };
  if (mode !== "drain") await work();
  await statementsFrom();
  const cpu0 = sampleCpu();
  const t0 = Date.now();
  await drive(count, publishOne, mode === "paced" ? { perSecond: PACE_PER_S } : { concurrency: PUBLISHERS });
  const t1 = Date.now();
  const cpu1 = sampleCpu();
  if (mode === "drain") await work();
  await until(() => starts.size >= count);
  await statementsUntil("baseline", mode, count);
  // Drain: the workers' share alone; otherwise everything from the first publish to the last start.
  const cpu = cpuPerEvent(mode === "drain" ? cpu1 : cpu0, sampleCpu(), count);
  await jobs.stop();
  const f = figures(commits, starts, mode === "drain" ? t1 : t0, t1 - t0, cpu);
  if (mode === "drain") f.p50 = f.p95 = f.p99 = NaN;
  return f;
}

async function deliveries(
  url: string,
  receiverUrl: string,
  sampleCpu: CpuSampler,
  count: number,
  mode: "burst" | "drain" | "paced",
  round = 0,
): Promise<Figures> {
  const app = await buildApp(
    loadConfig(benchEnv(url)),
    { bootstrap: false, logger: silentLogger, workers: false },
  );
  const deps = app.deps;
  const ctx = await seedOwner(deps, `bench-${mode}-${round}@example.test`);
  const workspaceId = ctx.actor.workspaceId;
  const agent = await createAgent(ctx, { name: `Agent ${mode}`, jobName: "Bench Co" });
  await createWebhook(ctx, agent.id, {
    event: "message.received",
    url: receiverUrl,
    method: "POST",
    headers: {},
  });

  const commits = new Map<string, number>();
  const publishOne = async (i: number) => {
    const id = await deps.db.$transaction((tx) =>
      deps.events.publish(tx, {
        type: "message.received",
        workspaceId,
        agentId: agent.id,
        data: { n: i },
      })
    );
    commits.set(id, Date.now());
  };
  const work = () => startWebhookDeliveryWorker(deps.jobs as Jobs, deps);
  if (mode !== "drain") await work();
  await statementsFrom();
  const cpu0 = sampleCpu();
  const t0 = Date.now();
  await drive(count, publishOne, mode === "paced" ? { perSecond: PACE_PER_S } : { concurrency: PUBLISHERS });
  const t1 = Date.now();
  const cpu1 = sampleCpu();
  if (mode === "drain") await work();
  const done = () =>
    deps.db.deliveryAttempt.count({ where: { number: 1, delivery: { webhook: { agentId: agent.id } } } });
  await until(async () => (await done()) >= count);
  await statementsUntil("webhooks", mode, count);
  // As the baseline's (the polls of the count above included, a few a second).
  const cpu = cpuPerEvent(mode === "drain" ? cpu1 : cpu0, sampleCpu(), count);
  const rows = await deps.db.deliveryAttempt.findMany({
    where: { number: 1, delivery: { webhook: { agentId: agent.id } } },
    select: { startedAt: true, httpStatus: true, delivery: { select: { eventId: true } } },
  });
  const failed = rows.filter((r) => r.httpStatus !== 200).length;
  if (failed) throw new Error(`${failed} deliveries failed`);
  const starts = new Map(rows.map((r) => [r.delivery.eventId, r.startedAt.getTime()]));
  await app.stop();
  const f = figures(commits, starts, mode === "drain" ? t1 : t0, t1 - t0, cpu);
  if (mode === "drain") f.p50 = f.p95 = f.p99 = NaN;
  return f;
}

/** BENCH_STATEMENTS=1: the statements PostgreSQL ran per event in each burst (pg_stat_statements). */
let statementStats: Awaited<ReturnType<typeof openStats>> | undefined;

async function statementsFrom(): Promise<void> {
  if (statementStats) await resetStatements(statementStats);
}

async function statementsUntil(side: string, mode: string, count: number): Promise<void> {
  if (!statementStats) return;
  console.error(`${side} ${mode}, statements per event:`);
  printStatements(await statementsRun(statementStats), count, "event");
}

const cpuTotal = (f: Figures) => f.cpu.app + f.cpu.pg + f.cpu.receiver;

const loadAverage = () =>
  Deno.readTextFile("/proc/loadavg").then((t) => t.split(" ").slice(0, 3).join(" ")).catch(() => "?");

/** Runs the three scenarios and writes bench/results/webhooks.md; returns the markdown. */
export async function runWebhooksBench(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-webhooks-" });
  await Deno.chmod(dir, 0o755);
  // BENCH_STATEMENTS=1 prints each burst's statements per event: with pg_stat_statements, whose
  // bookkeeping costs PostgreSQL CPU per statement (so not in the measured runs).
  const pg = Deno.env.get("BENCH_STATEMENTS")
    ? await startStatsPostgres(`${dir}/data`)
    : await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  const loadStart = await loadAverage();
  const receiver = await startReceiver();
  const sampleCpu: CpuSampler = () => ({
    app: cpuTimeMs(Deno.pid),
    pg: postgresCpuMs(`${dir}/data`),
    receiver: cpuTimeMs(receiver.child.pid),
  });
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const url = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(url);
    if (Deno.env.get("BENCH_STATEMENTS")) statementStats = await openStats(url);
    const seedDb = await buildApp(
      loadConfig(benchEnv(url)),
      { bootstrap: false, logger: silentLogger, workers: false },
    );
    const db = seedDb.deps.db;

    const results: Record<string, { base: Figures; hooks: Figures }> = {};
    const burstRatios: number[] = [];
    const log = (side: string, mode: string, f: Figures) =>
      console.error(
        `${side} ${mode}: ${f.perSecond.toFixed(0)}/s p50 ${f.p50} p95 ${f.p95} ms, published ${
          f.published.toFixed(0)
        }/s, CPU ms/event app ${f.cpu.app.toFixed(2)} pg ${f.cpu.pg.toFixed(2)} receiver ${
          f.cpu.receiver.toFixed(2)
        }`,
      );
    for (const [mode, n] of [["burst", EVENTS], ["drain", EVENTS], ["paced", PACED_EVENTS]] as const) {
      // The burst, whose ratio has a goal, runs ROUNDS times, alternating sides so that machine noise
      // hits both alike; the round with the median ratio is reported.
      const rounds: Array<{ base: Figures; hooks: Figures }> = [];
      for (let round = 0; round < (mode === "burst" ? ROUNDS : 1); round++) {
        const base = await baseline(url, db, sampleCpu, n, mode, round);
        log("baseline", mode, base);
        const hooks = await deliveries(url, `${receiver.base}/hook`, sampleCpu, n, mode, round);
        log("webhooks", mode, hooks);
        rounds.push({ base, hooks });
      }
      const ratio = (r: { base: Figures; hooks: Figures }) => r.hooks.perSecond / r.base.perSecond;
      results[mode] = [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor(rounds.length / 2)];
      if (mode === "burst") burstRatios.push(...rounds.map(ratio));
    }
    await seedDb.stop();
    await statementStats?.end();
    const loadEnd = await loadAverage();

    const ms = (v: number) => (Number.isNaN(v) ? "-" : `${v}`);
    const row = (label: string, f: Figures) =>
      `| ${label} | ${f.n} | ${f.published.toFixed(0)} | ${f.perSecond.toFixed(0)} | ${ms(f.p50)} | ${
        ms(f.p95)
      } | ${ms(f.p99)} | ${f.cpu.app.toFixed(2)} | ${f.cpu.pg.toFixed(2)} | ${f.cpu.receiver.toFixed(2)} |`;
    const { burst, drain, paced } = results;
    const burstRatio = {
      rounds: burstRatios.map((r) => r.toFixed(2)).join(", "),
      median: `${(burst.hooks.perSecond / burst.base.perSecond).toFixed(2)}x`,
    };
    const md = `# Event webhook delivery

Measured ${
      new Date().toISOString()
    } by \`deno task bench\` (bench/webhooks.ts) on ${navigator.hardwareConcurrency} cores,
Deno ${Deno.version.deno}, one process for publishers and workers (pg-boss ${"12.35.0"}, ${webhookWorkOptions.localConcurrency}
workers x batch ${webhookWorkOptions.batchSize}, LISTEN/NOTIFY), PostgreSQL 18 (embedded) on the same machine, and
a receiver process answering 200 at once. Latency: commit of the publishing transaction to the start
of the first attempt (for the baseline: to the no-op handler being called). Baseline: pg-boss no-op
jobs with the same queue and worker settings, each enqueued in its own transaction. CPU: user and
system time per event of the bench's process (publishers and workers), of PostgreSQL's processes and
of the receiver, from the first publish to the last first attempt (drain: once the workers start).
Load average: ${loadStart} at the start, ${loadEnd} at the end.

| scenario | events | published/s | first attempts/s | p50 ms | p95 ms | p99 ms | CPU ms/event: app | PostgreSQL | receiver |
|---|---|---|---|---|---|---|---|---|---|
${row(`burst, baseline (no-op jobs, ${PUBLISHERS} publishers)`, burst.base)}
${row(`burst, webhooks (${PUBLISHERS} publishers)`, burst.hooks)}
${row("drain of a queued backlog, baseline", drain.base)}
${row("drain of a queued backlog, webhooks", drain.hooks)}
${row(`paced ${PACE_PER_S}/s, baseline`, paced.base)}
${row(`paced ${PACE_PER_S}/s, webhooks`, paced.hooks)}

| ratio / goal | value | goal |
|---|---|---|
| webhooks / baseline throughput, burst (8 concurrent publishers), median of ${burstRatio.rounds} | ${burstRatio.median} | >= 0.8x |
| baseline / webhooks CPU per event (all three processes), burst, that round | ${
      (cpuTotal(burst.base) / cpuTotal(burst.hooks)).toFixed(2)
    }x | - |
| webhooks / baseline throughput, drain (workers alone) | ${
      (drain.hooks.perSecond / drain.base.perSecond).toFixed(2)
    }x | - |
| p95 event to first attempt at ${PACE_PER_S} events/s | ${paced.hooks.p95} ms | < 50 ms |

What limits it: everything shares the machine's cores (publishers, workers, PostgreSQL and, for
the webhooks, the receiver), and the burst keeps them busy: the workers keep up (see p50), so each
side's rate is the cores' share it gets over its CPU per event, and the throughput ratio follows the
CPU ratio when the neighbours are quiet (it moves with their load otherwise). Publishing an event is
one statement, as a bare enqueue is; it writes two rows (the event, and its delivery claimed by the
publishing process) with their indexes and foreign-key checks, where the enqueue writes one. The
publishing process makes the first attempts itself, one batch at a time, without a job (beyond 64
held, they are jobs for the workers): an HTTP exchange and its signature, and its share of one load
and one record statement per batch (the attempt's row and the delivery's update), where a no-op job
has its share of a fetch and a completion. Draining a backlog (published with no worker running:
jobs), a no-op job costs two statements per batch (fetch, complete).
`;
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile("bench/results/webhooks.md", md);
    console.log(md);
    return md;
  } finally {
    receiver.child.kill("SIGTERM");
    await receiver.child.status;
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await runWebhooksBench();
