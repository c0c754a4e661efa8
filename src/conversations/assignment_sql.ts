/**
 * The SQL of assignment and unread counts (./assignment.ts; the Conversation type's `unread`):
 * a member's unread messages are the conversation's customer messages stored after the member's
 * read marker (ConversationRead.readAt), all of them without one. A partial index on the customer
 * messages (migration 20261130090000) makes the count read that index alone.
 */
import { Prisma } from "../generated/prisma/client.ts";
import type { SqlTx } from "../db/client.ts";
import { col, query } from "../db/statement.ts";
import { type Sql, sql } from "../shared/sql_fragment.ts";
import type { CallerSql } from "../shared/view.ts";

/** The caller's unread count of the conversation aliased `t` (NULL for an API token), for the planner. */
export const unreadSql = (t: Sql, caller: CallerSql): Sql =>
  sql`CASE WHEN ${caller.user} IS NULL THEN NULL ELSE (SELECT count(*)::int FROM "Message" um
    WHERE um."conversationId" = ${t}.id AND um."senderKind" = 'CUSTOMER' AND um."createdAt" > COALESCE(
      (SELECT ur."readAt" FROM "ConversationRead" ur WHERE ur."conversationId" = ${t}.id
          AND ur."userId" = ${caller.user}), '-infinity')) END`;

/**
 * unreadSql's count in a Prisma statement, for `userId`, of the conversation whose id `conversation`
 * gives: the one place outside the planner that says what is unread (inbox_test holds the two to
 * the same answers).
 */
const unreadCount = (conversation: Prisma.Sql, userId: string) =>
  Prisma.sql`(SELECT count(*)::int FROM "Message" um
    WHERE um."conversationId" = ${conversation} AND um."senderKind" = 'CUSTOMER' AND um."createdAt" > COALESCE(
      (SELECT ur."readAt" FROM "ConversationRead" ur WHERE ur."conversationId" = ${conversation}
          AND ur."userId" = ${userId}), '-infinity'))`;

/**
 * What waits for a member: the conversations not CLOSED that they hold, or HUMAN ones nobody holds,
 * with their unread messages summed (the console's title count) and those with any counted.
 */
export const waitingUnread = query(
  { unread: col.integer, conversations: col.integer },
  ({ workspaceId, userId }: { workspaceId: string; userId: string }) =>
    Prisma.sql`
    SELECT COALESCE(sum(w.n), 0)::int AS unread, count(*) FILTER (WHERE w.n > 0)::int AS conversations
      FROM (SELECT ${unreadCount(Prisma.sql`c.id`, userId)} AS n
              FROM "Conversation" c
             WHERE c."workspaceId" = ${workspaceId} AND c.status <> 'CLOSED'
               AND (c."assignedUserId" = ${userId} OR (c."assignedUserId" IS NULL AND c.status = 'HUMAN'))) w`,
  [{ workspaceId: "w", userId: "u" }],
);

/** The same count for one conversation, outside the planner; null without a member. */
export async function unreadOf(
  db: SqlTx,
  conversationId: string,
  userId: string | null,
): Promise<number | null> {
  if (userId === null) return null;
  const [row] = await db.$queryRaw<Array<{ n: number }>>(
    Prisma.sql`SELECT ${unreadCount(Prisma.sql`${conversationId}`, userId)} AS n`,
  );
  return row.n;
}

/**
 * The member has read the conversation (of the workspace) up to now: its marker moves to `now`, or to
 * its latest message when that is later (a message stamped by another process' clock is read too),
 * never back. False when the conversation is not the workspace's.
 */
export async function markRead(
  db: SqlTx,
  { workspaceId, conversationId, userId, now }: {
    workspaceId: string;
    conversationId: string;
    userId: string;
    now: Date;
  },
): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>(Prisma.sql`
    INSERT INTO "ConversationRead" ("conversationId", "userId", "readAt")
    SELECT c.id, ${userId}, GREATEST(${now}::timestamptz,
             (SELECT max(m."createdAt") FROM "Message" m WHERE m."conversationId" = c.id))
      FROM "Conversation" c WHERE c.id = ${conversationId} AND c."workspaceId" = ${workspaceId}
    ON CONFLICT ("conversationId", "userId")
      DO UPDATE SET "readAt" = GREATEST("ConversationRead"."readAt", EXCLUDED."readAt")
    RETURNING 1`);
  return rows.length === 1;
}

/**
 * Sets the conversation's assignee in one statement, unless it is CLOSED: the row is locked and
 * read as it was, and a member given must still be a member of the workspace who may attend
 * (not a VIEWER), checked under a lock that a concurrent removal waits for (and the other way
 * round), so a removed member is never left holding a conversation. Answers the assignee before,
 * or `missing` (no such conversation of the workspace), `closed`, or `notMember`.
 */
export async function setAssignee(
  tx: SqlTx,
  { workspaceId, conversationId, userId, now }: {
    workspaceId: string;
    conversationId: string;
    userId: string | null;
    now: Date;
  },
): Promise<{ before: string | null; agentId: string } | "missing" | "closed" | "notMember"> {
  const [row] = await tx.$queryRaw<
    Array<{ status: string; before: string | null; agentId: string; member: boolean; changed: boolean }>
  >(Prisma.sql`
    WITH old AS (
      SELECT id, status, "agentId", "assignedUserId" AS before FROM "Conversation"
       WHERE id = ${conversationId} AND "workspaceId" = ${workspaceId} FOR UPDATE),
    member AS (
      SELECT ${userId}::text IS NULL OR EXISTS (
        SELECT 1 FROM "Membership" ms WHERE ms."workspaceId" = ${workspaceId} AND ms."userId" = ${userId}
           AND ms.role <> 'VIEWER' FOR KEY SHARE) AS ok),
    changed AS (
      UPDATE "Conversation" c SET "assignedUserId" = ${userId}, "updatedAt" = ${now}
        FROM old, member
       WHERE c.id = old.id AND old.status <> 'CLOSED' AND member.ok
         AND c."assignedUserId" IS DISTINCT FROM ${userId}::text
      RETURNING c.id)
    SELECT old.status::text AS status, old.before, old."agentId", member.ok AS member,
           EXISTS (SELECT 1 FROM changed) AS changed
      FROM old, member`);
  if (!row) return "missing";
  if (row.status === "CLOSED") return "closed";
  if (!row.member) return "notMember";
  return { before: row.before, agentId: row.agentId };
}
