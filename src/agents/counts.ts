/**
 * The list counts of spec section 4 (`_count`: conversations, intents, numbers = channels) for a
 * set of agents, in one statement. Prisma's own `_count` aggregates each related table whole
 * before joining (GROUP BY over every workspace's rows); these correlated counts use the agentId
 * indexes and only touch the agents asked for.
 */
import type { Db } from "../db/client.ts";
import type { Keyset } from "../shared/pagination.ts";

export interface AgentCounts {
  conversations: number;
  intents: number;
  numbers: number;
}

export async function agentCounts(db: Db, agentIds: readonly string[]): Promise<Map<string, AgentCounts>> {
  const counts = new Map<string, AgentCounts>();
  if (agentIds.length === 0) return counts;
  const rows = await db.$queryRawUnsafe<Array<{ id: string } & AgentCounts>>(
    `SELECT a.id,
       (SELECT count(*)::int FROM "Conversation" c WHERE c."agentId" = a.id) AS conversations,
       (SELECT count(*)::int FROM "Intent" i WHERE i."agentId" = a.id) AS intents,
       (SELECT count(*)::int FROM "Channel" ch WHERE ch."agentId" = a.id) AS numbers
     FROM "Agent" a WHERE a.id = ANY($1::text[])`,
    agentIds,
  );
  for (const { id, ...c } of rows) counts.set(id, c);
  return counts;
}

export interface AgentListRow {
  id: string;
  name: string;
  status: string;
  template: string;
  model: string;
  /** The keyset of the page's cursor; not part of the list item. */
  createdAt: Date;
  _count: AgentCounts;
}

/**
 * One page of the agent list (spec section 4) with its counts in a single statement: the hottest
 * read of the API, so it skips the ORM (see bench/results/agents-list.md). Keyset-paginated on
 * (createdAt, id), oldest first, strictly after the REST cursor's keyset `after` (see
 * shared/pagination.ts) or after the row `afterId` of the workspace (GraphQL's id cursors; an id that
 * names no such row gives no rows); up to `take` rows.
 */
export async function agentListPage(
  db: Db,
  page: { workspaceId: string; take: number; after?: Keyset; afterId?: string },
): Promise<AgentListRow[]> {
  const params: unknown[] = [page.workspaceId, page.take];
  let after = "";
  if (page.after) {
    params.push(page.after.createdAt, page.after.id);
    after = `AND (a."createdAt", a.id) > ($3::timestamptz, $4)`;
  } else if (page.afterId) {
    params.push(page.afterId);
    after =
      `AND (a."createdAt", a.id) > (SELECT c."createdAt", c.id FROM "Agent" c WHERE c.id = $3 AND c."workspaceId" = $1)`;
  }
  const rows = await db.$queryRawUnsafe<Array<Omit<AgentListRow, "_count"> & AgentCounts>>(
    `SELECT a.id, a.name, a.status::text AS status, a.template::text AS template, a.model, a."createdAt",
       (SELECT count(*)::int FROM "Conversation" c WHERE c."agentId" = a.id) AS conversations,
       (SELECT count(*)::int FROM "Intent" i WHERE i."agentId" = a.id) AS intents,
       (SELECT count(*)::int FROM "Channel" ch WHERE ch."agentId" = a.id) AS numbers
     FROM "Agent" a
     WHERE a."workspaceId" = $1 ${after}
     ORDER BY a."createdAt", a.id
     LIMIT $2`,
    ...params,
  );
  return rows.map(({ conversations, intents, numbers, ...a }) => ({
    ...a,
    _count: { conversations, intents, numbers },
  }));
}
