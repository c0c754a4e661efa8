/** The SQL of a supervisor turn (declared statements: src/db/statement.ts). */
import { Prisma } from "../generated/prisma/client.ts";
import { col, query } from "../db/statement.ts";
import type { PricedUsage } from "./credits.ts";

/** The history's messages, oldest first. */
export type TurnHistory = Array<{ role: "USER" | "ASSISTANT" | "TOOL"; content: string }>;

/**
 * Opens a turn: the workspace's conversation found, or created when absent (ON CONFLICT:
 * concurrent first turns share one), the person's message and the answer's empty row stored, and
 * the history read as it was before (the statement's snapshot): the last `historySize - 1`
 * messages with content (an answer still being written, a concurrent turn's, has none yet).
 */
export const openTurnStatement = query(
  { id: col.text, history: col.json<TurnHistory>().null },
  ({ workspaceId, conversationId, questionId, userId, message, at, replyId, answeredAt, historySize }: {
    workspaceId: string;
    conversationId: string;
    questionId: string;
    userId: string | null;
    message: string;
    at: Date;
    replyId: string;
    answeredAt: Date;
    historySize: number;
  }) =>
    Prisma.sql`
    WITH existing AS (
      SELECT id FROM "SupervisorConversation" WHERE "workspaceId" = ${workspaceId}
    ), created AS (
      -- Only when absent (no write on every turn); DO UPDATE answers the id when a concurrent
      -- first turn inserted it meanwhile.
      INSERT INTO "SupervisorConversation" (id, "workspaceId", "createdAt")
      SELECT ${conversationId}, ${workspaceId}, ${at}
       WHERE NOT EXISTS (SELECT 1 FROM existing)
      ON CONFLICT ("workspaceId") DO UPDATE SET "workspaceId" = EXCLUDED."workspaceId"
      RETURNING id
    ), c AS (
      SELECT id FROM existing UNION ALL SELECT id FROM created
    ), question AS (
      INSERT INTO "SupervisorMessage" (id, "conversationId", role, "authorUserId", content, "createdAt")
      SELECT ${questionId}, c.id, 'USER', ${userId}, ${message}, ${at} FROM c
    ), answer AS (
      INSERT INTO "SupervisorMessage" (id, "conversationId", role, content, "createdAt")
      SELECT ${replyId}, c.id, 'ASSISTANT', '', ${answeredAt} FROM c
    )
    SELECT c.id, (
      SELECT json_agg(json_build_object('role', h.role, 'content', h.content) ORDER BY h."createdAt", h.id)
        FROM (SELECT m.role, m.content, m."createdAt", m.id FROM "SupervisorMessage" m
               WHERE m."conversationId" = c.id AND m.content <> ''
               ORDER BY m."createdAt" DESC, m.id DESC LIMIT ${historySize - 1}) h
    ) AS history
    FROM c`,
  [{
    workspaceId: "w",
    conversationId: "c",
    questionId: "q",
    userId: null,
    message: "m",
    at: new Date(0),
    replyId: "r",
    answeredAt: new Date(0),
    historySize: 1,
  }],
);

/**
 * Settles a turn's answer: its content, usage and credits written, and its usage added to the
 * workspace's UTC day (one row per workspace and day, added to atomically: concurrent answers never
 * lose a sum; the sums stop at the columns' maximum, 2147483647, rather than fail the answer). The
 * day is counted even when the answer was erased meanwhile (no row back): the tokens were spent.
 */
export const settleAnswerStatement = query(
  {
    id: col.text,
    role: col.text,
    authorUserId: col.text.null,
    content: col.text,
    toolCalls: col.jsonb<unknown>().null,
    inputTokens: col.integer,
    outputTokens: col.integer,
    cacheWriteTokens: col.integer,
    cacheReadTokens: col.integer,
    credits: col.float,
    createdAt: col.timestamptz,
  },
  ({ workspaceId, day, u, credits, content, toolCalls, replyId }: {
    workspaceId: string;
    day: Date;
    u: PricedUsage;
    credits: number;
    content: string;
    toolCalls: string | null;
    replyId: string;
  }) =>
    Prisma.sql`
    WITH day AS (
      INSERT INTO "SupervisorCreditDay" ("workspaceId", "day", "messages", "inputTokens", "outputTokens",
        "cacheWriteTokens", "cacheReadTokens", "credits")
      VALUES (${workspaceId}, ${day}::date, 1, ${u.inputTokens}, ${u.outputTokens},
        ${u.cacheWriteTokens}, ${u.cacheReadTokens}, ${credits})
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
      credits = ${credits}
    WHERE id = ${replyId}
    RETURNING id, role::text AS role, "authorUserId", content, "toolCalls", "inputTokens", "outputTokens",
      "cacheWriteTokens", "cacheReadTokens", credits, "createdAt"`,
  [{
    workspaceId: "w",
    day: new Date(0),
    u: { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 } as PricedUsage,
    credits: 0,
    content: "",
    toolCalls: null,
    replyId: "r",
  }],
);
