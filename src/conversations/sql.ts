/**
 * The SQL of the conversations' hot paths (declared statements: src/db/statement.ts): storing a
 * customer message (receive.ts), the reply's claim, release and sweep (pipeline/reply.ts), and the
 * outgoing messages' insert, claims and outcomes (outbound.ts). The callers keep the comments on
 * why each statement is shaped as it is; here is what each one does.
 */
import { type Agent, Prisma } from "../generated/prisma/client.ts";
import type { MessageStatus, MessageType, SenderKind } from "../generated/prisma/enums.ts";
import { col, command, query } from "../db/statement.ts";
import { LIVE_INSTANCES } from "../db/instance.ts";
import type { UnderstoodMessage } from "../media/understanding.ts";
import type { PromptIntent, PromptMessage } from "./prompt.ts";

const at0 = new Date(0);

// --- Storing a customer message (receive.ts) ---

/** The contact upserted by (workspace, externalId); always takes its row lock (DO UPDATE). */
export const upsertContact = query(
  { id: col.text },
  ({ id, workspaceId, externalId, name, now }: {
    id: string;
    workspaceId: string;
    externalId: string;
    name: string | null;
    now: Date;
  }) =>
    Prisma.sql`
    INSERT INTO "Contact" (id, "workspaceId", "externalId", name, "createdAt")
    VALUES (${id}, ${workspaceId}, ${externalId},
            ${name ?? externalId}, ${now})
    ON CONFLICT ("workspaceId", "externalId")
    DO UPDATE SET name = COALESCE(${name}::text, "Contact".name)
    RETURNING id`,
  [{ id: "i", workspaceId: "w", externalId: "x", name: null, now: at0 }],
);

/**
 * Whether the message is stored already, the contact's OPEN or HUMAN conversation on the channel,
 * and, when the message is new, the conversation opened for it (when there is none) and the
 * message itself. `id` and the message's columns are null when it was stored already.
 */
