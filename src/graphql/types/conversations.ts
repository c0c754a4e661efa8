/** The declared types of src/conversations: conversations, their contacts and messages. */
import type { Message as StoredMessage } from "../../generated/prisma/client.ts";
import { builder } from "../builder.ts";
import { ident, type Sql, sql } from "../../shared/sql_fragment.ts";
import { computedField, fieldPlan, typePlan } from "../declared.ts";
import { unreadOf, unreadSql } from "../../conversations/assignment_sql.ts";
import { connectionOf, enumOf, jsonObjectRef } from "../common_types.ts";
import {
  ConversationStatus,
  ConversationWindowType,
  MessageContentType,
  MessageMediaType,
  MessagePricingType,
  MessageStatus,
  MessageTemplateType,
  Sender,
  windowOf,
} from "../../conversations/views.ts";
import { linkExpiry, linkSourceSql, signedMediaPathOf } from "../../media/links.ts";

export const Contact = builder.prismaObject("Contact", {
  extensions: typePlan({ label: "Contact", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    externalId: t.exposeString("externalId", {
      description: "The customer's address on the channel (WhatsApp: the phone number).",
    }),
    name: t.exposeString("name"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

/** A media message's file, built in SQL from the message's media columns (`t` aliases the message). */
const mediaSql = (t: Sql) =>
  sql`CASE WHEN ${t}."mediaId" IS NULL THEN NULL ELSE jsonb_build_object('id', ${t}."mediaId",
    'url', '/api/messages/' || ${t}.id || '/media',
    'mimeType', ${t}."mediaMimeType", 'size', ${t}."mediaSize", 'fileName', ${t}."mediaFileName",
    'error', ${t}."mediaError") END`;

/** The columns a message's `media` gathers. */
type MediaColumns = Pick<
  StoredMessage,
  "id" | "mediaId" | "mediaMimeType" | "mediaSize" | "mediaFileName" | "mediaError"
>;

export const Message = builder.prismaObject("Message", {
  extensions: typePlan({ label: "Message" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    conversationId: t.exposeID("conversationId"),
    sender: t.expose("senderKind", { type: enumOf(Sender) }),
    senderUserId: t.exposeID("senderUserId", {
      nullable: true,
      description: "The person who wrote a HUMAN message.",
    }),
    type: t.expose("type", { type: enumOf(MessageContentType) }),
    content: t.exposeString("content"),
    status: t.expose("status", { type: enumOf(MessageStatus) }),
    error: t.expose("error", { type: "JSON", nullable: true }),
    mediaId: t.exposeString("mediaId", { nullable: true }),
    mediaMimeType: t.exposeString("mediaMimeType", { nullable: true }),
    media: t.field({
      type: jsonObjectRef(MessageMediaType),
      nullable: true,
      ...computedField({
        sql: mediaSql,
        row: (m: MediaColumns) =>
          m.mediaId === null ? null : {
            id: m.mediaId,
            url: `/api/messages/${m.id}/media`,
            mimeType: m.mediaMimeType,
            size: m.mediaSize,
            fileName: m.mediaFileName,
            error: m.mediaError,
          },
      }),
    }),
    mediaSignedUrl: t.string({
      nullable: true,
      description:
        "The file for 5 to 10 minutes without credentials, for an <img src>, an <audio src> or a link: " +
        "GET /api/messages/{messageId}/media with `expires` and `signature`, made when the message is read; " +
        "null without media.",
      // Both read the message, its workspace and the link's expiry (linkSourceSql); the presenter signs them.
      ...computedField({
        sql: linkSourceSql,
        row: (m: { id: string; mediaId: string | null }, ctx) =>
          m.mediaId === null ? null : `${m.id} ${ctx.actor.workspaceId} ${linkExpiry(Date.now())}`,
        present: {
          apply: (ctx, stored) => signedMediaPathOf(ctx.jwt, stored),
          mayChange: (_ctx, value) => sql`${value} IS NOT NULL`,
        },
      }),
    }),
    transcript: t.exposeString("transcript", {
      nullable: true,
      description: "An AUDIO message's transcript.",
    }),
    text: t.exposeString("text", {
      nullable: true,
      description: "A DOCUMENT's text (PDF, DOCX), at most DOCUMENT_MAX_CHARS characters.",
    }),
    payload: t.expose("payload", {
      type: "JSON",
      nullable: true,
      description:
        "A location, the option a reply chose, an OTHER message's raw JSON as the channel sent it, " +
        "or a TEMPLATE message's `template` object as sent to WhatsApp.",
    }),
    pricing: t.field({
      type: jsonObjectRef(MessagePricingType),
      nullable: true,
      resolve: (m) => m.pricing as { category: string; billable: boolean } | null,
    }),
    template: t.field({
      type: jsonObjectRef(MessageTemplateType),
      nullable: true,
      resolve: (m) => m.template as { name: string; language: string } | null,
    }),
    inputTokens: t.exposeInt("inputTokens", { nullable: true, description: "Model usage of an AI message." }),
    outputTokens: t.exposeInt("outputTokens", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

/**
 * The conversation's window (conversations/views.ts windowOf, whose 24 hours this repeats): in SQL
 * (`t` aliases the conversation), or from a row with its channel.
 */
const windowSql = (t: Sql) =>
  sql`(SELECT CASE WHEN ch.type <> 'WHATSAPP' THEN jsonb_build_object('open', true, 'closesAt', NULL)
    ELSE jsonb_build_object(
      'open', COALESCE(${t}."lastContactMessageAt" + interval '24 hours' > now()
        AND (${t}."windowClosedAt" IS NULL OR ${t}."windowClosedAt" < ${t}."lastContactMessageAt"), false),
      'closesAt', to_char((${t}."lastContactMessageAt" + interval '24 hours') AT TIME ZONE 'UTC',
        'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) END
    FROM "Channel" ch WHERE ch.id = ${t}."channelId")`;

/** The conversation's contact's `column`: in SQL (`t` aliases the conversation), or from its contact. */
const contactColumn = <C extends "externalId" | "name">(column: C) =>
  computedField({
    sql: (t) => sql`(SELECT c.${ident(column)} FROM "Contact" c WHERE c.id = ${t}."contactId")`,
    row: (conversation: { contact: Record<C, string> }) => conversation.contact[column],
  });

export const Conversation = builder.prismaObject("Conversation", {
  extensions: typePlan({ label: "Conversation", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    status: t.expose("status", { type: enumOf(ConversationStatus) }),
    contactId: t.id({
      description: "The contact's address on its channel (WhatsApp: the wa_id; API: the externalId). " +
        "The contact's internal id is contact.id.",
      ...contactColumn("externalId"),
      select: { contact: { select: { externalId: true } } },
    }),
    contactName: t.string({ ...contactColumn("name"), select: { contact: { select: { name: true } } } }),
    closeReason: t.exposeString("closeReason", { nullable: true, description: "INACTIVITY or MANUAL." }),
    humanReason: t.exposeString("humanReason", {
      nullable: true,
      description: "TAG, ESCALATION or MANUAL.",
    }),
    transferSummary: t.exposeString("transferSummary", { nullable: true }),
    assignedUserId: t.exposeID("assignedUserId", {
      nullable: true,
      description: "The member holding it (assignee.id), or null.",
    }),
    assignee: t.relation("assignee", {
      nullable: true,
      description: "The member holding it: whoever took it over or was assigned it; null when nobody does.",
    }),
    unread: t.int({
      nullable: true,
      description: "The caller's unread messages: customer messages stored since the calling member last " +
        "read the conversation (all of them when never read); null for an API token, which is no member.",
      extensions: fieldPlan({ sql: unreadSql, row: (c) => (c as { unread?: number | null }).unread }),
      // A row a service returned carries the count (conversations/handoff.ts answer); a row loaded
      // by plugin-prisma (a read inside a mutation's document) is counted here, one query a row.
      resolve: async (c, _args, ctx) => {
        const given = (c as { unread?: number | null }).unread;
        if (given !== undefined) return given;
        const { actor } = await ctx.actor();
        return await unreadOf(ctx.deps.db, c.id, actor.userId);
      },
    }),
    lastMessageAt: t.expose("lastMessageAt", {
      type: "DateTime",
      description: "The last message of either side.",
    }),
    closedAt: t.expose("closedAt", { type: "DateTime", nullable: true }),
    window: t.field({
      type: jsonObjectRef(ConversationWindowType),
      ...computedField({
        sql: windowSql,
        row: (c: Parameters<typeof windowOf>[0]) => windowOf(c, new Date()),
      }),
      select: { lastContactMessageAt: true, windowClosedAt: true, channel: { select: { type: true } } },
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    contact: t.relation("contact"),
    channel: t.relation("channel"),
    messages: t.relatedConnection(
      "messages",
      {
        cursor: "id",
        description: "Oldest first.",
        query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
      },
      connectionOf(Message),
    ),
  }),
});
