/**
 * The replay benchmark, part of `deno task bench`; alone: `deno task bench replay`. One server
 * process (bench/serve_app.ts, workers on, REPLAY_CONCURRENCY 4), the model and Graph stand-ins in
 * this process. Agent B has 10 conversations with a model reply (written directly); its prompt change
 * is proposed once and its replay run again over REST (POST /api/approvals/{id}/replay) in each round.
 * The stand-in answers a replay's calls in BENCH_REPLAY_MODEL_MS (300 ms).
 *   alone:  the replay with nothing else to do, against the ideal: ceil(20 calls / 4) × 300 ms. The
 *           answers are the same text under both prompts (SAME without the judge: 20 calls); a second
 *           set of rounds answers differently under the proposed prompt, so each case is judged too
 *           (30 calls, ideal ceil(30 / 4) × 300 ms).
 *   live:   signed WhatsApp texts to agent A at 50/s (each a new conversation, the model answering
 *           at once, as bench/inbound.ts), in rounds alternating without and with replays running
 *           back to back (the order alternating too); the platform's p99 (Graph call − inbound 200 −
 *           window − model time) of each, and the median over the rounds of their ratio.
 * Writes bench/results/replay.md; its last line: `replay: <x.xx>x the ideal time, live p99 <y.yy>x
 * without a replay`. Not part of the tests.
 */
import { ensureDatabase, freePort } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createAgent } from "../src/agents/mod.ts";
import { createChannel } from "../src/channels/service.ts";
import { proposeChange } from "../src/approvals/propose.ts";
import { JUDGE_SYSTEM } from "../src/replay/verdict.ts";
import { replyBenchEnv, seedOwner } from "./_seed.ts";
import { denoScript, spawnReady } from "./_spawn.ts";
import { postOpenLoop } from "./_poster.ts";
import { ReplyStandins } from "./_reply_standins.ts";
import { median, pct } from "./_percentiles.ts";
import { collectGarbage } from "./_gc.ts";
import postgres from "pg";
import { cpuTimeMs } from "./_cpu.ts";
import {
  openStats,
  postgresCpuMs,
  printStatements,
  resetStatements,
  startStatsPostgres,
  statementCount,
  statementsRun,
} from "./_pg_stats.ts";

const CASES = 10;
const CONCURRENCY = 4;
const MODEL_MS = Number(Deno.env.get("BENCH_REPLAY_MODEL_MS") ?? 300);
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
/** Live rounds of each kind: the platform's p99 on a shared machine needs more of them. */
const LIVE_ROUNDS = Number(Deno.env.get("BENCH_LIVE_ROUNDS") ?? 7);
const RATE = Number(Deno.env.get("BENCH_RATE") ?? 50);
const DURATION_MS = Number(Deno.env.get("BENCH_DURATION_MS") ?? 5000);
const WINDOW_MS = 1;
const APP_SECRET = "bench-app-secret";
const PHONE_NUMBER_ID = "106540352242933";
const PROPOSED = "Seja formal com o cliente.";
const RESULTS = "bench/results/replay.md";