export const storeCustomerMessage = query(
  {
    stored: col.boolean,
    open: col.text.null,
    id: col.text.null,
    conversationId: col.text,
    senderKind: col.enum<SenderKind>("SenderKind"),
    senderUserId: col.text.null,
    type: col.enum<MessageType>("MessageType"),
    content: col.text,
    status: col.enum<MessageStatus>("MessageStatus"),
    error: col.jsonb<Prisma.JsonValue>().null,
    mediaId: col.text.null,
    mediaMimeType: col.text.null,
    mediaSize: col.integer.null,
    mediaFileName: col.text.null,
    mediaError: col.text.null,
    transcript: col.text.null,
    text: col.text.null,
    payload: col.jsonb<Prisma.JsonValue>().null,
    pricing: col.jsonb<Prisma.JsonValue>().null,
    template: col.jsonb<Prisma.JsonValue>().null,
    inputTokens: col.integer.null,
    outputTokens: col.integer.null,
    createdAt: col.timestamptz,
  },
  (m: {
    channelId: string;
    externalId: string | null;
    contactId: string;
    conversationId: string;
    workspaceId: string;
    agentId: string;
    now: Date;
    messageId: string;
    type: MessageType;
    content: string;
    mediaId: string | null;
    mediaMimeType: string | null;
    mediaFileName: string | null;
    mediaCaption: string | null;
    mediaPending: boolean;
    payload: string | null;
  }) =>
    Prisma.sql`
    WITH found AS (
      SELECT (${m.externalId}::text IS NOT NULL AND EXISTS (
                SELECT 1 FROM "Message" WHERE "channelId" = ${m.channelId} AND "externalId" = ${m.externalId}::text
              )) AS stored,
             (SELECT id FROM "Conversation"
               WHERE "channelId" = ${m.channelId} AND "contactId" = ${m.contactId} AND status IN ('OPEN', 'HUMAN')
               ORDER BY "createdAt" DESC, id DESC LIMIT 1) AS open
    ), opened AS (
      INSERT INTO "Conversation" (id, "workspaceId", "agentId", "channelId", "contactId", status, "openedAt",
                                  "lastMessageAt", "lastContactMessageAt", "createdAt", "updatedAt")
      SELECT ${m.conversationId}::text, ${m.workspaceId}::text, ${m.agentId}::text, ${m.channelId}::text,
             ${m.contactId}::text, 'OPEN', t.now, t.now, t.now, t.now, t.now
        FROM found, (SELECT ${m.now}::timestamptz AS now) t WHERE NOT stored AND open IS NULL
    ), inserted AS (
      INSERT INTO "Message" (id, "conversationId", "channelId", direction, "senderKind", type, content, "mediaId",
                             "mediaMimeType", "mediaFileName", "mediaCaption", "mediaPending", payload, status,
                             "externalId", "createdAt", "updatedAt")
      SELECT ${m.messageId}::text, COALESCE(open, ${m.conversationId}::text), ${m.channelId}::text, 'INBOUND', 'CUSTOMER',
             ${m.type}::"MessageType", ${m.content}::text, ${m.mediaId}::text, ${m.mediaMimeType}::text,
             ${m.mediaFileName}::text, ${m.mediaCaption}::text, ${m.mediaPending}::boolean,
             ${m.payload}::jsonb, 'RECEIVED', ${m.externalId}::text, t.now, t.now
        FROM found, (SELECT ${m.now}::timestamptz AS now) t WHERE NOT stored
      ON CONFLICT ("channelId", "externalId") DO NOTHING
      RETURNING id, "conversationId", "senderKind", "senderUserId", type, content, status, error, "mediaId",
                "mediaMimeType", "mediaSize", "mediaFileName", "mediaError", transcript, text, payload, pricing, template,
                "inputTokens", "outputTokens", "createdAt"
    ), touched AS (
      UPDATE "Conversation" SET "lastMessageAt" = ${m.now}, "lastContactMessageAt" = ${m.now}, "updatedAt" = ${m.now}
       WHERE id = (SELECT open FROM found) AND EXISTS (SELECT 1 FROM inserted)
    )
    SELECT f.stored, f.open, i.* FROM found f LEFT JOIN inserted i ON true`,
  [{
    channelId: "ch",
    externalId: null,
    contactId: "ct",
    conversationId: "c",
    workspaceId: "w",
    agentId: "a",
    now: at0,
    messageId: "m",
    type: "TEXT",
    content: "",
    mediaId: null,
    mediaMimeType: null,
    mediaFileName: null,
    mediaCaption: null,
    mediaPending: false,
    payload: null,
  }],
);

// --- The reply (pipeline/reply.ts) ---

/** The agent's columns the reply reads (one JSON object of the claim's row). */
const REPLY_AGENT_COLUMNS = [
  "id",
  "name",
  "status",
  "systemPrompt",
  "trainingContext",
  "model",
  "temperature",
  "enabledHumanTransfer",
  "splitMessages",
  "enabledEmoji",
  "signMessages",
  "maxDailyMessages",
  "autoCloseMinutes",
  "enabledReminder",
  "enabledVision",
] as const satisfies readonly (keyof Agent)[];

/** The agent as the reply reads it: its row's REPLY_AGENT_COLUMNS. */
export type ReplyAgent = Pick<Agent, typeof REPLY_AGENT_COLUMNS[number]>;

/** The JSON object of `columns` of the agent aliased `a`. */
export const agentJson = (columns: readonly (keyof Agent)[]) =>
  Prisma.raw(`json_build_object(${columns.map((c) => `'${c}', a."${c}"`).join(", ")})`);

const replyAgentJson = agentJson(REPLY_AGENT_COLUMNS);

/** The intents of the agent aliased `a` as the reply reads them (ReplyIntent[]), oldest first. */
export const replyIntentsJson = Prisma.sql`
           (SELECT COALESCE(json_agg(json_build_object('name', i.name, 'tag', i.tag, 'description', i.description,
                     'requiredFields', i."requiredFields", 'triggerOnTypes', i."triggerOnTypes"::text[],
                     'webhookUrl', i."webhookUrl", 'webhookMethod', i."webhookMethod")
                     ORDER BY i."createdAt", i.id), '[]')
              FROM "Intent" i WHERE i."agentId" = a.id)`;

