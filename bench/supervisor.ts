/**
 * The supervisor turn benchmark (the turn part), part of `deno task bench`;
 * alone: `deno task bench supervisor`. One server process (as `deno task start` runs it), an
 * instant OpenAI-compatible stand-in in a process of its own (bench/_model_standin.ts: the first
 * call of a turn asks for three tools, list_agents, get_agent and list_webhooks, the second
 * answers), and the load from a third (bench/load.ts), in alternating rounds:
 *   - POST /api/supervisor/chat: one whole turn (two model calls, three tool calls, the stores);
 *   - the stand-in alone, one chat completion: the model's share, twice per turn;
 *   - GET /api/agents/{id}: one planner read of the same server, the baseline.
 * Overhead beyond the model = turn - 2 x stand-in round trip (goal: p99 < 30 ms), one caller at a
 * time and 4 at once. Writes bench/results/supervisor.md. Not part of the tests.
 */
import { ensureDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createApiToken } from "../src/workspaces/mod.ts";
import { createAgent } from "../src/agents/mod.ts";
import { createWebhook } from "../src/webhooks/service.ts";
import { benchEnv, seedOwner } from "./_seed.ts";
import { denoScript, spawnReady } from "./_spawn.ts";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
const DURATION_MS = Number(Deno.env.get("BENCH_DURATION_MS") ?? 4000);
const RESULTS = "bench/results/supervisor.md";

interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  /** The server process's CPU time over the measured window (bench/load.ts `cpuPid`). */
  cpuMs: number;
}

interface Scenario {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f2 = (n: number) => n.toFixed(2);

export async function runSupervisorBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  const children: Deno.ChildProcess[] = [];
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const databaseUrl = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    const modelPort = freePort();
    const env = {
      ...benchEnv(databaseUrl),
      APP_ENV: "production",
      NODE_ENV: "production",
      OPENAI_API_KEY: "sk-bench",
      OPENAI_BASE_URL: `http://127.0.0.1:${modelPort}/v1`,
    };

    const seeder = await buildApp(loadConfig(env), {
      bootstrap: false,
      logger: silentLogger,
      workers: false,
    });
    const ctx = await seedOwner(seeder.deps, "bench@example.test");
    const workspaceId = ctx.actor.workspaceId;
    let agentId = "";
    for (let i = 0; i < 10; i++) {
      const agent = await createAgent(ctx, {
        name: `Agent ${i}`,
        jobName: "Bench Co",
        trainingContext: "x".repeat(200),
      });
      await createWebhook(ctx, agent.id, {
        event: "message.sent",
        url: "https://example.com/hook",
        method: "POST",
        headers: { "X-Key": "k" },
      });
      agentId ||= agent.id;
    }
    const token = (await createApiToken(ctx, { label: "bench" })).token;
    await seeder.stop();

    const spawn = async (script: string, extraEnv: Record<string, string>) => {
      const { child } = await spawnReady(...denoScript(script), { ...env, ...extraEnv });
      children.push(child);
      return child.pid;
    };
    await spawn("bench/_model_standin.ts", { PORT: String(modelPort), AGENT_ID: agentId });
    const appPort = freePort();
    const serverPid = await spawn("bench/serve_app.ts", { PORT: String(appPort) });

