/** The SQL of replays (declared statements: src/db/statement.ts). */
import { Prisma } from "../generated/prisma/client.ts";
import { col, command, query } from "../db/statement.ts";
import {
  agentJson,
  type HistoryMessage,
  mediaJson,
  type PendingMessage,
  type ReplyIntent,
  replyIntentsJson,
} from "../conversations/sql.ts";
import { type ReplayAgent, REPLAYED_COLUMNS } from "./changes.ts";
import type { TagEffects } from "../conversations/intent_tags.ts";

const at0 = new Date(0);

/**
 * Where a replay's job starts, its replay row locked: the replay's run and status, its approval
 * (null once gone), and the agent of the replay as a reply reads it (null once gone or of another
 * workspace) with its intents, its latest `limit` conversations with a model reply (an AI message
 * carrying the model's token usage: reminders carry none), newest activity first, and its pinned
 * conversations, oldest pin first.
 */
export const replayStart = query(
  {
    run: col.integer,
    status: col.text,
    approvalId: col.text.null,
    workspaceId: col.text.null,
    approvalAgentId: col.text.null,
    approvalStatus: col.text.null,
    expiresAt: col.timestamptz.null,
    after: col.jsonb<unknown>().null,
    agent: col.json<ReplayAgent>().null,
    intents: col.json<ReplyIntent[]>().null,
    latest: col.json<string[]>().null,
    pins: col.json<string[]>().null,
  },
  ({ replayId, limit }: { replayId: string; limit: number }) =>
    Prisma.sql`
    SELECT r.run, r.status::text AS status, p.id AS "approvalId", p."workspaceId", p."agentId" AS "approvalAgentId",
           p.status::text AS "approvalStatus", p."expiresAt", p.after,
           CASE WHEN a.id IS NOT NULL THEN ${agentJson(["id", "name", ...REPLAYED_COLUMNS])} END AS agent,
           CASE WHEN a.id IS NOT NULL THEN ${replyIntentsJson} END AS intents,
           CASE WHEN a.id IS NOT NULL THEN (
             SELECT COALESCE(json_agg(l.id ORDER BY l."lastMessageAt" DESC, l.id DESC), '[]') FROM (
               SELECT c.id, c."lastMessageAt" FROM "Conversation" c
                WHERE c."agentId" = a.id
                  AND EXISTS (SELECT 1 FROM "Message" m WHERE m."conversationId" = c.id AND m."senderKind" = 'AI'
                                AND m."inputTokens" IS NOT NULL)
                ORDER BY c."lastMessageAt" DESC, c.id DESC LIMIT ${limit}) l) END AS latest,
           CASE WHEN a.id IS NOT NULL THEN (
             SELECT COALESCE(json_agg(x."conversationId" ORDER BY x."createdAt", x.id), '[]')
               FROM "ReplayPin" x WHERE x."agentId" = a.id) END AS pins
      FROM "ApprovalReplay" r
      LEFT JOIN "PendingApproval" p ON p."replayId" = r.id
      LEFT JOIN "Agent" a ON a.id = r."agentId" AND a."workspaceId" = p."workspaceId"
     WHERE r.id = ${replayId}
       FOR UPDATE OF r`,
  [{ replayId: "r", limit: 1 }],
);

/** A case as a run's start stores it (PENDING, or FAILED with `error` when there is nothing to ask). */
export interface StartedCase {
  id: string;
  position: number;
  conversationId: string;
  pinned: boolean;
  status: "PENDING" | "FAILED";
  customerMessages: string[];
  storedReply: string;
  storedEffects: TagEffects;
  error: string | null;
}

/** Removes the cases of a replay's earlier run. */
export const clearCases = command(
  ({ replayId }: { replayId: string }) =>
    Prisma.sql`DELETE FROM "ApprovalReplayCase" WHERE "replayId" = ${replayId}`,
  [{ replayId: "r" }],
);

/**
 * Stores a run's cases and starts the run: its counts reset (the FAILED cases done already),
 * RUNNING, or DONE at `now` when no case is left to ask.
 */