/** An intent of the agent as the reply reads it. */
export interface ReplyIntent extends PromptIntent {
  triggerOnTypes: string[];
  webhookUrl: string;
  webhookMethod: string;
}

/** A customer message of the window, with what its media work found (src/media/understanding.ts). */
export type PendingMessage = UnderstoodMessage & {
  id: string;
  media: (UnderstoodMessage["media"] & { mimeType: string | null }) | null;
};

/** A message of the history before the window. */
export type HistoryMessage = UnderstoodMessage & { id: string; sender: PromptMessage["sender"] };

/** The media part of a message row as the reply reads it (null for messages without media work). */
export const mediaJson = (m: string) =>
  Prisma.raw(
    `CASE WHEN ${m}."mediaId" IS NOT NULL AND ${m}.type IN ('AUDIO', 'IMAGE', 'DOCUMENT') THEN json_build_object(` +
      `'pending', ${m}."mediaPending", 'error', ${m}."mediaError", 'fileName', ${m}."mediaFileName", ` +
      `'caption', ${m}."mediaCaption", 'mimeType', ${m}."mediaMimeType") END`,
  );

/**
 * Claims the conversation and reads what its reply needs: the conversation as it was before the
 * claim, its channel, contact and agent and, only on a won claim (null otherwise), the agent's
 * intents, the customer messages not yet handled, the history before them and (for an agent with
 * a daily limit) its AI messages to this contact in the day [dayStart, dayEnd). `mediaPending` is
 * read only on a lost claim.
 */
export const claimConversation = query(
  {
    claimed: col.boolean,
    dueAt: col.timestamptz.null,
    heldSince: col.timestamptz.null,
    mediaPending: col.boolean.null,
    id: col.text,
    workspaceId: col.text,
    agentId: col.text,
    status: col.text,
    channelId: col.text,
    channelType: col.text,
    contact: col.json<{ id: string; name: string }>(),
    contactExternalId: col.text,
    agent: col.json<ReplyAgent>(),
    intents: col.json<ReplyIntent[]>().null,
    pending: col.json<PendingMessage[]>().null,
    history: col.json<HistoryMessage[]>().null,
    sentToday: col.integer.null,
  },
  ({ id, claimedAt, claimedBy, staleBefore, mediaWaitedSince, dayStart, dayEnd, historyMessages }: {
    id: string;
    claimedAt: Date;
    claimedBy: number;
    staleBefore: Date;
    mediaWaitedSince: Date;
    dayStart: Date;
    dayEnd: Date;
    historyMessages: number;
  }) =>
    Prisma.sql`
    WITH claimed AS (
      UPDATE "Conversation" SET "replyClaimedAt" = ${claimedAt}, "replyClaimedBy" = ${claimedBy}
       WHERE id = ${id} AND "replyDueAt" <= ${claimedAt}
         AND ("replyClaimedAt" IS NULL OR "replyClaimedAt" < ${staleBefore})
         AND ("replyDueAt" <= ${mediaWaitedSince} OR NOT EXISTS (
               SELECT 1 FROM "Message" m WHERE m."conversationId" = ${id} AND m."mediaPending"))
      RETURNING id, status)
    SELECT cl.id IS NOT NULL AS claimed, c."replyDueAt" AS "dueAt", c."replyClaimedAt" AS "heldSince",
           CASE WHEN cl.id IS NULL THEN EXISTS (
             SELECT 1 FROM "Message" m WHERE m."conversationId" = c.id AND m."mediaPending") END AS "mediaPending",
           c.id, c."workspaceId", c."agentId", COALESCE(cl.status, c.status)::text AS status, c."channelId",
           ch.type::text AS "channelType",
           json_build_object('id', ct.id, 'name', ct.name) AS contact, ct."externalId" AS "contactExternalId",
           ${replyAgentJson} AS agent,
           CASE WHEN cl.id IS NOT NULL THEN ${replyIntentsJson} END AS intents,
           CASE WHEN cl.id IS NOT NULL THEN
           (SELECT COALESCE(json_agg(json_build_object('id', m.id, 'type', m.type, 'content', m.content,
                     'media', ${mediaJson("m")}, 'transcript', m.transcript, 'text', m.text)
                     ORDER BY m."createdAt", m.id), '[]')
              FROM "Message" m
             WHERE m."conversationId" = c.id AND m."senderKind" = 'CUSTOMER' AND m."answeredAt" IS NULL) END AS pending,
           CASE WHEN cl.id IS NOT NULL THEN
           (SELECT COALESCE(json_agg(json_build_object('id', h.id, 'sender', h."senderKind", 'content', h.content,
                     'type', h.type, 'media', ${mediaJson("h")}, 'transcript', h.transcript, 'text', NULL)
                     ORDER BY h."createdAt", h.id), '[]')
              FROM (SELECT m.id, m."senderKind", m.content, m."createdAt", m.type, m."mediaId", m."mediaPending",
                           m."mediaError", m."mediaFileName", m."mediaCaption", m."mediaMimeType", m.transcript
                      FROM "Message" m
                     WHERE m."conversationId" = c.id AND NOT (m."senderKind" = 'CUSTOMER' AND m."answeredAt" IS NULL)
                     ORDER BY m."createdAt" DESC, m.id DESC LIMIT ${historyMessages}) h) END AS history,
           CASE WHEN cl.id IS NOT NULL AND a."maxDailyMessages" IS NOT NULL THEN
           (SELECT count(*)::int FROM "Message" m JOIN "Conversation" mc ON mc.id = m."conversationId"
             WHERE m."senderKind" = 'AI' AND m."createdAt" >= ${dayStart} AND m."createdAt" < ${dayEnd}
               AND mc."agentId" = c."agentId" AND mc."contactId" = c."contactId") END AS "sentToday"
      FROM "Conversation" c
      LEFT JOIN claimed cl ON cl.id = c.id
      JOIN "Channel" ch ON ch.id = c."channelId"
      JOIN "Contact" ct ON ct.id = c."contactId"
      JOIN "Agent" a ON a.id = c."agentId"
     WHERE c.id = ${id}`,
  [{
    id: "c",
    claimedAt: at0,
    claimedBy: 1,
    staleBefore: at0,
    mediaWaitedSince: at0,
    dayStart: at0,
    dayEnd: at0,
    historyMessages: 1,
  }],
);