    const auth = { authorization: `Bearer ${token}`, "x-workspace-id": workspaceId };
    const scenarios: Record<string, Scenario> = {
      turn: {
        url: `http://127.0.0.1:${appPort}/api/supervisor/chat`,
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ message: "How is Ana set up?" }),
      },
      model: {
        url: `http://127.0.0.1:${modelPort}/v1/chat/completions`,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] }),
      },
      baseline: { url: `http://127.0.0.1:${appPort}/api/agents/${agentId}`, headers: auth },
    };
    const load = async (s: Scenario, concurrency: number) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "bench/load.ts",
          JSON.stringify({ ...s, concurrency, durationMs: DURATION_MS, warmupMs: 1000, cpuPid: serverPid }),
        ],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      return JSON.parse(new TextDecoder().decode(out.stdout)) as LoadResult;
    };

    const loadAverage = async () => (await Deno.readTextFile("/proc/loadavg").catch(() => "?")).split(" ")[0];
    const loadBefore = await loadAverage();
    const results: Record<string, LoadResult[]> = {};
    const levels = [1, 4];
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of levels) {
        for (const name of Object.keys(scenarios)) {
          const r = await load(scenarios[name], c);
          if (r.errors) throw new Error(`${name} x${c}: ${r.errors} errors`);
          (results[`${name}@${c}`] ??= []).push(r);
          console.log(
            `round ${round + 1} ${name} x${c}: p50 ${f2(r.p50)} ms, p99 ${f2(r.p99)} ms, ${
              r.rps.toFixed(0)
            }/s`,
          );
        }
      }
    }
    const med = (key: string, field: keyof LoadResult) => median(results[key].map((r) => r[field]));
    const rows: string[] = [];
    const ratios: string[] = [];
    for (const c of levels) {
      for (
        const [name, label] of [
          ["turn", "POST /api/supervisor/chat (one turn, 3 tool calls)"],
          ["model", "the stand-in alone (one chat completion)"],
          ["baseline", "GET /api/agents/{id} (baseline)"],
        ]
      ) {
        // The stand-in is another process: no server CPU of its own to show.
        const cpu = name === "model"
          ? "-"
          : f2(median(results[`${name}@${c}`].map((r) => r.cpuMs / r.requests)));
        rows.push(
          `| ${label} | ${c} | ${med(`${name}@${c}`, "rps").toFixed(0)} | ${
            f2(med(`${name}@${c}`, "p50"))
          } | ${f2(med(`${name}@${c}`, "p99"))} | ${cpu} |`,
        );
      }
      const over = (p: "p50" | "p99") => med(`turn@${c}`, p) - 2 * med(`model@${c}`, p);
      ratios.push(
        `| ${c} | ${f2(over("p50"))} | ${f2(over("p99"))} | ${
          f2(med(`turn@${c}`, "p50") / med(`baseline@${c}`, "p50"))
        }x | ${f2(med(`turn@${c}`, "p99") / med(`baseline@${c}`, "p99"))}x |`,
      );
    }
    const loadAfter = await loadAverage();
    const perRound = (c: number) =>
      results[`turn@${c}`].map((r, i) =>
        `${f2(r.p50 - 2 * results[`model@${c}`][i].p50)}/${f2(r.p99 - 2 * results[`model@${c}`][i].p99)}`
      ).join(", ");
    const report = `# Supervisor turn: the server's time beyond the model

Measured ${
      new Date().toISOString()
    } by \`deno task bench supervisor\` on ${navigator.hardwareConcurrency} cores,
Deno ${Deno.version.deno}; the server as \`deno task start\` runs it, an instant OpenAI-compatible
stand-in (bench/_model_standin.ts) and the load (bench/load.ts) each in a process of their own;
${ROUNDS} rounds of ${DURATION_MS / 1000} s per side and level, alternating; medians shown.

A turn: the question stored, the last 30 messages read, the answer row created, a model call
asking for list_agents, get_agent and list_webhooks (10 agents with a webhook each), the three
reads (at once), a second model call, the answer stored with its credits and the day's use in
one statement. API token, the conversation growing through the run.

| side | callers | req/s | p50 ms | p99 ms | server CPU ms/req |
|---|---|---|---|---|---|
${rows.join("\n")}

Beyond the model = turn - 2 x the stand-in's round trip (at the same percentile; goal p99 < 30 ms):

| callers | beyond the model p50 ms | beyond the model p99 ms | turn / baseline p50 | turn / baseline p99 |
|---|---|---|---|---|
${ratios.join("\n")}

Per round, beyond the model p50/p99 ms: 1 caller ${perRound(1)}; 4 callers ${perRound(4)}.
Machine load average (1 min) at the start and end of the run: ${loadBefore}, ${loadAfter}
(the machine is shared; rounds under other processes' load show it).
`;
    await Deno.writeTextFile(RESULTS, report);
    console.log(report);
  } finally {
    for (const c of children) {
      try {
        c.kill("SIGTERM");
      } catch { /* gone */ }
      await c.status;
    }
    await pg.stop();
  }
}

if (import.meta.main) await runSupervisorBench();
