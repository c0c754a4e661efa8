/**
 * The agent list benchmark, part of `deno task bench`; alone: `deno task bench agents`.
 * Starts a throwaway PostgreSQL, seeds 50 agents with 3 intents each, then measures in one run,
 * alternating rounds so machine noise hits every side alike:
 *   1. GET /api/agents (API token) against a bare Deno.serve + pg baseline (goal >= 0.6x)
 *   2. the same list over GraphQL against GET /api/agents (goal >= 0.7x)
 *   3. the cost of authentication: API token against login JWT
 * Writes bench/results/agents-list.md. Not part of the tests.
 */
import { ensureDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createApiToken, login } from "../src/workspaces/mod.ts";
import { createAgent } from "../src/agents/mod.ts";
import { createIntent } from "../src/intents/mod.ts";
import { benchEnv, seedOwner } from "./_seed.ts";
import { denoScript, spawnReady } from "./_spawn.ts";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
const DURATION_MS = Number(Deno.env.get("BENCH_DURATION_MS") ?? 4000);
const CONCURRENCY = Number(Deno.env.get("BENCH_CONCURRENCY") ?? 8);

const AGENTS_QUERY =
  "{ agents(first: 100) { edges { node { id name status template model counts { conversations intents numbers } } } } }";

const RESULTS = "bench/results/agents-list.md";

/** The hand-written analysis below the figures ("## What limits it" on), kept across runs. */
async function handWritten(path: string): Promise<string> {
  const old = await Deno.readTextFile(path).catch(() => "");
  const at = old.indexOf("\n## ");
  return at === -1 ? "" : old.slice(at);
}

interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
}