/**
 * The conversations the reply sweep hands to reply jobs: not CLOSED, with a customer message no
 * reply has handled, claimed (due when the claim of `ttlMs` would be stale) or unclaimed and due
 * before `overdue`; `at`: when the job should run.
 */
export const unansweredConversations = query(
  { id: col.text, at: col.timestamptz },
  ({ ttlMs, overdue, limit }: { ttlMs: number; overdue: Date; limit: number }) =>
    Prisma.sql`
    SELECT c.id, GREATEST(c."replyDueAt", c."replyClaimedAt" + ${ttlMs} * interval '1 millisecond') AS at
      FROM "Conversation" c
     WHERE c.id IN (SELECT m."conversationId" FROM "Message" m
                     WHERE m."senderKind" = 'CUSTOMER' AND m."answeredAt" IS NULL)
       AND c.status <> 'CLOSED' AND c."replyDueAt" IS NOT NULL
       AND (c."replyClaimedAt" IS NOT NULL OR c."replyDueAt" <= ${overdue})
     ORDER BY c."replyDueAt" LIMIT ${limit}`,
  [{ ttlMs: 1, overdue: at0, limit: 1 }],
);

/** The conversation's times as the reply's guard returns them (JSON: ISO strings). */
export interface GuardedTimes {
  lastMessageAt: string | null;
  lastContactMessageAt: string | null;
  lastAgentMessageAt: string | null;
  reminderSentAt: string | null;
}

/**
 * The reply's guard for storeOutgoing (a fragment of insertOutgoingGuarded): the messages `ids`
 * marked answered, and the conversation's times moved (`times`: the reply stores messages) if it
 * is still OPEN, which returns them (GuardedTimes).
 */
