/**
 * The baseline of the nested-list benchmark: a bare Deno.serve handler and `pg`, where one statement
 * builds the whole answer with json_agg in PostgreSQL and its text is passed through unparsed.
 * The same columns as the GraphQL query of bench/nested.ts, in the same response shape.
 * It skips authentication on purpose: the benchmark measures what a GraphQL server adds.
 * Env: DATABASE_URL, PORT, WORKSPACE_ID.
 */
import pg from "pg";

const pool = new pg.Pool({ connectionString: Deno.env.get("DATABASE_URL"), max: 10 });
const workspaceId = Deno.env.get("WORKSPACE_ID")!;

/** json_build_object arguments for `cols` of the row `alias`, as "key", alias."key" pairs. */
const pairs = (alias: string, cols: string[]) => cols.map((c) => `'${c}', ${alias}."${c}"`).join(", ");

const AGENT = [
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
const INTENT = [
  "id",
  "agentId",
  "name",
  "tag",
  "description",
  "triggerOnTypes",
  "requiredFields",
  "webhookUrl",
  "webhookMethod",
  "createdAt",
  "updatedAt",
];
const WEBHOOK = ["id", "agentId", "event", "url", "method", "headers", "lastError", "createdAt", "updatedAt"];

const edges = (table: string, alias: string, cols: string[]) =>
  `json_build_object('edges', (SELECT coalesce(json_agg(json_build_object('node', json_build_object(${
    pairs(alias, cols)
  })) ORDER BY ${alias}."createdAt", ${alias}.id), '[]') FROM "${table}" ${alias} WHERE ${alias}."agentId" = a.id))`;

const SQL = `
SELECT json_build_object('data', json_build_object('agents', json_build_object('edges',
  coalesce(json_agg(json_build_object('node', page.node) ORDER BY page."createdAt", page.id), '[]'))))::text AS body
FROM (
  SELECT a."createdAt", a.id, json_build_object(${pairs("a", AGENT)},
    'intents', ${edges("Intent", "i", INTENT)},
    'webhooks', ${edges("EventWebhook", "w", WEBHOOK)}) AS node
  FROM "Agent" a WHERE a."workspaceId" = $1 ORDER BY a."createdAt", a.id LIMIT 50
) page`;

Deno.serve({
  hostname: "127.0.0.1",
  port: Number(Deno.env.get("PORT")),
  onListen: () => console.log("ready"),
}, async () => {
  const { rows } = await pool.query(SQL, [workspaceId]);
  return new Response(rows[0].body, { headers: { "content-type": "application/json" } });
});