export async function runReplayBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-replay-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startStatsPostgres(`${dir}/data`);
  const standins = new ReplyStandins();
  /** The answers under the proposed prompt differ (each case is judged too). */
  let differ = false;
  /** Replay calls the stand-in answered, and the most it held at once. */
  const replayCalls = { count: 0, inFlight: 0, maxInFlight: 0 };
  const model = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const text = await req.text();
    const body = JSON.parse(text);
    const system = String(body.messages?.[0]?.content ?? "");
    const last = String(body.messages?.at(-1)?.content ?? "");
    // A live reply (its message carries a token): at once, as bench/inbound.ts.
    if (last.includes("tok:")) return standins.model(new Request(req.url, { method: "POST", body: text }));
    replayCalls.count++;
    replayCalls.maxInFlight = Math.max(replayCalls.maxInFlight, ++replayCalls.inFlight);
    await new Promise((r) => setTimeout(r, MODEL_MS));
    replayCalls.inFlight--;
    const content = system === JUDGE_SYSTEM
      ? '{"better": "same", "why": "Equivalent."}'
      : differ && system.includes(PROPOSED)
      ? `Prezado cliente: ${last}.`
      : `Certo: ${last}.`;
    return Response.json({
      id: "chatcmpl-bench",
      object: "chat.completion",
      created: 1,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    });
  });
  const graph = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, standins.graphSend);
  let server: Deno.ChildProcess | undefined;
  let db: postgres.Client | undefined;
  let statsClient: postgres.Client | undefined;
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const databaseUrl = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    const env = {
      ...replyBenchEnv(databaseUrl, {
        windowMs: WINDOW_MS,
        modelUrl: `http://127.0.0.1:${model.addr.port}/v1`,
        graphUrl: `http://127.0.0.1:${graph.addr.port}/v21.0`,
      }),
      REPLAY_CONVERSATIONS: String(CASES),
      REPLAY_CONCURRENCY: String(CONCURRENCY),
    };

    // Seeding, by an app that runs no workers: agent A answers the WhatsApp load, agent B has the
    // conversations to replay, and the approval of B's prompt change.
    const seeder = await buildApp(loadConfig(env), {
      bootstrap: false,
      logger: silentLogger,
      workers: false,
    });
    let approvalId: string;
    let workspaceId: string;
    let waChannelId: string;
    try {
      const ctx = await seedOwner(seeder.deps, "bench@example.test");
      workspaceId = ctx.actor.workspaceId;
      const a = await createAgent(ctx, { name: "Ana", jobName: "Bench Co", messageGroupingTime: "FAST" });
      waChannelId = (await createChannel(ctx, a.id, {
        type: "WHATSAPP",
        label: "Bench",
        config: { phoneNumberId: PHONE_NUMBER_ID, accessToken: "t", appSecret: APP_SECRET, verifyToken: "v" },
      })).id;
      const b = await createAgent(ctx, { name: "Bia", jobName: "Bench Co" });
      const channel = await createChannel(ctx, b.id, { type: "API", label: "App" });
      const db = seeder.deps.db;
      const start = Date.now() - 3600_000;
      for (let i = 0; i < CASES; i++) {
        const at = new Date(start + i * 60_000);
        const contact = await db.contact.create({
          data: { workspaceId, externalId: `c${i}`, name: `C${i}` },
        });
        const conv = await db.conversation.create({
          data: {
            workspaceId,
            agentId: b.id,
            channelId: channel.id,
            contactId: contact.id,
            lastMessageAt: at,
            createdAt: at,
          },
        });
        const base = { conversationId: conv.id, channelId: channel.id };
        await db.message.create({
          data: {
            ...base,
            direction: "INBOUND",
            senderKind: "CUSTOMER",
            content: `case ${i}`,
            answeredAt: at,
            createdAt: new Date(at.getTime() - 1000),
          },
        });
        await db.message.create({
          data: {
            ...base,
            direction: "OUTBOUND",
            senderKind: "AI",
            status: "SENT",
            content: `Certo: case ${i}.`,
            inputTokens: 100,
            outputTokens: 10,
            createdAt: at,
          },
        });
      }
      approvalId = (await proposeChange(ctx, {
        tool: "update_agent_prompt",
        target: { agentId: b.id },
        change: { systemPrompt: PROPOSED },
        rationale: "bench",
      }, { supervisorMessageId: null })).id;
    } finally {
      await seeder.stop();
    }

    const port = freePort();
    // BENCH_CPU_PROFILE=<file>: the server's CPU profile of the replays alone (bench/serve_app.ts).
    const profile = Deno.env.get("BENCH_CPU_PROFILE");
    ({ child: server } = await spawnReady(...denoScript("bench/serve_app.ts"), {
      ...env,
      PORT: String(port),
      ...(profile ? { BENCH_CPU_PROFILE: profile } : {}),
    }));
    const base = `http://127.0.0.1:${port}`;
    const login = await (await fetch(`${base}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bench@example.test", password: "bench-password" }),
    })).json();
    const headers = {
      authorization: `Bearer ${login.token}`,
      "x-workspace-id": workspaceId,
      "content-type": "application/json",
    };
    // The replay's state read from the database, not through the server: the bench's own polling
    // must not be load the server answers during the live rounds.
    db = new postgres.Client({ connectionString: databaseUrl });
    await db.connect();
    const replayOf = async () =>
      (await db!.query(
        `SELECT r.status::text AS status, r."finishedAt", r.done, r.same FROM "ApprovalReplay" r
           JOIN "PendingApproval" a ON a."replayId" = r.id WHERE a.id = $1`,
        [approvalId],
      )).rows[0] as { status: string; finishedAt: Date | null; done: number; same: number };
    const until = async (done: (r: { status: string }) => boolean) => {
      for (;;) {
        const r = await replayOf();
        if (done(r)) return r;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    // The first run (queued by the proposal) ends before the rounds.
    await until((r) => r.status === "DONE");

    /** One rerun: from the POST to the replay's own finishedAt (the server's clock, this machine's). */
    const replayOnce = async () => {
      const t0 = Date.now();
      const res = await fetch(`${base}/api/approvals/${approvalId}/replay`, { method: "POST", headers });
      if (res.status !== 202) throw new Error(`rerun: ${res.status} ${await res.text()}`);
      await res.body?.cancel();
      const r = await until((r) => r.status === "DONE" || r.status === "FAILED");
      if (r.status !== "DONE" || r.done !== CASES) throw new Error(`replay ended ${JSON.stringify(r)}`);
      return { ms: r.finishedAt!.getTime() - t0, same: r.same };
    };

    const alone: number[] = [];
    const judged: number[] = [];
    const ideal = (calls: number) => Math.ceil(calls / CONCURRENCY) * MODEL_MS;
    const stats = statsClient = await openStats(databaseUrl);
    let perReplay = { statements: 0, ms: 0 };
    // The server's and PostgreSQL's CPU while nothing happens for as long as a replay takes (pg-boss'
    // polling, timers), to tell the replay's own from it.
    const idle0 = { server: cpuTimeMs(server!.pid), pg: postgresCpuMs(`${dir}/data`) };
    await new Promise((r) => setTimeout(r, ROUNDS * ideal(20)));
    const idle = {
      server: (cpuTimeMs(server!.pid) - idle0.server) / ROUNDS,
      pg: (postgresCpuMs(`${dir}/data`) - idle0.pg) / ROUNDS,
    };
    const takeProfile = async () => {
      if (!profile) return;
      await Deno.remove(profile).catch(() => {});
      server!.kill("SIGUSR2");
      for (let i = 0; i < 100 && !(await Deno.stat(profile).catch(() => null)); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    // The profile from here on is the replays' alone (what came before is thrown away).
    await takeProfile();
    const aloneCpu0 = { server: cpuTimeMs(server!.pid), pg: postgresCpuMs(`${dir}/data`) };
    for (let i = 0; i < ROUNDS; i++) {
      collectGarbage();
      const calls = replayCalls.count;
      if (i === ROUNDS - 1) await resetStatements(stats);
      const r = await replayOnce();
      if (i === ROUNDS - 1) {
        // The SQL of one replay (pg_stat_statements: the server's, and this bench's polling left out).
        const rows = (await statementsRun(stats)).filter((row) => !row.query.includes('r."finishedAt"'));
        printStatements(rows, 1, "replay");
        perReplay = {
          statements: statementCount(rows),
          ms: rows.reduce((t, row) => t + row.ms + row.planMs, 0),
        };
      }
      if (replayCalls.count - calls !== 2 * CASES || r.same !== CASES) {
        throw new Error(`expected ${2 * CASES} calls, all SAME: ${replayCalls.count - calls}, ${r.same}`);
      }
      alone.push(r.ms);
      console.error(`alone ${i + 1}: ${r.ms} ms (${(r.ms / ideal(20)).toFixed(2)}x)`);
    }
    await takeProfile();
    // CPU of the replays alone, per replay (pg-boss' own polling of every queue included).
    const aloneCpu = {
      server: (cpuTimeMs(server!.pid) - aloneCpu0.server) / ROUNDS,
      pg: (postgresCpuMs(`${dir}/data`) - aloneCpu0.pg) / ROUNDS,
    };
    differ = true;
    for (let i = 0; i < Math.max(1, Math.ceil(ROUNDS / 2)); i++) {
      collectGarbage();
      const calls = replayCalls.count;
      const r = await replayOnce();
      if (replayCalls.count - calls !== 3 * CASES) {
        throw new Error(`judged: ${replayCalls.count - calls} calls`);
      }
      judged.push(r.ms);
      console.error(`judged ${i + 1}: ${r.ms} ms (${(r.ms / ideal(30)).toFixed(2)}x)`);
    }
    differ = false;

    const webhook = `${base}/webhooks/whatsapp/${waChannelId}`;

    /** One round of the live load; with `replaying`, replays run back to back until the posts end. */
    const liveRun = async (run: string, replaying: boolean) => {
      collectGarbage();
      const cpu0 = {
        server: cpuTimeMs(server!.pid),
        pg: postgresCpuMs(`${dir}/data`),
        bench: cpuTimeMs(Deno.pid),
      };
      let posting = true;
      let replays = 0;
      const loop = replaying
        ? (async () => {
          while (posting) {
            await replayOnce();
            replays++;
          }
        })()
        : Promise.resolve();
      const r = await postOpenLoop({
        url: webhook,
        rate: RATE,
        durationMs: DURATION_MS,
        run,
        inbound: { appSecret: APP_SECRET, phoneNumberId: PHONE_NUMBER_ID },
      });
      posting = false;
      const tokens = Object.keys(r.accepted);
      await standins.waitForGraph(tokens, 30_000);
      await loop;
      const platform: number[] = [];
      for (const t of tokens) {
        const at = standins.graphSeen.get(t);
        if (at === undefined) continue;
        const m = standins.modelSeen.get(t);
        platform.push(at - r.accepted[t] - WINDOW_MS - (m ? m.out - m.in : 0));
      }
      const cpu = {
        server: cpuTimeMs(server!.pid) - cpu0.server,
        pg: postgresCpuMs(`${dir}/data`) - cpu0.pg,
        bench: cpuTimeMs(Deno.pid) - cpu0.bench,
      };
      return {
        platform,
        p50: pct(platform, 0.5),
        p99: pct(platform, 0.99),
        lost: tokens.length - platform.length,
        replays,
        cpu,
      };
    };
    await liveRun("warm", false);
    const without: Array<Awaited<ReturnType<typeof liveRun>>> = [];
    const during: Array<Awaited<ReturnType<typeof liveRun>>> = [];
    for (let i = 0; i < LIVE_ROUNDS; i++) {
      // The order alternates too, so that a drift of the run (the tables grow) favours neither.
      let w, d;
      if (i % 2 === 0) {
        w = await liveRun(`w${i}`, false);
        d = await liveRun(`d${i}`, true);
      } else {
        d = await liveRun(`d${i}`, true);
        w = await liveRun(`w${i}`, false);
      }
      without.push(w);
      during.push(d);
      console.error(
        `round ${i + 1} @${RATE}/s: platform p99 ${w.p99.toFixed(1)} ms without, ${
          d.p99.toFixed(1)
        } ms during ${d.replays} replays (${(d.p99 / w.p99).toFixed(2)}x); lost ${w.lost}/${d.lost}; ` +
          `CPU ms server/pg/bench ${w.cpu.server}/${w.cpu.pg}/${w.cpu.bench} without, ` +
          `${d.cpu.server}/${d.cpu.pg}/${d.cpu.bench} during`,
      );
    }

    const f = (x: number, d = 2) => Number.isFinite(x) ? x.toFixed(d) : "n/a";
    const aloneRatio = median(alone) / ideal(20);
    const judgedRatio = median(judged) / ideal(30);
    // Each round's p99 with replays against its own p99 without (the rounds side by side on a shared
    // machine, whose load moves between rounds), the median of these ratios; also the p99 of all the
    // messages of each kind pooled, and the ratio of the medians of the rounds' p99.
    const liveRatio = median(during.map((d, i) => d.p99 / without[i].p99));
    const pooled = (runs: typeof without) => pct(runs.flatMap((r) => r.platform), 0.99);
    const roundsRatio = median(during.map((d) => d.p99)) / median(without.map((w) => w.p99));
    const load = await Deno.readTextFile("/proc/loadavg").catch(() => "?");
    const rows = without.map((w, i) =>
      `| ${i + 1} | ${f(w.p50, 1)} / ${f(w.p99, 1)} | ${f(during[i].p50, 1)} / ${f(during[i].p99, 1)} | ${
        f(during[i].p99 / w.p99)
      }x | ${during[i].replays} | ${w.lost} / ${during[i].lost} |`
    ).join("\n");
    const md = `# Replays of an agent change

Measured ${new Date().toISOString()} by \`deno task bench replay\` on ${navigator.hardwareConcurrency} cores
(load average at the end: ${
      load.split(" ").slice(0, 3).join(" ")
    }), Deno ${Deno.version.deno}. One server process
(workers on, REPLAY_CONCURRENCY ${CONCURRENCY}), ${CASES} conversations with a model reply, the stand-in answering a
replay's calls in ${MODEL_MS} ms; each run from its POST /api/approvals/{id}/replay to its finishedAt.

| replay alone | runs (ms) | median | ideal | ratio |
|---|---|---|---|---|
| same answers, ${2 * CASES} calls (no judge) | ${alone.join(", ")} | ${median(alone)} | ${ideal(20)} | ${
      f(aloneRatio)
    }x |
| other answers, ${3 * CASES} calls (each case judged) | ${judged.join(", ")} | ${median(judged)} | ${
      ideal(30)
    } | ${f(judgedRatio)}x |

The stand-in held at most ${replayCalls.maxInFlight} replay calls at once (the bound: ${CONCURRENCY}). One replay of
${CASES} cases: ${perReplay.statements} SQL statements, ${
      f(perReplay.ms, 1)
    } ms of PostgreSQL time (planning included); CPU per replay alone: server ${
      f(aloneCpu.server, 0)
    } ms, PostgreSQL ${f(aloneCpu.pg, 0)} ms (idle for as long: ${f(idle.server, 0)} and ${f(idle.pg, 0)} ms).

Live load: signed WhatsApp texts at ${RATE}/s for ${
      DURATION_MS / 1000
    } s per round (each a new conversation of
agent A, the model answering at once), alternating rounds without and with replays of agent B running back
to back. Platform time = Graph call − inbound 200 − window (${WINDOW_MS} ms) − model time.

| round | platform p50 / p99 without (ms) | platform p50 / p99 during replays (ms) | p99 ratio | replays during | lost without / during |
|---|---|---|---|---|---|
${rows}

The median of the rounds' p99 ratios (each round with replays against its own round without, in
alternating order): ${f(liveRatio)}x (goal < 1.2x). The median of the rounds' p99: ${
      f(median(without.map((w) => w.p99)), 1)
    } ms without, ${f(median(during.map((d) => d.p99)), 1)} ms during (${
      f(roundsRatio)
    }x); every message of each kind pooled: p99 ${f(pooled(without), 1)} and ${f(pooled(during), 1)} ms (${
      f(pooled(during) / pooled(without))
    }x). Replay alone ${f(aloneRatio)}x the ideal time (goal < 1.5x).

replay: ${f(aloneRatio)}x the ideal time, live p99 ${f(liveRatio)}x without a replay
`;
    await Deno.writeTextFile(RESULTS, md);
    console.log(md);
  } finally {
    await db?.end().catch(() => {});
    await statsClient?.end().catch(() => {});
    if (server) {
      server.kill("SIGTERM");
      await server.status;
    }
    await model.shutdown();
    await graph.shutdown();
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