export const storeCases = command(
  ({ replayId, cases, now }: { replayId: string; cases: StartedCase[]; now: Date }) => {
    const failed = cases.filter((c) => c.status === "FAILED").length;
    const ended = failed === cases.length;
    return Prisma.sql`
    WITH stored AS (
      INSERT INTO "ApprovalReplayCase" (id, "replayId", position, "conversationId", pinned, status,
             "customerMessages", "storedReply", "storedEffects", error)
      SELECT x.id, ${replayId}, x.position, x."conversationId", x.pinned, x.status::"ReplayCaseStatus",
             ARRAY(SELECT json_array_elements_text(x."customerMessages")), x."storedReply",
             x."storedEffects"::jsonb, x.error
        FROM json_to_recordset(${
      JSON.stringify(cases)
    }::json) AS x(id text, position int, "conversationId" text,
             pinned boolean, status text, "customerMessages" json, "storedReply" text, "storedEffects" json,
             error text))
    UPDATE "ApprovalReplay" SET status = ${
      ended ? "DONE" : "RUNNING"
    }::"ReplayStatus", total = ${cases.length},
           done = ${failed}, failed = ${failed}, same = 0, changed = 0, regressed = 0, error = NULL,
           "startedAt" = ${now}, "finishedAt" = ${ended ? now : null}
     WHERE id = ${replayId}`;
  },
  [{ replayId: "r", cases: [], now: at0 }],
);

/** Ends a replay's `run` while under way: DONE, or FAILED with `error`. */
export const endReplayRun = command(
  ({ replayId, run, error, now }: { replayId: string; run: number; error: string | null; now: Date }) =>
    Prisma.sql`
    UPDATE "ApprovalReplay" SET status = ${error ? "FAILED" : "DONE"}::"ReplayStatus", error = ${error},
           "finishedAt" = ${now}
     WHERE id = ${replayId} AND run = ${run} AND status IN ('PENDING', 'RUNNING')`,
  [{ replayId: "r", run: 1, error: null, now: at0 }],
);

/**
 * What each conversation of `ids` (in that order, those of the agent only) gives a replay: its
 * latest model reply, found by the reply's own marks (the customer messages it answered carry
 * `answeredAt` = its first part's `createdAt`, and its parts follow 1 ms apart, the later ones with
 * 0 tokens: conversations/outbound.ts storeOutgoing), with
 * - `storedReply`: its parts, joined by a blank line (null: the conversation has no model reply);
 * - `pending`: the customer messages it answered, as the reply read them;
 * - `history`: the latest `historyMessages` messages before it, as the reply read them (customer
 *   messages answered later were not yet history then);
 * - `intents`: the `intent.fired` events of that reply: after the previous reply's answer and
 *   not before its own last customer message (a reply fires intents after its claim, which read
 *   that message), up to its answer;
 * - `transfer`: the summary of its `<transferir>` tag's `human.transferred` (reason TAG), published in
 *   the transaction that stored it (so within a minute after, and before the next answer).
 */
