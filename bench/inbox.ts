/**
 * The inbox benchmark, part of `deno task bench`; alone: `deno task bench inbox`. A workspace of
 * 20 000 conversations (4 agents) and 200 000 messages, seeded set-based, read by one member
 * (login JWT: `unread` is theirs) from a server process of its own (bench/serve_app.ts, no job
 * workers), one request at a time:
 *   list:   GET /api/conversations?limit=50, each row's unread counted (half the conversations read
 *           by the member at some point), the first page and a page deep in the list (a cursor);
 *   search: GET /api/conversations?limit=50&search=<word>: a word in about 1 message of 60, and a
 *           word in 12 messages (the whole workspace walked for 12 matches).
 * Statements a request come from pg_stat_statements (top-level statements of the server's
 * connections); EXPLAIN (ANALYZE) of each search prints the plan lines that name the trigram index.
 * Writes bench/results/inbox.md; its last line:
 * `inbox: list p99 <ms> ms, search p99 <ms> ms, <n> statements a request`. Not part of the tests.
 */
import pg from "pg";
import { ensureDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createAgent } from "../src/agents/mod.ts";
import { createChannel } from "../src/channels/service.ts";
import { login } from "../src/workspaces/mod.ts";
import { plan } from "../src/reads/plan.ts";
import { restSelection } from "../src/reads/rest.ts";
import { viewOfRead } from "../src/reads/read_path.ts";
import { inbox } from "../src/conversations/inbox_capabilities.ts";
import { benchEnv, seedOwner } from "./_seed.ts";
import { denoScript, spawnReady } from "./_spawn.ts";
import { median, pct } from "./_percentiles.ts";

const CONVERSATIONS = Number(Deno.env.get("BENCH_INBOX_CONVERSATIONS") ?? 20_000);
const MESSAGES_EACH = 10;
const AGENTS = 4;
const REQUESTS = Number(Deno.env.get("BENCH_INBOX_REQUESTS") ?? 300);
const WARMUP = 30;
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
const RESULTS = "bench/results/inbox.md";
/** Words of the messages: 20 × 30 two-syllable words; a message is 8 of them. */
const FIRST = [
  "ba",
  "ce",
  "di",
  "fo",
  "gu",
  "ha",
  "je",
  "ki",
  "lo",
  "mu",
  "na",
  "pe",
  "qui",
  "ro",
  "su",
  "ta",
  "ve",
  "xi",
  "zo",
  "bru",
];
const SECOND = [
  "dal",
  "fen",
  "gor",
  "lim",
  "mor",
  "nek",
  "pav",
  "ruk",
  "sol",
  "tem",
  "vin",
  "wex",
  "yat",
  "zim",
  "bol",
  "cap",
  "dus",
  "fip",
  "gat",
  "hom",
  "jun",
  "kev",
  "lux",
  "mib",
  "nop",
  "pux",
  "rav",
  "sig",
  "tob",
  "vup",
];
/** A word only a dozen messages hold. */
const RARE = "zygomorphic";

