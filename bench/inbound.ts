/**
 * The inbound → reply benchmark, part of `deno task bench`; alone:
 * `deno task bench inbound`. One server process (as `deno task start` runs it, workers on) with the
 * grouping windows at BENCH_WINDOW_MS (1 ms: their shortest), the model stand-in (OpenAI-compatible,
 * answers at once) and the WhatsApp Graph stand-in served by this process on 127.0.0.1, and signed
 * Meta-shaped text messages posted open-loop (on schedule, as Meta sends them) from a separate
 * process, each from a NEW sender, so each message is a new conversation and one reply.
 *
 * Per message: the inbound 200's latency (client side), and the platform's own time = Graph call
 * received − 200 received − the window − the model's time (as the model stand-in saw it). Rounds
 * alternate the inbound posts at 50/s with the same posts at 50/s to a bare Deno HTTP handler
 * (bench/_bare_server.ts) as the baseline of the inbound 200, since the machine is shared and
 * noisy; then a ramp of higher rates shows the conversations/s the platform sustains (replies per
 * second while the posts arrive at that rate). Also SQL statements per conversation
 * (pg_stat_statements: noise-free) and CPU ms per conversation of the server and of PostgreSQL.
 * BENCH_SPLIT=1: one process serves HTTP only and another runs the workers. BENCH_SAMPLES=<prefix>
 * writes each message's arrival and platform time per run, BENCH_PG_LOG=<file> PostgreSQL's log
 * (checkpoints, autovacuum), to tell where a tail comes from. Writes
 * bench/results/inbound.md (BENCH_SPLIT=1: inbound-split.md). Not part of the tests.
 */
import { ensureDatabase, freePort } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { cpuTimeMs } from "./_cpu.ts";
import { replyBenchEnv, seedWhatsAppChannel } from "./_seed.ts";
import type pg_ from "pg";
import { denoScript, spawnReady } from "./_spawn.ts";
import { type LoadOut, postOpenLoop } from "./_poster.ts";
import { ReplyStandins } from "./_reply_standins.ts";
import {
  type Hop,
  hopTimings,
  openStats,
  postgresCpuMs,
  printStatements,
  resetStatements,
  startStatsPostgres,
  statementCount,
  statementsRun,
} from "./_pg_stats.ts";
import { median, pct } from "./_percentiles.ts";
import { collectGarbage } from "./_gc.ts";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
const DURATION_MS = Number(Deno.env.get("BENCH_DURATION_MS") ?? 5000);
const RATE = Number(Deno.env.get("BENCH_RATE") ?? 50);
const RAMP = (Deno.env.get("BENCH_RAMP") ?? "100,150,200").split(",").filter(Boolean).map(Number);
const WINDOW_MS = Number(Deno.env.get("BENCH_WINDOW_MS") ?? 1);
const SPLIT = Deno.env.get("BENCH_SPLIT") === "1";
/** A message whose reply has not reached the Graph stand-in this long after its post is counted lost. */
const DRAIN_TIMEOUT_MS = 30_000;
const RESULTS = Deno.env.get("BENCH_SPLIT") === "1"
  ? "bench/results/inbound-split.md"
  : "bench/results/inbound.md";
const APP_SECRET = "bench-app-secret";
const PHONE_NUMBER_ID = "106540352242922";

/** The model and Graph stand-ins, and what they saw per message token. */
const standins = new ReplyStandins();

/** The jobs of one conversation, in order: store the post, reply, send. */
const HOP_QUEUES = ["whatsapp-inbound", "conversation-reply", "message-send"];

interface Run {
  rate: number;
  posts: number;
  inboundP50: number;
  inboundP99: number;
  /** Messages whose reply never reached the Graph stand-in. */
  lost: number;
  platformP50: number;
  platformP99: number;
  platformMax: number;
  /** Replies per second from the first post to the last reply. */
  conversationsPerSecond: number;
  /** SQL statements PostgreSQL ran per conversation (pg_stat_statements, BEGIN/COMMIT included). */
  statements: number;
  /** Per queue of the pipeline: wait for a worker and run, p50 / p99 ms (database clock). */
  hops: Record<string, Hop>;
  serverCpuMs: number;
  postgresCpuMs: number;
}