export function replyGuard(
  { now, ids, id, claimedAt, times }: {
    now: Date;
    ids: string[];
    id: string;
    claimedAt: Date;
    times: boolean;
  },
) {
  const moved = times ? Prisma.sql`"lastMessageAt" = ${now}, "lastAgentMessageAt" = ${now},` : Prisma.empty;
  return Prisma.sql`answered AS (
            UPDATE "Message" SET "answeredAt" = ${now}, "updatedAt" = ${now} WHERE id = ANY(${ids}::text[])),
          guard AS (
            UPDATE "Conversation" SET ${moved} "updatedAt" = ${now}
             WHERE id = ${id} AND status = 'OPEN' AND "replyClaimedAt" = ${claimedAt}
            RETURNING "lastMessageAt", "lastContactMessageAt", "lastAgentMessageAt", "reminderSentAt")`;
}

// --- Outgoing messages (outbound.ts) ---

/** Outgoing messages as columns (one array per column, one element per message). */
export interface OutgoingColumns {
  ids: string[];
  conversationIds: string[];
  channelIds: string[];
  senders: string[];
  senderUserIds: Array<string | null>;
  /** TEXT, or TEMPLATE (with its template and send payload, JSON). */
  types: string[];
  contents: string[];
  templates: Array<string | null>;
  payloads: Array<string | null>;
  statuses: string[];
  /** ISO times. */
  claimedAt: Array<string | null>;
  /** The process whose writer claimed the claimed ones (db/instance.ts). */
  claimedBy: number | null;
  inputTokens: Array<number | null>;
  outputTokens: Array<number | null>;
  /** ISO times. */
  createdAt: string[];
}

const outgoing: OutgoingColumns = {
  ids: ["m"],
  conversationIds: ["c"],
  channelIds: ["ch"],
  senders: ["AI"],
  senderUserIds: [null],
  types: ["TEXT"],
  contents: [""],
  templates: [null],
  payloads: [null],
  statuses: ["PENDING"],
  claimedAt: [null],
  claimedBy: null,
  inputTokens: [null],
  outputTokens: [null],
  createdAt: [at0.toISOString()],
};

