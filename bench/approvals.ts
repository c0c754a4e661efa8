/**
 * Approvals benchmark, part of `deno task bench`; alone: `deno task bench
 * approvals`. On a throwaway PostgreSQL, one server process on a port, clients over HTTP in this
 * process (a login JWT: deciding needs a person). Two scenarios, each against a baseline in the same
 * run, the same change made by its own REST endpoint without an approval:
 *   spread: 200 PENDING prompt approvals of 200 agents, approved by 200 concurrent requests
 *           (baseline: 200 concurrent PUT /api/agents/{id}/prompt of 200 agents);
 *   one:    50 concurrent approves of ONE approval, in rounds (baseline: 50 concurrent PUTs of the
 *           prompt of one agent, which all execute).
 * Latency per request (ms); exactly-once is counted in the database: prompt versions per agent.
 * BENCH_APPROVALS_SPREAD / _ONE / _ROUNDS change the sizes; BENCH_DEBUG=1 logs the server's errors.
 * Writes bench/results/approvals.md. Not part of the tests.
 */
import { ensureDatabase, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createLogger, silentLogger } from "../src/shared/logger.ts";
import { createAgent } from "../src/agents/mod.ts";
import { proposeChange } from "../src/approvals/propose.ts";
import type { ActorContext } from "../src/context.ts";
import { benchEnv, seedOwner } from "./_seed.ts";

const SPREAD = Number(Deno.env.get("BENCH_APPROVALS_SPREAD") ?? 200);
const ONE = Number(Deno.env.get("BENCH_APPROVALS_ONE") ?? 50);
const ROUNDS = Number(Deno.env.get("BENCH_APPROVALS_ROUNDS") ?? 5);