/** Starts a bench script and waits for its "ready" line (returned with the process). */
const startScript = (script: string, env: Record<string, string>) => spawnReady(...denoScript(script), env);

/** BENCH_PG_LOG=<file>: PostgreSQL's log (checkpoints, autovacuum) goes there, to explain stalls. */
const pgLogTo = Deno.env.get("BENCH_PG_LOG");

export async function runInboundBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-" });
  await Deno.chmod(dir, 0o755);
  const dataDir = `${dir}/data`;
  const pg = await startStatsPostgres(dataDir, pgLogTo);
  const children: Deno.ChildProcess[] = [];
  let statsClient: pg_.Client | undefined;
  const model = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, standins.model);
  const graph = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, standins.graphSend);
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const databaseUrl = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    const stats = await openStats(databaseUrl);
    statsClient = stats;
    const env = replyBenchEnv(databaseUrl, {
      windowMs: WINDOW_MS,
      modelUrl: `http://127.0.0.1:${model.addr.port}/v1`,
      graphUrl: `http://127.0.0.1:${graph.addr.port}/v21.0`,
    });

    const channel = {
      id: await seedWhatsAppChannel(env, {
        email: "bench@example.test",
        phoneNumberId: PHONE_NUMBER_ID,
        appSecret: APP_SECRET,
      }),
    };

    const port = freePort();
    const profile = Deno.env.get("BENCH_CPU_PROFILE");
    const { child: server } = await startScript("bench/serve_app.ts", {
      ...env,
      PORT: String(port),
      ...(profile ? { BENCH_CPU_PROFILE: profile } : {}),
      // BENCH_SPLIT=1: this process only serves HTTP; a second one runs the workers.
      ...(SPLIT ? { BENCH_WORKERS: "0" } : {}),
    });
    children.push(server);
    const servers = [server];
    if (SPLIT) {
      const { child } = await startScript("bench/serve_app.ts", { ...env, PORT: String(freePort()) });
      children.push(child);
      servers.push(child);
    }
    const serverCpuMs = () => servers.reduce((ms, s) => ms + cpuTimeMs(s.pid), 0);
    const bare = await startScript("bench/_bare_server.ts", {});
    children.push(bare.child);
    const barePort = Number(bare.line.match(/ready (\d+)/)![1]);
    const inboundUrl = `http://127.0.0.1:${port}/webhooks/whatsapp/${channel.id}`;

    const post = (url: string, rate: number, run: string, inbound: boolean): Promise<LoadOut> =>
      postOpenLoop({
        url,
        rate,
        durationMs: DURATION_MS,
        run,
        ...(inbound ? { inbound: { appSecret: APP_SECRET, phoneNumberId: PHONE_NUMBER_ID } } : {}),
      });

    const inboundRun = async (rate: number, run: string): Promise<Run> => {
      if (pgLogTo) console.error(`${new Date().toISOString()} start ${run}`);
      collectGarbage();
      const since = await resetStatements(stats);
      const cpu0 = { server: serverCpuMs(), pg: postgresCpuMs(dataDir) };
      const r = await post(inboundUrl, rate, run, true);
      const tokens = Object.keys(r.accepted);
      await standins.waitForGraph(tokens, DRAIN_TIMEOUT_MS);
      const cpu1 = { server: serverCpuMs(), pg: postgresCpuMs(dataDir) };
      const top = await statementsRun(stats);
      const statements = statementCount(top) / tokens.length;
      // Where the time goes, by the database's clock: each hop's wait for a worker and its run.
      const hops = await hopTimings(stats, since, HOP_QUEUES);
      printStatements(top, tokens.length, "conv");
      const platform: number[] = [];
      // BENCH_SAMPLES=<prefix>: each message's [accepted ms since the run's first post, platform ms].
      const samples: Array<[number, number]> = [];
      let lastGraph = 0;
      for (const t of tokens) {
        const at = standins.graphSeen.get(t);
        if (at === undefined) continue;
        const m = standins.modelSeen.get(t);
        const modelMs = m ? m.out - m.in : 0;
        platform.push(at - r.accepted[t] - WINDOW_MS - modelMs);
        samples.push([r.accepted[t] - r.firstSentAt, at - r.accepted[t] - WINDOW_MS - modelMs]);
        lastGraph = Math.max(lastGraph, at);
      }
      const samplesTo = Deno.env.get("BENCH_SAMPLES");
      if (samplesTo) await Deno.writeTextFile(`${samplesTo}.${run}.json`, JSON.stringify(samples));
      return {
        rate,
        posts: tokens.length,
        inboundP50: r.p50,
        inboundP99: r.p99,
        lost: tokens.length - platform.length,
        platformP50: pct(platform, 0.5),
        platformP99: pct(platform, 0.99),
        platformMax: pct(platform, 1),
        conversationsPerSecond: platform.length / ((lastGraph - r.firstSentAt) / 1000),
        statements,
        hops,
        serverCpuMs: (cpu1.server - cpu0.server) / tokens.length,
        postgresCpuMs: (cpu1.pg - cpu0.pg) / tokens.length,
      };
    };

    // Warm-up (JIT, prepared statements, pools): not counted.
    await inboundRun(RATE, "warm");

    const bareRuns: LoadOut[] = [];
    const runs: Run[] = [];
    const log = (label: string, r: Run) =>
      console.error(
        `${new Date().toISOString()} ${label} @${r.rate}/s: inbound p50 ${r.inboundP50.toFixed(1)} p99 ${
          r.inboundP99.toFixed(1)
        } ms; ` +
          `platform p50 ${r.platformP50.toFixed(1)} p99 ${r.platformP99.toFixed(1)} ms; ` +
          `${r.conversationsPerSecond.toFixed(1)} conv/s; lost ${r.lost}; ${
            r.statements.toFixed(1)
          } statements/conv; ` +
          `cpu/conv server ${r.serverCpuMs.toFixed(1)} ms, pg ${r.postgresCpuMs.toFixed(1)} ms; ` +
          HOP_QUEUES.map((q) => {
            const h = r.hops[q];
            const ms = (x: number | null) => x === null ? "-" : x.toFixed(0);
            return h
              ? `${q} here ${(h.here * 100).toFixed(0)}% wait ${ms(h.waitP50)}/${ms(h.waitP99)} run ${
                ms(h.runP50)
              }/${ms(h.runP99)}`
              : `${q} -`;
          }).join(", "),
      );
    for (let round = 0; round < ROUNDS; round++) {
      const b = await post(`http://127.0.0.1:${barePort}/`, RATE, `bare${round}`, false);
      bareRuns.push(b);
      console.error(`round ${round + 1} bare @${RATE}/s: p50 ${b.p50.toFixed(2)} p99 ${b.p99.toFixed(2)} ms`);
      const r = await inboundRun(RATE, `r${round}`);
      runs.push(r);
      log(`round ${round + 1}`, r);
    }
    const ramp: Run[] = [];
    for (const rate of RAMP) {
      const r = await inboundRun(rate, `ramp${rate}`);
      ramp.push(r);
      log("ramp", r);
    }

    const f = (x: number, d = 1) => Number.isFinite(x) ? x.toFixed(d) : "n/a";
    const med = (k: keyof Run) => median(runs.map((r) => r[k] as number));
    const roundRows = runs.map((r, i) =>
      `| ${i + 1} | ${f(bareRuns[i].p50, 2)} / ${f(bareRuns[i].p99, 2)} | ${f(r.inboundP50, 2)} / ${
        f(r.inboundP99, 2)
      } | ${f(r.platformP50)} / ${f(r.platformP99)} / ${f(r.platformMax)} | ${
        f(r.conversationsPerSecond)
      } | ${r.lost} | ${f(r.statements)} | ${f(r.serverCpuMs)} / ${f(r.postgresCpuMs)} |`
    ).join("\n");
    const rampRows = ramp.map((r) =>
      `| ${r.rate}/s | ${f(r.conversationsPerSecond)} | ${f(r.inboundP50, 2)} / ${f(r.inboundP99, 2)} | ${
        f(r.platformP50)
      } / ${f(r.platformP99)} / ${f(r.platformMax)} | ${r.lost} | ${f(r.statements)} | ${
        f(r.serverCpuMs)
      } / ${f(r.postgresCpuMs)} |`
    ).join("\n");
    const load = await Deno.readTextFile("/proc/loadavg").catch(() => "?");
    const md = `# Inbound → reply: signed WhatsApp posts to the Graph call

Measured ${new Date().toISOString()} by \`deno task bench inbound\` on ${navigator.hardwareConcurrency} cores
(load average at the end: ${load.split(" ").slice(0, 3).join(" ")}), Deno ${Deno.version.deno}. ${
      SPLIT
        ? "Two server processes (BENCH_SPLIT=1): one serves HTTP only, the other runs the workers"
        : "One server process (bench/serve_app.ts, workers on)"
    }, grouping windows ${WINDOW_MS} ms, the model stand-in answering at
once and the Graph stand-in in the bench process, posts open-loop from a separate process, each message
from a new sender (a new conversation, one reply). ${ROUNDS} rounds of ${DURATION_MS / 1000} s at ${RATE}/s,
each beside the same posts at ${RATE}/s to a bare Deno HTTP handler (the baseline of the 200).
Platform time = Graph call received − inbound 200 received − window − the model's time.

| round | bare 200 p50 / p99 ms | inbound 200 p50 / p99 ms | platform p50 / p99 / max ms | conv/s | lost | SQL statements / conv | CPU ms per conversation: server / PostgreSQL |
|---|---|---|---|---|---|---|---|
${roundRows}

Where the time goes (database clock; median over the rounds of each round's p50 / p99, ms): the share of each
job run by the process that enqueued it (never fetched), the fetched ones' wait for a worker (due → fetched), and
the run (fetched → completed, or for a job run where it was enqueued: enqueued → completed, which for the reply
includes the window and the rest of the storing transaction):

| job | run where enqueued | wait p50 / p99 | run p50 / p99 |
|---|---|---|---|
${
      HOP_QUEUES.map((q) => {
        const m = (k: keyof Hop) => median(runs.map((r) => r.hops[q]?.[k] ?? NaN));
        return `| ${q} | ${f(m("here") * 100, 0)} % | ${f(m("waitP50"))} / ${f(m("waitP99"))} | ${
          f(m("runP50"))
        } / ${f(m("runP99"))} |`;
      }).join("\n")
    }

Ramp (the posts at higher rates; conv/s = replies per second from the first post to the last reply):

| rate | conv/s | inbound 200 p50 / p99 ms | platform p50 / p99 / max ms | lost | SQL statements / conv | CPU ms/conv server / PostgreSQL |
|---|---|---|---|---|---|---|
${rampRows}

| figure (median of the rounds) | value | goal |
|---|---|---|
| inbound 200 p99 at ${RATE}/s | ${f(med("inboundP99"), 2)} ms (bare handler ${
      f(median(bareRuns.map((b) => b.p99)), 2)
    } ms) | < 20 ms |
| platform p50 / p99 at ${RATE}/s | ${f(med("platformP50"))} / ${f(med("platformP99"))} ms | p99 < 50 ms |
| sustained conversations/s: the highest rate kept up with (all replied, at ≥ 90 % of the rate) | ${
      f(
        Math.max(
          0,
          ...[...runs, ...ramp].filter((r) => !r.lost && r.conversationsPerSecond >= r.rate * 0.9).map((r) =>
            r.rate
          ),
        ),
        0,
      )
    }/s | ${RATE}/s |
| most conversations/s measured (replies per second while posts came faster) | ${
      f(Math.max(...[...runs, ...ramp].map((r) => r.conversationsPerSecond)))
    } | |
| SQL statements per conversation (median of the rounds) | ${f(med("statements"))} | |
`;
    await Deno.writeTextFile(RESULTS, md);
    console.log(md);
  } finally {
    const profile = Deno.env.get("BENCH_CPU_PROFILE");
    if (profile && children.length) {
      // serve_app.ts writes its CPU profile on SIGUSR2.
      await Deno.remove(profile).catch(() => {});
      children[0].kill("SIGUSR2");
      for (let i = 0; i < 100 && !(await Deno.stat(profile).catch(() => null)); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    for (const child of children) {
      child.kill("SIGTERM");
      await child.status;
    }
    await statsClient?.end().catch(() => {});
    await model.shutdown();
    await graph.shutdown();
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
