/**
 * The two writes of a supervisor turn, one SQL statement each (a turn's latency is mostly round
 * trips to PostgreSQL): opening it (the conversation found or created, the person's message and
 * the answer's row stored, the history read) and settling it (the answer with its usage and
 * credits, and the day's credit use, together).
 */
import type { ActorContext } from "../context.ts";
import type { PricedUsage } from "./credits.ts";
import { storableJson, storableText } from "../shared/storable.ts";

export interface OpenedTurn {
  conversationId: string;
  /** The answer's row, empty until settled (approvals of the turn point at it). */
  replyId: string;
  /** The last `historySize` messages with content, oldest first, the person's new one last. */
  history: Array<{ role: "USER" | "ASSISTANT" | "TOOL"; content: string }>;
}

/**
 * Stores the person's message (at `at`) and the answer's empty row (1 ms later, so the history's
 * order is the turn's order) in the workspace's conversation, created when absent (ON CONFLICT:
 * concurrent first turns share one), and reads the history as it was before, plus the message.
 */
export async function openTurn(
  ctx: ActorContext,
  message: string,
  options: { at: Date; historySize: number },
): Promise<OpenedTurn> {
  const replyId = crypto.randomUUID();
  const answeredAt = new Date(options.at.getTime() + 1);
  // The history's SELECT sees the statement's snapshot: the messages before this turn's two rows.
  // An answer still being written (a concurrent turn's) has no content yet: it is not history.
  const [row] = await ctx.db.$queryRaw<Array<{ id: string; history: OpenedTurn["history"] | null }>>`
    WITH existing AS (
      SELECT id FROM "SupervisorConversation" WHERE "workspaceId" = ${ctx.actor.workspaceId}
    ), created AS (
      -- Only when absent (no write on every turn); DO UPDATE answers the id when a concurrent
      -- first turn inserted it meanwhile.
      INSERT INTO "SupervisorConversation" (id, "workspaceId", "createdAt")
      SELECT ${crypto.randomUUID()}, ${ctx.actor.workspaceId}, ${options.at}
       WHERE NOT EXISTS (SELECT 1 FROM existing)
      ON CONFLICT ("workspaceId") DO UPDATE SET "workspaceId" = EXCLUDED."workspaceId"
      RETURNING id
    ), c AS (
      SELECT id FROM existing UNION ALL SELECT id FROM created
    ), question AS (
      INSERT INTO "SupervisorMessage" (id, "conversationId", role, "authorUserId", content, "createdAt")
      SELECT ${crypto.randomUUID()}, c.id, 'USER', ${ctx.actor.userId}, ${message}, ${options.at} FROM c
    ), answer AS (
      INSERT INTO "SupervisorMessage" (id, "conversationId", role, content, "createdAt")
      SELECT ${replyId}, c.id, 'ASSISTANT', '', ${answeredAt} FROM c
    )
    SELECT c.id, (
      SELECT json_agg(json_build_object('role', h.role, 'content', h.content) ORDER BY h."createdAt", h.id)
        FROM (SELECT m.role, m.content, m."createdAt", m.id FROM "SupervisorMessage" m
               WHERE m."conversationId" = c.id AND m.content <> ''
               ORDER BY m."createdAt" DESC, m.id DESC LIMIT ${options.historySize - 1}) h
    ) AS history
    FROM c`;
  return {
    conversationId: row.id,
    replyId,
    history: [...(row.history ?? []), { role: "USER", content: message }],
  };
}

/** The answer as stored (every column but its conversation). */
export interface StoredAnswer {
  id: string;
  role: "ASSISTANT";
  authorUserId: null;
  content: string;
  toolCalls: unknown;
  inputTokens: number;
  outputTokens: number;
  cacheWriteTokens: number;
  cacheReadTokens: number;
  credits: number;
  createdAt: Date;
}

/**
 * Writes the answer and adds its usage to the workspace's UTC day of `at`, atomically (one
 * statement). The day is counted even when a reset erased the answer meanwhile: the tokens were
 * spent. Returns the answer, or null when it was erased.
 */
export async function settleAnswer(
  ctx: ActorContext,
  replyId: string,
  answer: { content: string; toolCalls: unknown; usage: PricedUsage; credits: number; at: Date },
): Promise<StoredAnswer | null> {
  const u = answer.usage;
  const day = new Date(Date.UTC(answer.at.getUTCFullYear(), answer.at.getUTCMonth(), answer.at.getUTCDate()));
  // The model's text may hold what PostgreSQL cannot store; nothing of it may fail the write.
  const content = storableText(answer.content);
  const toolCalls = answer.toolCalls === null ? null : JSON.stringify(storableJson(answer.toolCalls));
  // One row per workspace and day, added to atomically: concurrent answers never lose a sum. The
  // sums stop at the columns' maximum (2147483647, integer) rather than fail the answer.
  const rows = await ctx.db.$queryRaw<StoredAnswer[]>`
    WITH day AS (
      INSERT INTO "SupervisorCreditDay" ("workspaceId", "day", "messages", "inputTokens", "outputTokens",
        "cacheWriteTokens", "cacheReadTokens", "credits")
      VALUES (${ctx.actor.workspaceId}, ${day}::date, 1, ${u.inputTokens}, ${u.outputTokens},
        ${u.cacheWriteTokens}, ${u.cacheReadTokens}, ${answer.credits})
      ON CONFLICT ("workspaceId", "day") DO UPDATE SET
        "messages" = LEAST("SupervisorCreditDay"."messages"::bigint + 1, 2147483647),
        "inputTokens" = LEAST("SupervisorCreditDay"."inputTokens"::bigint + EXCLUDED."inputTokens", 2147483647),
        "outputTokens" = LEAST("SupervisorCreditDay"."outputTokens"::bigint + EXCLUDED."outputTokens", 2147483647),
        "cacheWriteTokens" =
          LEAST("SupervisorCreditDay"."cacheWriteTokens"::bigint + EXCLUDED."cacheWriteTokens", 2147483647),
        "cacheReadTokens" =
          LEAST("SupervisorCreditDay"."cacheReadTokens"::bigint + EXCLUDED."cacheReadTokens", 2147483647),
        "credits" = "SupervisorCreditDay"."credits" + EXCLUDED."credits"
    )
    UPDATE "SupervisorMessage" SET content = ${content}, "toolCalls" = ${toolCalls}::jsonb,
      "inputTokens" = ${u.inputTokens}, "outputTokens" = ${u.outputTokens},
      "cacheWriteTokens" = ${u.cacheWriteTokens}, "cacheReadTokens" = ${u.cacheReadTokens},
      credits = ${answer.credits}
    WHERE id = ${replyId}
    RETURNING id, role::text AS role, "authorUserId", content, "toolCalls", "inputTokens", "outputTokens",
      "cacheWriteTokens", "cacheReadTokens", credits, "createdAt"`;
  return rows[0] ?? null;
}

/** Removes the answer's row of a turn that failed before any model answer or approval. */
export async function dropAnswer(ctx: ActorContext, replyId: string): Promise<void> {
  await ctx.db.supervisorMessage.deleteMany({ where: { id: replyId } });
}
