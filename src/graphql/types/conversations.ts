/** The declared types of src/conversations: contacts and messages (conversations are still views). */
import { builder } from "../builder.ts";
import { fieldPlan, typePlan } from "../declared.ts";
import { enumOf, jsonObjectRef } from "../common_types.ts";
import { MessageContentType, MessageMediaType, MessageStatus, Sender } from "../../conversations/views.ts";

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
