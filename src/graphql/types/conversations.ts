/** The declared types of src/conversations: conversations, their contacts and messages. */
import { builder } from "../builder.ts";
import { fieldPlan, typePlan } from "../declared.ts";
import { connectionOf, enumOf, jsonObjectRef } from "../common_types.ts";
import {
  ConversationStatus,
  MessageContentType,
  MessageMediaType,
  MessageStatus,
  Sender,
} from "../../conversations/views.ts";
import { linkExpiry, linkSourceSql, signedMediaPath, signedMediaPathOf } from "../../media/links.ts";

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
const mediaSql = (t: string) =>
  `CASE WHEN ${t}."mediaId" IS NULL THEN NULL ELSE jsonb_build_object('id', ${t}."mediaId", ` +
  `'url', '/api/messages/' || ${t}.id || '/media', ` +
  `'mimeType', ${t}."mediaMimeType", 'size', ${t}."mediaSize", 'fileName', ${t}."mediaFileName", ` +
  `'error', ${t}."mediaError") END`;

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
      extensions: fieldPlan({ sql: mediaSql }),
      resolve: (m) =>
        m.mediaId === null ? null : {
          id: m.mediaId,
          url: `/api/messages/${m.id}/media`,
          mimeType: m.mediaMimeType,
          size: m.mediaSize,
          fileName: m.mediaFileName,
          error: m.mediaError,
        },
    }),
    mediaSignedUrl: t.string({
      nullable: true,
      description:
        "The file for 5 to 10 minutes without credentials, for an <img src>, an <audio src> or a link: " +
        "GET /api/messages/{messageId}/media with `expires` and `signature`, made when the message is read; " +
        "null without media.",
      // The planner reads the message, its workspace and the link's expiry; the presenter signs them.
      extensions: fieldPlan({
        sql: linkSourceSql,
        present: {
          apply: (ctx, stored) => signedMediaPathOf(ctx.jwt, stored),
          mayChange: (_ctx, value) => `${value} IS NOT NULL`,
        },
      }),
      resolve: async (m, _args, ctx) => {
        if (m.mediaId === null) return null;
        const actor = await ctx.actor();
        return signedMediaPath(actor.jwt, {
          messageId: m.id,
          workspaceId: actor.actor.workspaceId,
          expires: linkExpiry(Date.now()),
        });
      },
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
        "A location, the option a reply chose, or an OTHER message's raw JSON as the channel sent it.",
    }),
    inputTokens: t.exposeInt("inputTokens", { nullable: true, description: "Model usage of an AI message." }),
    outputTokens: t.exposeInt("outputTokens", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

/** The conversation's contact's `column`, in SQL (`t` aliases the conversation). */
const contactColumn = (column: "externalId" | "name") =>
  fieldPlan({ sql: (t) => `(SELECT c."${column}" FROM "Contact" c WHERE c.id = ${t}."contactId")` });

export const Conversation = builder.prismaObject("Conversation", {
  extensions: typePlan({ label: "Conversation", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    status: t.expose("status", { type: enumOf(ConversationStatus) }),
    contactId: t.id({
      description: "The contact's address on its channel (WhatsApp: the wa_id; API: the externalId). " +
        "The contact's internal id is contact.id.",
      extensions: contactColumn("externalId"),
      select: { contact: { select: { externalId: true } } },
      resolve: (conversation) => conversation.contact.externalId,
    }),
    contactName: t.string({
      extensions: contactColumn("name"),
      select: { contact: { select: { name: true } } },
      resolve: (conversation) => conversation.contact.name,
    }),
    closeReason: t.exposeString("closeReason", { nullable: true, description: "INACTIVITY or MANUAL." }),
    humanReason: t.exposeString("humanReason", {
      nullable: true,
      description: "TAG, ESCALATION or MANUAL.",
    }),
    transferSummary: t.exposeString("transferSummary", { nullable: true }),
    assignedUserId: t.exposeID("assignedUserId", {
      nullable: true,
      description: "The person who took it over.",
    }),
    lastMessageAt: t.expose("lastMessageAt", {
      type: "DateTime",
      description: "The last message of either side.",
    }),
    closedAt: t.expose("closedAt", { type: "DateTime", nullable: true }),
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