export const caseSources = query(
  {
    conversationId: col.text,
    contactName: col.text,
    repliedAt: col.timestamptz.null,
    storedReply: col.text.null,
    pending: col.json<PendingMessage[]>(),
    history: col.json<HistoryMessage[]>(),
    intents: col.json<TagEffects["intents"]>(),
    transfer: col.text.null,
  },
  ({ agentId, ids, historyMessages }: { agentId: string; ids: string[]; historyMessages: number }) =>
    Prisma.sql`
    SELECT v.id AS "conversationId", ct.name AS "contactName", r.at AS "repliedAt",
           CASE WHEN r.at IS NOT NULL THEN (
             SELECT string_agg(p.content, E'\n\n' ORDER BY p.rn) FROM (
               SELECT m.content, m."createdAt", m."inputTokens", row_number() OVER (ORDER BY m."createdAt", m.id) AS rn
                 FROM "Message" m
                WHERE m."conversationId" = c.id AND m."senderKind" = 'AI' AND m."inputTokens" IS NOT NULL
                  AND m."createdAt" >= r.at AND m."createdAt" < r.at + interval '1 second') p
              WHERE p."createdAt" = r.at + (p.rn - 1) * interval '1 millisecond' AND (p.rn = 1 OR p."inputTokens" = 0))
           END AS "storedReply",
           (SELECT COALESCE(json_agg(json_build_object('id', m.id, 'type', m.type, 'content', m.content,
                     'media', ${mediaJson("m")}, 'transcript', m.transcript, 'text', m.text)
                     ORDER BY m."createdAt", m.id), '[]')
              FROM "Message" m
             WHERE m."conversationId" = c.id AND m."senderKind" = 'CUSTOMER' AND m."answeredAt" = r.at) AS pending,
           (SELECT COALESCE(json_agg(json_build_object('id', h.id, 'sender', h."senderKind", 'content', h.content,
                     'type', h.type, 'media', ${mediaJson("h")}, 'transcript', h.transcript, 'text', NULL)
                     ORDER BY h."createdAt", h.id), '[]')
              FROM (SELECT m.id, m."senderKind", m.content, m."createdAt", m.type, m."mediaId", m."mediaPending",
                           m."mediaError", m."mediaFileName", m."mediaCaption", m."mediaMimeType", m.transcript
                      FROM "Message" m
                     WHERE m."conversationId" = c.id AND m."createdAt" < r.at
                       AND (m."senderKind" <> 'CUSTOMER' OR m."answeredAt" < r.at)
                     ORDER BY m."createdAt" DESC, m.id DESC LIMIT ${historyMessages}) h) AS history,
           (SELECT COALESCE(json_agg(json_build_object('name', e.payload->'data'->>'intentName',
                     'fields', COALESCE(e.payload->'data'->'fields', '{}'::jsonb)) ORDER BY e."createdAt", e.id), '[]')
              FROM "DomainEvent" e
             WHERE e."conversationId" = c.id AND e.type = 'intent.fired' AND e."createdAt" <= r.at
               AND e."createdAt" > COALESCE(prev.at, '-infinity'::timestamptz)
               AND e."createdAt" >= (SELECT max(m."createdAt") FROM "Message" m
                                      WHERE m."conversationId" = c.id AND m."senderKind" = 'CUSTOMER'
                                        AND m."answeredAt" = r.at)) AS intents,
           (SELECT e.payload->'data'->>'transferSummary' FROM "DomainEvent" e
             WHERE e."conversationId" = c.id AND e.type = 'human.transferred'
               AND e.payload->'data'->>'reason' = 'TAG' AND e."createdAt" >= r.at
               AND e."createdAt" < LEAST(COALESCE(nx.at, 'infinity'::timestamptz), r.at + interval '1 minute')
             ORDER BY e."createdAt", e.id LIMIT 1) AS transfer
      FROM unnest(${ids}::text[]) WITH ORDINALITY AS v(id, n)
      JOIN "Conversation" c ON c.id = v.id AND c."agentId" = ${agentId}
      JOIN "Contact" ct ON ct.id = c."contactId"
      LEFT JOIN LATERAL (
        SELECT m."createdAt" AS at FROM "Message" m
         WHERE m."conversationId" = c.id AND m."senderKind" = 'AI' AND m."inputTokens" IS NOT NULL
           AND EXISTS (SELECT 1 FROM "Message" q WHERE q."conversationId" = c.id AND q."senderKind" = 'CUSTOMER'
                         AND q."answeredAt" = m."createdAt")
         ORDER BY m."createdAt" DESC, m.id DESC LIMIT 1) r ON true
      LEFT JOIN LATERAL (
        SELECT max(q."answeredAt") AS at FROM "Message" q
         WHERE q."conversationId" = c.id AND q."senderKind" = 'CUSTOMER' AND q."answeredAt" < r.at) prev ON true
      LEFT JOIN LATERAL (
        SELECT min(q."answeredAt") AS at FROM "Message" q
         WHERE q."conversationId" = c.id AND q."senderKind" = 'CUSTOMER' AND q."answeredAt" > r.at) nx ON true
     ORDER BY v.n`,
  [{ agentId: "a", ids: ["c"], historyMessages: 1 }],
);

/**
 * Where a replay's run stands: its approval's state, and whether `run` is still its run and under
 * way (a rerun starts another; a decision ends it).
 */
export const replayState = query(
  { current: col.boolean, status: col.text.null, expiresAt: col.timestamptz.null },
  ({ replayId, run }: { replayId: string; run: number }) =>
    Prisma.sql`
    SELECT r.run = ${run} AND r.status = 'RUNNING' AS current, a.status::text AS status, a."expiresAt"
      FROM "ApprovalReplay" r LEFT JOIN "PendingApproval" a ON a."replayId" = r.id
     WHERE r.id = ${replayId}`,
  [{ replayId: "r", run: 1 }],
);