export async function runAgentsBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  const children: Deno.ChildProcess[] = [];
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const databaseUrl = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    const env = {
      ...benchEnv(databaseUrl),
      APP_ENV: "production",
      // As `deno task start` runs the server.
      NODE_ENV: "production",
    };

    // Seed through the services, as a client would through the API.
    const seeder = await buildApp(loadConfig(env), { bootstrap: false, logger: silentLogger });
    const deps = seeder.deps;
    const ctx = await seedOwner(deps, "bench@example.test");
    const workspaceId = ctx.actor.workspaceId;
    for (let i = 0; i < 50; i++) {
      const agent = await createAgent(ctx, {
        name: `Agent ${i}`,
        jobName: "Bench Co",
        trainingContext: "x".repeat(200),
      });
      for (let j = 0; j < 3; j++) {
        await createIntent(ctx, agent.id, {
          name: `intent ${j}`,
          description: "when the customer asks",
          triggerOnTypes: ["TEXT"],
          requiredFields: [{ name: "date", type: "string", description: "the date" }],
          webhookUrl: "http://127.0.0.1:9/intent",
          webhookMethod: "POST",
        });
      }
    }
    const apiToken = (await createApiToken(ctx, { label: "bench" })).token;
    const jwt = (await login(deps, { email: "bench@example.test", password: "bench-password" })).token;
    await seeder.stop();

    const spawn = async (script: string, extraEnv: Record<string, string>) => {
      const { child } = await spawnReady(...denoScript(script), { ...env, ...extraEnv });
      children.push(child);
    };

    const appPort = freePort();
    await spawn("bench/serve_app.ts", { PORT: String(appPort) });
    const basePort = freePort();
    await spawn("bench/baseline_agents.ts", { PORT: String(basePort), WORKSPACE_ID: workspaceId });

    const load = async (opts: Scenario) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "bench/load.ts",
          JSON.stringify({ ...opts, concurrency: CONCURRENCY, durationMs: DURATION_MS, warmupMs: 1000 }),
        ],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      return JSON.parse(new TextDecoder().decode(out.stdout)) as LoadResult;
    };

    interface Scenario {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
    }
    const restWith = (token: string): Scenario => ({
      url: `http://127.0.0.1:${appPort}/api/agents`,
      headers: { authorization: `Bearer ${token}`, "x-workspace-id": workspaceId },
    });
    const scenarios: Record<string, Scenario> = {
      baseline: { url: `http://127.0.0.1:${basePort}/api/agents` },
      restToken: restWith(apiToken),
      restJwt: restWith(jwt),
      graphql: {
        url: `http://127.0.0.1:${appPort}/graphql`,
        method: "POST",
        headers: {
          authorization: `Bearer ${apiToken}`,
          "x-workspace-id": workspaceId,
          "content-type": "application/json",
        },
        body: JSON.stringify({ query: AGENTS_QUERY }),
      },
    };

    // Sanity: every side answers the same 50 agents before anything is timed.
    for (const [name, s] of Object.entries(scenarios)) {
      const res = await fetch(s.url, { method: s.method ?? "GET", headers: s.headers, body: s.body });
      const body = await res.json();
      const n = body.data?.length ?? body.data?.agents?.edges?.length;
      if (res.status !== 200 || n !== 50) {
        throw new Error(`${name}: status ${res.status}, ${n} agents: ${JSON.stringify(body).slice(0, 300)}`);
      }
    }

    const results: Record<string, LoadResult[]> = { baseline: [], restToken: [], restJwt: [], graphql: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, s] of Object.entries(scenarios)) {
        const r = await load(s);
        if (r.errors) throw new Error(`${name}: ${r.errors} failed requests`);
        results[name].push(r);
        console.error(
          `round ${round + 1} ${name}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(2)} ms p99 ${
            r.p99.toFixed(2)
          } ms`,
        );
      }
    }

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const summary = Object.fromEntries(
      Object.entries(results).map(([k, rs]) => [k, {
        rps: median(rs.map((r) => r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
      }]),
    );
    // Ratios are taken round by round (same moment of the machine), then the median.
    const ratio = (a: string, b: string) => median(results[a].map((r, i) => r.rps / results[b][i].rps));
    const restVsBaseline = ratio("restToken", "baseline");
    const graphqlVsRest = ratio("graphql", "restToken");
    const jwtVsToken = ratio("restJwt", "restToken");

    const row = (name: string, label: string) =>
      `| ${label} | ${summary[name].rps.toFixed(0)} | ${summary[name].p50.toFixed(2)} | ${
        summary[name].p99.toFixed(2)
      } |`;
    const md = `# GET /api/agents: 50 agents with 3 intents each

Measured ${new Date().toISOString()} by \`deno task bench\` on ${navigator.hardwareConcurrency} cores,
Deno ${Deno.version.deno}; load from a separate process, ${CONCURRENCY} connections in a closed loop,
${ROUNDS} rounds of ${DURATION_MS / 1000} s per side, alternating; medians shown.

| side | req/s | p50 ms | p99 ms |
|---|---|---|---|
${row("baseline", "baseline: bare Deno.serve + pg, no auth")}
${row("restToken", "GET /api/agents, API token")}
${row("restJwt", "GET /api/agents, login JWT")}
${row("graphql", "GraphQL agents list, API token")}

| ratio | value | goal |
|---|---|---|
| REST / baseline (throughput) | ${restVsBaseline.toFixed(2)}x | >= 0.6x |
| GraphQL / REST (throughput) | ${graphqlVsRest.toFixed(2)}x | >= 0.7x |
| JWT / API token (throughput) | ${jwtVsToken.toFixed(2)}x | (cost of authentication) |

Per round (REST/baseline, GraphQL/REST): ${
      results.baseline.map((b, i) =>
        `${(results.restToken[i].rps / b.rps).toFixed(2)}, ${
          (results.graphql[i].rps / results.restToken[i].rps).toFixed(2)
        }`
      ).join("; ")
    }.
`;
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile(RESULTS, md + await handWritten(RESULTS));
    console.log(md);
  } finally {
    for (const c of children) {
      try {
        c.kill("SIGTERM");
        await c.status;
      } catch { /* gone */ }
    }
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await runAgentsBench();