function outgoingInsert(v: OutgoingColumns): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "Message" (id, "conversationId", "channelId", direction, "senderKind", "senderUserId", type, content,
                           template, payload, status, "sendClaimedAt", "sendClaimedBy", "inputTokens", "outputTokens",
                           "createdAt", "updatedAt")
    SELECT v.id, v.conversation, v.channel, 'OUTBOUND', v.sender::"SenderKind", v.author, v.type::"MessageType",
           v.content, v.template, v.payload, v.status::"MessageStatus", v.claimed,
           CASE WHEN v.claimed IS NOT NULL THEN ${v.claimedBy}::int END, v.input, v.output, v.at, v.at
      FROM unnest(${v.ids}::text[], ${v.conversationIds}::text[],
                  ${v.channelIds}::text[], ${v.senders}::text[],
                  ${v.senderUserIds}::text[], ${v.types}::text[], ${v.contents}::text[],
                  ${v.templates}::jsonb[], ${v.payloads}::jsonb[],
                  ${v.statuses}::text[], ${v.claimedAt}::timestamptz[],
                  ${v.inputTokens}::int[], ${v.outputTokens}::int[],
                  ${v.createdAt}::timestamptz[])
           AS v(id, conversation, channel, sender, author, type, content, template, payload, status, claimed, input,
                output, at)`;
}

/** Stores outgoing messages (TEXT or TEMPLATE, OUTBOUND), in one statement. */
export const insertOutgoing = command(outgoingInsert, [outgoing]);

/**
 * insertOutgoing behind the caller's CTEs, the last named `guard`: the messages are stored only
 * when `guard` returns a row, which comes back as `guarded` (null: nothing stored).
 */
export const insertOutgoingGuarded = query(
  { guarded: col.json<unknown>().null },
  ({ guard, messages }: { guard: Prisma.Sql; messages: OutgoingColumns }) =>
    Prisma.sql`
      WITH ${guard}, stored AS (${outgoingInsert(messages)} WHERE EXISTS (SELECT 1 FROM guard) RETURNING id)
      SELECT (SELECT row_to_json(guard) FROM guard) AS guarded`,
  [
    { guard: replyGuard({ now: at0, ids: ["m"], id: "c", claimedAt: at0, times: true }), messages: outgoing },
    {
      guard: replyGuard({ now: at0, ids: ["m"], id: "c", claimedAt: at0, times: false }),
      messages: outgoing,
    },
  ],
);

/**
 * The stale-send sweep: up to `limit` PENDING messages claimed before `staleBefore` (the call, if
 * begun, too); those whose call began become UNCONFIRMED, the others come back to be sent.
 */
export const staleSends = query(
  { id: col.text },
  ({ staleBefore, now, limit }: { staleBefore: Date; now: Date; limit: number }) =>
    Prisma.sql`
    WITH stale AS (
      SELECT id, "sendStartedAt" IS NOT NULL AS started FROM "Message"
       WHERE status = 'PENDING' AND "sendClaimedAt" IS NOT NULL AND "sendClaimedAt" <= ${staleBefore}
         AND ("sendStartedAt" IS NULL OR "sendStartedAt" <= ${staleBefore})
       ORDER BY "sendClaimedAt" LIMIT ${limit}
         FOR UPDATE SKIP LOCKED
    ), unconfirmed AS (
      UPDATE "Message" m SET status = 'UNCONFIRMED', "sendClaimedAt" = NULL, "sendStartedAt" = NULL,
             "updatedAt" = ${now}
        FROM stale WHERE m.id = stale.id AND stale.started
    )
    SELECT id FROM stale WHERE NOT started`,
  [{ staleBefore: at0, now: at0, limit: 1 }],
);

// --- Claims of processes that are gone (recovery.ts) ---

/** The claims' holders that are alive now (db/instance.ts). */
const LIVE = Prisma.raw(LIVE_INSTANCES);

/**
 * Frees up to `limit` reply claims whose process is gone (rows locked by others are left for the
 * next pass); returns the conversations, which get a reply job.
 */
export const releaseDeadReplyClaims = query(
  { id: col.text },
  ({ limit }: { limit: number }) =>
    Prisma.sql`
    UPDATE "Conversation" c SET "replyClaimedAt" = NULL, "replyClaimedBy" = NULL
      FROM (SELECT id FROM "Conversation"
             WHERE "replyClaimedAt" IS NOT NULL AND "replyClaimedBy" NOT IN (${LIVE})
             LIMIT ${limit} FOR UPDATE SKIP LOCKED) dead
     WHERE c.id = dead.id
    RETURNING c.id`,
  [{ limit: 1 }],
);

/**
 * Frees up to `limit` send claims whose process is gone: a message whose channel call began may
 * have reached the customer and becomes UNCONFIRMED; the others are returned, to be sent.
 */
export const releaseDeadSendClaims = query(
  { id: col.text },
  ({ now, limit }: { now: Date; limit: number }) =>
    Prisma.sql`
    WITH dead AS (
      SELECT id, "sendStartedAt" IS NOT NULL AS started FROM "Message"
       WHERE status = 'PENDING' AND "sendClaimedAt" IS NOT NULL AND "sendClaimedBy" NOT IN (${LIVE})
       LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ), released AS (
      UPDATE "Message" m
         SET status = CASE WHEN dead.started THEN 'UNCONFIRMED'::"MessageStatus" ELSE m.status END,
             "sendClaimedAt" = NULL, "sendClaimedBy" = NULL, "sendStartedAt" = NULL, "updatedAt" = ${now}
        FROM dead WHERE m.id = dead.id
    )
    SELECT id FROM dead WHERE NOT started`,
  [{ now: at0, limit: 1 }],
);

/**
 * A condition true of every row that makes the statement's commit wait for the disk, whatever its
 * session's setting (the job workers commit without waiting, app.ts workerDeps): a WhatsApp send
 * has no idempotency key, so the mark that its call began is on disk before the call, with every
 * commit before it (WAL is flushed in order). A row is changed only when the whole condition held
 * for it, this part included.
 */
const DURABLE = Prisma.sql`set_config('synchronous_commit', 'on', true) = 'on'`;

/** A claimed message's channel call begins now (its writer's claim, no call begun yet): 1 row or 0. */
export const startSend = command(
  ({ now, id }: { now: Date; id: string }) =>
    Prisma.sql`
        UPDATE "Message" SET "sendStartedAt" = ${now}
         WHERE id = ${id} AND status = 'PENDING' AND "sendClaimedAt" IS NOT NULL AND "sendStartedAt" IS NULL
           AND ${DURABLE}`,
  [{ now: at0, id: "m" }],
);

/**
 * A send attempt claims the message (PENDING, or FAILED for a `retry`; unclaimed or claimed before
 * `stale`; no call begun) and reads what the send needs.
 */
export const claimSend = query(
  {
    id: col.text,
    type: col.enum<MessageType>("MessageType"),
    content: col.text,
    payload: col.jsonb<Prisma.JsonValue>().null,
    channel: col.json<{ type: string; phoneNumberId: string | null; credentials: string | null }>(),
    to: col.text,
    lastContactMessageAt: col.timestamptz.null,
    windowClosedAt: col.timestamptz.null,
  },
  ({ now, claimedBy, messageId, retry, stale }: {
    now: Date;
    claimedBy: number;
    messageId: string;
    retry: boolean;
    stale: Date;
  }) =>
    Prisma.sql`
    UPDATE "Message" m SET "sendClaimedAt" = ${now}, "sendClaimedBy" = ${claimedBy}, "sendStartedAt" = ${now}
      FROM "Channel" ch, "Conversation" c, "Contact" ct
     WHERE m.id = ${messageId}
       AND ch.id = m."channelId" AND c.id = m."conversationId" AND ct.id = c."contactId"
       AND (m.status = 'PENDING' OR (${retry} AND m.status = 'FAILED'))
       AND (m."sendClaimedAt" IS NULL OR m."sendClaimedAt" <= ${stale}) AND m."sendStartedAt" IS NULL
       AND ${DURABLE}
    RETURNING m.id, m.type, m.content, m.payload,
           json_build_object('type', ch.type, 'phoneNumberId', ch."phoneNumberId", 'credentials', ch.credentials)
             AS channel,
           ct."externalId" AS "to", c."lastContactMessageAt", c."windowClosedAt"`,
  [{ now: at0, claimedBy: 1, messageId: "m", retry: false, stale: at0 }],
);

const sent = (externalId: Prisma.Sql, now: Date, id: string) =>
  Prisma.sql`
        UPDATE "Message" m SET status = 'SENT', "externalId" = ${externalId}, error = NULL,
               "sendClaimedAt" = NULL, "sendStartedAt" = NULL, "updatedAt" = ${now}
         WHERE m.id = ${id}`;

/**
 * A send got through: SENT with the wamid (unless another message of the channel holds it: the
 * channel repeated one), the earlier attempt's error and the claim cleared.
 */
export const markSent = command(
  ({ id, now, wamid }: { id: string; now: Date; wamid: string }) =>
    sent(
      Prisma.sql`(SELECT ${wamid}::text WHERE NOT EXISTS (
          SELECT 1 FROM "Message" o WHERE o."channelId" = m."channelId" AND o."externalId" = ${wamid}
             AND o.id <> m.id))`,
      now,
      id,
    ),
  [{ id: "m", now: at0, wamid: "w" }],
);

/** markSent without the wamid (another message took it concurrently). */
export const markSentWithoutId = command(
  ({ id, now }: { id: string; now: Date }) => sent(Prisma.sql`NULL`, now, id),
  [{ id: "m", now: at0 }],
);

/** A send failed: FAILED with the error (JSON), the claim cleared. */
/**
 * A send Meta refused for pacing (not delivered): the message stays PENDING, unclaimed, with the
 * refusal in `error`, for its retry job.
 */
export const markPaced = command(
  ({ id, now, error }: { id: string; now: Date; error: string }) =>
    Prisma.sql`
      UPDATE "Message" SET error = ${error}::jsonb,
             "sendClaimedAt" = NULL, "sendStartedAt" = NULL, "updatedAt" = ${now}
       WHERE id = ${id} AND status = 'PENDING'`,
  [{ id: "m", now: at0, error: "{}" }],
);

/**
 * Meta refused a message of the conversation with 131047 (re-engagement): its window is closed until
 * the customer writes again. The message by its id, or by its WhatsApp id on a channel.
 */
export const closeWindow = command(
  ({ now, messageId, channelId, externalId }: {
    now: Date;
    messageId: string | null;
    channelId: string | null;
    externalId: string | null;
  }) =>
    Prisma.sql`
      UPDATE "Conversation" c SET "windowClosedAt" = ${now}
        FROM "Message" m
       WHERE c.id = m."conversationId"
         AND (m.id = ${messageId} OR (m."channelId" = ${channelId} AND m."externalId" = ${externalId}))`,
  [{ now: at0, messageId: "m", channelId: null, externalId: null }],
);

export const markFailed = command(
  ({ id, now, error }: { id: string; now: Date; error: string }) =>
    Prisma.sql`
      UPDATE "Message" SET status = 'FAILED', error = ${error}::jsonb,
             "sendClaimedAt" = NULL, "sendStartedAt" = NULL, "updatedAt" = ${now}
       WHERE id = ${id}`,
  [{ id: "m", now: at0, error: "{}" }],
);

// --- Transitions (transitions.ts) ---

/**
 * OPEN → HUMAN with the reason and summary; no row changed when the conversation was not OPEN. The
 * person taking it over holds it; a transfer without one keeps whoever was assigned it while OPEN.
 */
export const markHuman = command(
  ({ id, reason, summary, userId, now }: {
    id: string;
    reason: string;
    summary: string;
    userId: string | null;
    now: Date;
  }) =>
    Prisma.sql`
      UPDATE "Conversation" SET status = 'HUMAN', "humanReason" = ${reason}, "transferSummary" = ${summary},
             "assignedUserId" = COALESCE(${userId}, "assignedUserId"), "updatedAt" = ${now}
       WHERE id = ${id} AND status = 'OPEN'`,
  [{ id: "c", reason: "TAG", summary: "s", userId: null, now: at0 }],
);

// --- The reply's release (pipeline/reply.ts), which writes a send's outcome ---

/**
 * Releases the reply's claim (if still its own), with what the reply left to it: `sent`, its last
 * send's outcome (markSent, markSentWithoutId or markFailed); `answered`, the messages it handled
 * without storing anything. `pending`: an OPEN conversation with a customer message still
 * unanswered (the statement's reads do not see its own writes: `answered` is left out).
 */
export const releaseClaim = query(
  { due: col.timestamptz.null, pending: col.boolean },
  ({ id, claimedAt, now, answered, sent }: {
    id: string;
    claimedAt: Date;
    now: Date;
    answered: string[];
    sent: Prisma.Sql | null;
  }) => {
    const writes = [
      ...sent ? [Prisma.sql`sent AS (${sent})`] : [],
      ...answered.length
        ? [Prisma.sql`answered AS (
          UPDATE "Message" SET "answeredAt" = ${now}, "updatedAt" = ${now} WHERE id = ANY(${answered}::text[]))`]
        : [],
    ];
    return Prisma.sql`
      ${writes.length ? Prisma.sql`WITH ${Prisma.join(writes, ", ")}` : Prisma.empty}
      UPDATE "Conversation" c SET "replyClaimedAt" = NULL
       WHERE c.id = ${id} AND c."replyClaimedAt" = ${claimedAt}
      RETURNING c."replyDueAt" AS due, c.status = 'OPEN' AND EXISTS (
        SELECT 1 FROM "Message" m WHERE m."conversationId" = c.id AND m."senderKind" = 'CUSTOMER'
           AND m."answeredAt" IS NULL AND m.id <> ALL(${answered}::text[])) AS pending`;
  },
  [
    { id: "c", claimedAt: at0, now: at0, answered: [], sent: null },
    { id: "c", claimedAt: at0, now: at0, answered: ["m"], sent: null },
    {
      id: "c",
      claimedAt: at0,
      now: at0,
      answered: ["m"],
      sent: markSent.sql({ id: "m", now: at0, wamid: "w" }),
    },
    {
      id: "c",
      claimedAt: at0,
      now: at0,
      answered: [],
      sent: markFailed.sql({ id: "m", now: at0, error: "{}" }),
    },
  ],
);
