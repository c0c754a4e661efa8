/**
 * Sending WhatsApp templates, declared once (shared/capability.ts): on a conversation, and to a
 * contact who has not written. Both answer the conversation, as a person's reply does; the role
 * table's conversation:attend (OWNER, MANAGER, AGENT).
 */
import { defineOperation } from "../shared/capability.ts";
import { conversationView } from "../conversations/views.ts";
import * as send from "./send.ts";

const access = { kind: "workspace", action: "conversation:attend" } as const;

export const sendTemplate = defineOperation({
  name: "sendTemplate",
  summary:
    "Sends an APPROVED WhatsApp template of the conversation's channel, inside or outside the customer's 24-hour window " +
    "(422 TEMPLATE_NOT_APPROVED, TEMPLATE_PARAMETERS with nothing sent; 409 CONVERSATION_CLOSED, NOT_WHATSAPP). " +
    "Stored as the person's TEMPLATE message (message.sent with sender HUMAN); answers the conversation.",
  access,
  params: { conversationId: "Conversation" },
  target: "conversationId",
  input: send.sendTemplateSchema,
  output: { view: conversationView },
  http: { method: "POST", path: "/api/conversations/{conversationId}/template" },
  run: (ctx, { conversationId }, input) => send.sendConversationTemplate(ctx, conversationId, input),
});

export const startTemplateConversation = defineOperation({
  name: "startTemplateConversation",
  summary:
    "Sends an APPROVED template to a WhatsApp number that has not written (or has a conversation open): the contact " +
    "and an OPEN conversation are created when needed, and the agent answers the reply. Same checks as sendTemplate; " +
    "answers the conversation (REST: 201).",
  access,
  params: { channelId: "Channel" },
  input: send.startTemplateSchema,
  output: { view: conversationView },
  http: { method: "POST", path: "/api/channels/{channelId}/templates/send", status: 201 },
  run: (ctx, { channelId }, input) => send.startTemplateConversation(ctx, channelId, input),
});