/** A case's outcome, as finishCase writes it. */
export interface CaseOutcome {
  status: "DONE" | "FAILED";
  currentReply: string | null;
  proposedReply: string | null;
  currentEffects: TagEffects | null;
  proposedEffects: TagEffects | null;
  verdict: "SAME" | "CHANGED" | "REGRESSED" | null;
  reason: string | null;
  error: string | null;
}

/**
 * Ends a PENDING case of the replay's `run`, while under way, with its outcome and counts it; adds the usage
 * and credits of its model calls to the replay (whatever the run: they were spent) and to the
 * workspace's UTC day of credit use (no message counted: a replay is not a supervisor answer). The
 * sums stop at the columns' maximum rather than fail. Answers whether the case was recorded and its
 * approval's state (null once the approval is gone).
 */
export const finishCase = query(
  { recorded: col.boolean, status: col.text.null, expiresAt: col.timestamptz.null },
  ({ caseId, replayId, run, outcome, usage, credits, day }: {
    caseId: string;
    replayId: string;
    run: number;
    outcome: CaseOutcome;
    usage: { inputTokens: number; outputTokens: number };
    credits: number;
    day: Date;
  }) =>
    Prisma.sql`
    WITH c AS (
      UPDATE "ApprovalReplayCase" SET status = ${outcome.status}::"ReplayCaseStatus",
             "currentReply" = ${outcome.currentReply}, "proposedReply" = ${outcome.proposedReply},
             "currentEffects" = ${json(outcome.currentEffects)}::jsonb,
             "proposedEffects" = ${json(outcome.proposedEffects)}::jsonb,
             verdict = ${outcome.verdict}::"ReplayVerdict", reason = ${outcome.reason}, error = ${outcome.error}
       WHERE id = ${caseId} AND "replayId" = ${replayId} AND status = 'PENDING'
         AND EXISTS (SELECT 1 FROM "ApprovalReplay" x WHERE x.id = ${replayId} AND x.run = ${run}
                       AND x.status = 'RUNNING')
      RETURNING verdict, status
    ), r AS (
      UPDATE "ApprovalReplay" SET
             done = done + (SELECT count(*) FROM c)::int,
             same = same + (SELECT count(*) FROM c WHERE c.verdict = 'SAME')::int,
             changed = changed + (SELECT count(*) FROM c WHERE c.verdict = 'CHANGED')::int,
             regressed = regressed + (SELECT count(*) FROM c WHERE c.verdict = 'REGRESSED')::int,
             failed = failed + (SELECT count(*) FROM c WHERE c.status = 'FAILED')::int,
             "inputTokens" = LEAST("inputTokens"::bigint + ${usage.inputTokens}, 2147483647),
             "outputTokens" = LEAST("outputTokens"::bigint + ${usage.outputTokens}, 2147483647),
             credits = credits + ${credits}
       WHERE id = ${replayId}
      RETURNING "workspaceId"
    ), day AS (
      INSERT INTO "SupervisorCreditDay" ("workspaceId", "day", "messages", "inputTokens", "outputTokens",
        "cacheWriteTokens", "cacheReadTokens", "credits")
      SELECT r."workspaceId", ${day}::date, 0, ${usage.inputTokens}, ${usage.outputTokens}, 0, 0, ${credits}
        FROM r WHERE ${usage.inputTokens + usage.outputTokens}::int > 0
      ON CONFLICT ("workspaceId", "day") DO UPDATE SET
        "inputTokens" = LEAST("SupervisorCreditDay"."inputTokens"::bigint + EXCLUDED."inputTokens", 2147483647),
        "outputTokens" = LEAST("SupervisorCreditDay"."outputTokens"::bigint + EXCLUDED."outputTokens", 2147483647),
        "credits" = "SupervisorCreditDay"."credits" + EXCLUDED."credits"
    )
    SELECT EXISTS (SELECT 1 FROM c) AS recorded, a.status::text AS status, a."expiresAt"
      FROM (SELECT 1) one LEFT JOIN "PendingApproval" a ON a."replayId" = ${replayId}`,
  [{
    caseId: "c",
    replayId: "r",
    run: 1,
    outcome: {
      status: "DONE",
      currentReply: null,
      proposedReply: null,
      currentEffects: null,
      proposedEffects: null,
      verdict: null,
      reason: null,
      error: null,
    },
    usage: { inputTokens: 0, outputTokens: 0 },
    credits: 0,
    day: at0,
  }],
);

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