export async function runInboxBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-inbox-" });
  await Deno.chmod(dir, 0o755);
  // Top-level statements only: a request's statements, not what functions they call run inside.
  const pgServer = await startEmbeddedPostgres({
    dir: `${dir}/data`,
    database: "postgres",
    persistent: false,
    settings: ["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=top"],
  });
  let server: Deno.ChildProcess | undefined;
  const stats = new pg.Client({ connectionString: pgServer.adminUrl.replace(/\/postgres$/, "/bench") });
  try {
    await ensureDatabase(pgServer.adminUrl, "bench");
    const databaseUrl = pgServer.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    const env = { ...benchEnv(databaseUrl), APP_ENV: "production", NODE_ENV: "production" };

    const seeder = await buildApp(loadConfig(env), {
      bootstrap: false,
      logger: silentLogger,
      workers: false,
    });
    const ctx = await seedOwner(seeder.deps, "bench@example.test");
    const workspaceId = ctx.actor.workspaceId;
    const userId = ctx.actor.userId!;
    const channels: string[] = [];
    const agents: string[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const agent = await createAgent(ctx, { name: `Agent ${i}`, jobName: "Bench Co" });
      agents.push(agent.id);
      channels.push((await createChannel(ctx, agent.id, { type: "API", label: `App ${i}` })).id);
    }
    const jwt = (await login(seeder.deps, { email: "bench@example.test", password: "bench-password" })).token;
    const seedStarted = performance.now();
    await stats.connect();
    await seed(stats, { workspaceId, userId, agents, channels });
    const seedMs = performance.now() - seedStarted;
    await stats.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");

    // EXPLAIN (ANALYZE) of the statements the server runs for each search (the same plan and values).
    const { view } = viewOfRead(inbox);
    const explain = async (search: string) => {
      const { sql, values } = plan(ctx, [{
        key: "v",
        read: inbox,
        params: {},
        page: { first: 50, where: { search } },
        shape: { kind: "rest", node: restSelection(view) },
      }]);
      const { rows } = await stats.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, [...values, 1e12, 1e9]);
      return rows.map((r: Record<string, string>) => r["QUERY PLAN"]);
    };
    const common = commonWord();
    const plans = { common: await explain(common), rare: await explain(RARE) };
    await seeder.stop();

    const port = freePort();
    server = (await spawnReady(...denoScript("bench/serve_app.ts"), {
      ...env,
      PORT: String(port),
      BENCH_WORKERS: "0",
    })).child;
    const headers = { authorization: `Bearer ${jwt}`, "x-workspace-id": workspaceId };
    const base = `http://127.0.0.1:${port}/api/conversations?limit=50`;
    const get = async (url: string) => {
      const res = await fetch(url, { headers });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      return body as { data: Array<{ id: string; unread: number | null }>; nextCursor: string | null };
    };
    // A cursor half-way down the list (about conversation 10 000).
    let deepCursor = (await get(`${base}`)).nextCursor!;
    for (let i = 0; i < CONVERSATIONS / 100 - 1; i++) {
      deepCursor = (await get(`${base}&cursor=${deepCursor}`)).nextCursor!;
    }

    const scenarios: Record<string, string> = {
      listFirst: base,
      listDeep: `${base}&cursor=${deepCursor}`,
      searchCommon: `${base}&search=${common}`,
      searchRare: `${base}&search=${RARE}`,
    };
    // Sanity: 50 rows with counts; the searches find what the seed put there.
    const found: Record<string, number> = {};
    for (const [name, url] of Object.entries(scenarios)) {
      const body = await get(url);
      found[name] = body.data.length;
      if (body.data.some((c) => typeof c.unread !== "number")) {
        throw new Error(`${name}: a row without unread`);
      }
    }
    if (
      found.listFirst !== 50 || found.listDeep !== 50 || found.searchCommon !== 50 || found.searchRare !== 12
    ) {
      throw new Error(`unexpected rows: ${JSON.stringify(found)}`);
    }

    const loadBefore = loadAverage();
    const times: Record<string, number[][]> = Object.fromEntries(Object.keys(scenarios).map((k) => [k, []]));
    const statements: Record<string, number[]> = Object.fromEntries(
      Object.keys(scenarios).map((k) => [k, []]),
    );
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, url] of Object.entries(scenarios)) {
        for (let i = 0; i < WARMUP; i++) await get(url);
        const before = await callsByStatement(stats);
        const ms: number[] = [];
        for (let i = 0; i < REQUESTS; i++) {
          const t0 = performance.now();
          await get(url);
          ms.push(performance.now() - t0);
        }
        // Statements that ran at least once every other request are the requests' (the rest: the
        // credential's lastUsedAt once a minute, and the like).
        let perRequest = 0;
        for (const [id, calls] of await callsByStatement(stats)) {
          const ran = calls - (before.get(id) ?? 0);
          if (ran >= REQUESTS / 2) perRequest += ran / REQUESTS;
        }
        times[name].push(ms);
        statements[name].push(perRequest);
        console.error(
          `round ${round + 1} ${name}: p50 ${pct(ms, 0.5).toFixed(2)} ms p99 ${
            pct(ms, 0.99).toFixed(2)
          } ms, ${perRequest.toFixed(2)} statements a request`,
        );
      }
    }

    const p99 = (name: string) => median(times[name].map((ms) => pct(ms, 0.99)));
    const p50 = (name: string) => median(times[name].map((ms) => pct(ms, 0.5)));
    const stmts = (name: string) => median(statements[name]);
    const f = (x: number, d = 2) => x.toFixed(d);
    const listP99 = Math.max(p99("listFirst"), p99("listDeep"));
    const searchP99 = Math.max(p99("searchCommon"), p99("searchRare"));
    const perRequest = Math.max(...Object.keys(scenarios).map(stmts));
    const [{ n: matches }] = (await stats.query(
      `SELECT count(*)::int AS n FROM "Message" WHERE content ILIKE $1`,
      [`%${common}%`],
    )).rows;
    const indexLines = (lines: string[]) =>
      lines.filter((l) => /trgm_idx|Index Scan|Index Only Scan/.test(l)).map((l) => `    ${l.trim()}`).join(
        "\n",
      );
    const row = (name: string, label: string) =>
      `| ${label} | ${found[name]} | ${f(p50(name))} | ${f(p99(name))} | ${f(stmts(name))} |`;
    const md = `# The inbox: 20 000 conversations, 200 000 messages

Measured ${new Date().toISOString()} by \`deno task bench inbox\` on ${navigator.hardwareConcurrency} cores,
Deno ${Deno.version.deno}, load average ${loadBefore} before and ${loadAverage()} after. One workspace: ${AGENTS} agents, ${CONVERSATIONS} conversations (each with its own
contact), ${CONVERSATIONS * MESSAGES_EACH} messages of 8 words each (half of them the customer's), seeded
set-based in ${f(seedMs / 1000, 1)} s; the member has read half of the conversations at some point.
The server (bench/serve_app.ts, production mode, no job workers) answers a member's login JWT; one request
at a time from this process, ${REQUESTS} per round after ${WARMUP} to warm up, ${ROUNDS} rounds; medians of
the rounds shown.

| request | rows | p50 ms | p99 ms | statements a request |
|---|---|---|---|---|
${row("listFirst", "list, first page (`?limit=50`), unread counted")}
${row("listDeep", "list, page at about conversation 10 000 (`&cursor=`)")}
${row("searchCommon", `search, a word in ${matches} messages (\`&search=${common}\`)`)}
${row("searchRare", `search, a word in 12 messages (\`&search=${RARE}\`)`)}