interface Figures {
  n: number;
  p50: number;
  p99: number;
  max: number;
  /** All requests' wall time (ms). */
  wallMs: number;
  statuses: Record<number, number>;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

function figures(samples: Array<{ ms: number; status: number }>, wallMs: number): Figures {
  const lat = samples.map((s) => s.ms).sort((a, b) => a - b);
  const statuses: Record<number, number> = {};
  for (const s of samples) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
  return { n: lat.length, p50: pct(lat, 50), p99: pct(lat, 99), max: lat.at(-1)!, wallMs, statuses };
}

/** Sends every request at once; each one's latency and status. */
async function burst(requests: Array<() => Promise<Response>>) {
  const t0 = performance.now();
  const samples = await Promise.all(requests.map(async (send) => {
    const start = performance.now();
    const res = await send();
    await res.body?.cancel();
    return { ms: performance.now() - start, status: res.status };
  }));
  return { samples, wallMs: performance.now() - t0 };
}

export async function runApprovalsBench(): Promise<string> {
  const load = () => Deno.readTextFile("/proc/loadavg").then((t) => t.split(" ")[0]).catch(() => "?");
  const loadBefore = await load();
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-approvals-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const url = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(url);
    const app = await buildApp(
      loadConfig({ ...benchEnv(url), PORT: "0" }),
      {
        bootstrap: false,
        logger: Deno.env.get("BENCH_DEBUG") ? createLogger("error") : silentLogger,
        workers: false,
      },
    );
    const { port } = await app.start();
    const base = `http://127.0.0.1:${port}`;
    const deps = app.deps;
    const db = deps.db;
    const email = "bench-approvals@example.test";
    const ctx: ActorContext = await seedOwner(deps, email);
    const login = await (await fetch(`${base}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "bench-password" }),
    })).json();
    const headers = {
      authorization: `Bearer ${login.token}`,
      "x-workspace-id": ctx.actor.workspaceId,
      "content-type": "application/json",
    };
    const post = (path: string) => () => fetch(`${base}${path}`, { method: "POST", headers });
    const put = (path: string, body: unknown) => () =>
      fetch(`${base}${path}`, { method: "PUT", headers, body: JSON.stringify(body) });
    const agents = async (n: number, tag: string) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await createAgent(ctx, { name: `${tag} ${i}` })).id);
      return ids;
    };
    const propose = async (agentId: string, text: string) =>
      (await proposeChange(ctx, {
        tool: "update_agent_prompt",
        target: { agentId },
        change: { systemPrompt: text },
        rationale: "bench",
      }, { supervisorMessageId: null })).id;
    const versionsOf = (ids: string[]) => db.promptVersion.count({ where: { agentId: { in: ids } } });
    // Warm-up: the first statements of each kind are parsed and planned once per connection.
    const warm = await agents(5, "Warm");
    await burst(warm.map((id) => put(`/api/agents/${id}/prompt`, { systemPrompt: "w", rationale: "w" })));
    await burst(
      await Promise.all(warm.map(async (id) => post(`/api/approvals/${await propose(id, "w2")}/approve`))),
    );

    // spread: the baseline first, then the approvals.
    const baseAgents = await agents(SPREAD, "Base");
    const spreadBase = await burst(
      baseAgents.map((id) => put(`/api/agents/${id}/prompt`, { systemPrompt: "direct", rationale: "r" })),
    );
    const baseVersions = await versionsOf(baseAgents);
    const approvalAgents = await agents(SPREAD, "Approved");
    const approvals: string[] = [];
    for (const id of approvalAgents) approvals.push(await propose(id, "approved"));
    const spread = await burst(approvals.map((id) => post(`/api/approvals/${id}/approve`)));
    const spreadVersions = await versionsOf(approvalAgents);
    const approvedRows = await db.pendingApproval.count({
      where: { id: { in: approvals }, status: "APPROVED" },
    });

    // one: rounds of ONE concurrent approves of one approval, and the baseline's PUTs.
    const oneBase: Array<{ ms: number; status: number }> = [];
    const one: Array<{ ms: number; status: number }> = [];
    let oneBaseWall = 0;
    let oneWall = 0;
    const executions: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const [baseAgent] = await agents(1, `One base ${r}`);
      const b = await burst(
        Array.from(
          { length: ONE },
          (_, i) => put(`/api/agents/${baseAgent}/prompt`, { systemPrompt: `p${i}`, rationale: "r" }),
        ),
      );
      oneBase.push(...b.samples);
      oneBaseWall += b.wallMs;
      const [agent] = await agents(1, `One ${r}`);
      const id = await propose(agent, "once");
      const a = await burst(Array.from({ length: ONE }, () => post(`/api/approvals/${id}/approve`)));
      one.push(...a.samples);
      oneWall += a.wallMs;
      executions.push(await versionsOf([agent]));
    }
    await app.stop();

    const rows = [
      [
        "spread: PUT prompt (baseline)",
        figures(spreadBase.samples, spreadBase.wallMs),
        `${baseVersions}/${SPREAD}`,
      ],
      ["spread: approve", figures(spread.samples, spread.wallMs), `${spreadVersions}/${SPREAD}`],
      [`one: PUT prompt x${ONE} (baseline)`, figures(oneBase, oneBaseWall), `${ONE * ROUNDS} versions`],
      [`one: approve x${ONE} of one approval`, figures(one, oneWall), `${executions.join(", ")} (per round)`],
    ] as const;
    const ratio = (a: Figures, b: Figures) => (a.p99 / b.p99).toFixed(2);
    const statusText = (s: Record<number, number>) =>
      Object.entries(s).map(([k, v]) => `${v}× ${k}`).join(", ");
    const spreadOk = spreadVersions === SPREAD && approvedRows === SPREAD;
    const oneOk = executions.every((n) => n === 1) && (figures(one, oneWall).statuses[200] ?? 0) === ROUNDS;
    const md = `# Approvals

Measured ${new Date().toISOString()} by \`deno task bench approvals\` (bench/approvals.ts) on
${navigator.hardwareConcurrency} cores. One server process on a port, clients over HTTP (a login JWT)
in the benchmark process. spread: ${SPREAD} PENDING prompt approvals of ${SPREAD} agents, approved
by ${SPREAD} concurrent requests; baseline: ${SPREAD} concurrent \`PUT /api/agents/{id}/prompt\` of
${SPREAD} other agents (the same change by its own endpoint). one: ${ONE} concurrent approves of
one approval, ${ROUNDS} rounds; baseline: ${ONE} concurrent prompt PUTs of one agent (which all
execute). Latency per request in ms. Executed: prompt versions counted in the database afterwards.
Load average before → after: ${loadBefore} → ${await load()} (other work shares the machine).

| scenario | requests | answers | p50 | p99 | max | wall ms | executed | p99 vs baseline |
|---|---|---|---|---|---|---|---|---|
${
      rows.map(([name, f, executed], i) =>
        `| ${name} | ${f.n} | ${statusText(f.statuses)} | ${f.p50.toFixed(1)} | ${f.p99.toFixed(1)} | ${
          f.max.toFixed(1)
        } | ${f.wallMs.toFixed(0)} | ${executed} | ${i % 2 ? ratio(f, rows[i - 1][1]) + "x" : "1.00x"} |`
      ).join("\n")
    }

Exactly once: spread ${
      spreadOk ? "yes" : "NO"
    } (${spreadVersions} versions, ${approvedRows} APPROVED of ${SPREAD});
one ${oneOk ? "yes" : "NO"} (one 200 and ${ONE - 1} × 409 APPROVAL_NOT_PENDING per round, one version each).
An approve locks its approval row (SELECT ... FOR UPDATE), then the agent's row, compares the prompt
with \`before\`, and runs the prompt service in the same transaction; the 409s of "one" wait for the
first approve's commit and answer at once after it.
`;
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile("bench/results/approvals.md", md);
    console.log(md);
    if (!spreadOk || !oneOk) throw new Error("approvals bench: an approval did not execute exactly once");
    return md;
  } finally {
    await pg.stop();
  }
}

if (import.meta.main) await runApprovalsBench();
