/**
 * The baseline for GET /api/agents: a bare Deno.serve handler reading the same data with `pg` in
 * the fastest way found (plain selects, counts grouped in one statement, JSON built in code).
 * It skips authentication on purpose: the benchmark measures what our stack adds on top.
 * Env: DATABASE_URL, PORT, WORKSPACE_ID.
 */
import pg from "pg";

const pool = new pg.Pool({ connectionString: Deno.env.get("DATABASE_URL"), max: 10 });
const workspaceId = Deno.env.get("WORKSPACE_ID")!;

Deno.serve({
  hostname: "127.0.0.1",
  port: Number(Deno.env.get("PORT")),
  onListen: () => console.log("ready"),
}, async () => {
  const agents = await pool.query(
    'SELECT id, name, status, template, model FROM "Agent" WHERE "workspaceId" = $1 ORDER BY "createdAt", id LIMIT 101',
    [workspaceId],
  );
  const ids = agents.rows.map((a) => a.id);
  const counts = await pool.query(
    `SELECT 'i' AS k, "agentId", count(*)::int AS n FROM "Intent" WHERE "agentId" = ANY($1) GROUP BY "agentId"
     UNION ALL SELECT 'c', "agentId", count(*)::int FROM "Conversation" WHERE "agentId" = ANY($1) GROUP BY "agentId"
     UNION ALL SELECT 'n', "agentId", count(*)::int FROM "Channel" WHERE "agentId" = ANY($1) GROUP BY "agentId"`,
    [ids],
  );
  const byAgent = new Map<string, { conversations: number; intents: number; numbers: number }>();
  for (const id of ids) byAgent.set(id, { conversations: 0, intents: 0, numbers: 0 });
  for (const r of counts.rows) {
    const c = byAgent.get(r.agentId)!;
    if (r.k === "i") c.intents = r.n;
    else if (r.k === "c") c.conversations = r.n;
    else c.numbers = r.n;
  }
  const data = agents.rows.slice(0, 100).map((a) => ({ ...a, _count: byAgent.get(a.id) }));
  return Response.json({ data, nextCursor: agents.rows.length > 100 ? data[99].id : null });
});