Goals: the list p99 < 50 ms, a search p99 < 100 ms, 2 statements a request (the credential's and the read's).

EXPLAIN (ANALYZE) of the search's statement (as the planner builds it), the lines naming an index:

- \`${common}\`:
${indexLines(plans.common)}
- \`${RARE}\`:
${indexLines(plans.rare)}

inbox: list p99 ${f(listP99, 1)} ms, search p99 ${f(searchP99, 1)} ms, ${
      f(perRequest, 0)
    } statements a request
`;
    await Deno.writeTextFile(RESULTS, md);
    if (Deno.env.get("BENCH_PLANS")) console.error([...plans.common, "", ...plans.rare].join("\n"));
    console.log(md);
  } finally {
    server?.kill("SIGTERM");
    await server?.status;
    await stats.end().catch(() => {});
    await pgServer.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The machine's load average over 1, 5 and 15 minutes. */
const loadAverage = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");

/** A word of the vocabulary (FIRST × SECOND) that no other word contains. */
const commonWord = () => `${FIRST[3]}${SECOND[7]}`;

/** The calls so far of each statement (by pg_stat_statements' queryid). */
async function callsByStatement(stats: pg.Client): Promise<Map<string, number>> {
  const { rows } = await stats.query(
    `SELECT queryid::text AS id, calls::bigint AS calls FROM pg_stat_statements
      WHERE query NOT LIKE '%pg_stat_statements%'`,
  );
  return new Map(rows.map((r: { id: string; calls: string }) => [r.id, Number(r.calls)]));
}

/**
 * The workspace's contacts, conversations and messages, set-based: conversation i (1-based) has
 * contact i ("<first> <last> i", +55 11 9xxxx-xxxx), belongs to agent i mod AGENTS, was last active
 * i seconds before now, and has MESSAGES_EACH messages alternating customer and AI, each 8 words
 * chosen by hashing (i, message, word). The member read the even ones up to their 5th message;
 * every 7th is HUMAN and held by the member. Then ANALYZE, as autovacuum would.
 */
async function seed(
  db: pg.Client,
  o: { workspaceId: string; userId: string; agents: string[]; channels: string[] },
): Promise<void> {
  const words = FIRST.flatMap((a) => SECOND.map((b) => a + b));
  const n = CONVERSATIONS;
  await db.query(
    `INSERT INTO "Contact" (id, "workspaceId", "externalId", name, "createdAt")
     SELECT 'ct' || i, $1, '+55119' || lpad(i::text, 8, '0'),
            (ARRAY['Ana','Bruno','Carla','Diego','Elisa','Fábio','Gabi','Heitor','Iara','João'])[1 + i % 10] || ' ' ||
            (ARRAY['Silva','Souza','Costa','Lima','Rocha','Alves','Pereira','Gomes','Ribeiro','Martins'])[1 + (i / 10) % 10]
            || ' ' || i, now() - interval '30 days'
       FROM generate_series(1, $2::int) i`,
    [o.workspaceId, n],
  );
  await db.query(
    `INSERT INTO "Conversation" (id, "workspaceId", "agentId", "channelId", "contactId", status, "assignedUserId",
                                 "lastMessageAt", "lastContactMessageAt", "createdAt", "updatedAt")
     SELECT 'cv' || i, $1, ($3::text[])[1 + i % $5], ($4::text[])[1 + i % $5], 'ct' || i,
            (CASE WHEN i % 7 = 0 THEN 'HUMAN' ELSE 'OPEN' END)::"ConversationStatus",
            CASE WHEN i % 7 = 0 THEN $6 END,
            now() - i * interval '1 second', now() - i * interval '1 second',
            now() - i * interval '1 second' - interval '1 hour', now()
       FROM generate_series(1, $2::int) i`,
    [o.workspaceId, n, o.agents, o.channels, o.agents.length, o.userId],
  );
  await db.query(
    `INSERT INTO "Message" (id, "conversationId", "channelId", direction, "senderKind", content, status, "createdAt",
                            "updatedAt")
     SELECT 'm' || i || '_' || k, 'cv' || i, ($2::text[])[1 + i % $3],
            (CASE WHEN k % 2 = 1 THEN 'INBOUND' ELSE 'OUTBOUND' END)::"MessageDirection",
            (CASE WHEN k % 2 = 1 THEN 'CUSTOMER' ELSE 'AI' END)::"SenderKind",
            CASE WHEN i % ($1::int / 12) = 0 AND k = 1 THEN $5 || ' ' ELSE '' END ||
            (SELECT string_agg(($4::text[])[1 + abs(hashint8(i * 1000 + k * 10 + w)) % $6], ' ' ORDER BY w)
               FROM generate_series(1, 8) w),
            (CASE WHEN k % 2 = 1 THEN 'RECEIVED' ELSE 'SENT' END)::"MessageStatus",
            now() - i * interval '1 second' - (${MESSAGES_EACH} - k) * interval '1 minute',
            now()
       FROM generate_series(1, $1::int) i, generate_series(1, ${MESSAGES_EACH}) k`,
    [n, o.channels, o.channels.length, words, RARE, words.length],
  );
  await db.query(
    `INSERT INTO "ConversationRead" ("conversationId", "userId", "readAt")
     SELECT 'cv' || i, $1, now() - i * interval '1 second' - 5 * interval '1 minute'
       FROM generate_series(2, $2::int, 2) i`,
    [o.userId, n],
  );
  await db.query("VACUUM ANALYZE");
}
