/**
 * The handoff operations of a person, declared once (shared/capability.ts):
 * take over, reply as a person, release, close. Each answers 200 with the conversation; the role
 * table's conversation:attend (OWNER, MANAGER, AGENT).
 */
import { defineOperation } from "../shared/capability.ts";
import { conversationView } from "./views.ts";
import * as handoff from "./handoff.ts";

const params = { conversationId: "Conversation" } as const;
const access = { kind: "workspace", action: "conversation:attend" } as const;

export const takeoverConversation = defineOperation({
  name: "takeoverConversation",
  summary:
    "A person takes the conversation over: HUMAN, assigned to the caller, human.transferred with reason MANUAL (409 CONVERSATION_CLOSED when closed).",
  access,
  params,
  target: "conversationId",
  output: { view: conversationView },
  http: { method: "POST", path: "/api/conversations/{conversationId}/takeover" },
  run: (ctx, { conversationId }) => handoff.takeover(ctx, conversationId),
});

export const replyInConversation = defineOperation({
  name: "replyInConversation",
  summary:
    "A person's reply, sent through the channel (message.sent with sender HUMAN); the conversation must be HUMAN (409 CONVERSATION_NOT_HUMAN, CONVERSATION_CLOSED).",
  access,
  params,
  target: "conversationId",
  input: handoff.humanReplySchema,
  output: { view: conversationView },
  http: { method: "POST", path: "/api/conversations/{conversationId}/messages" },
  run: (ctx, { conversationId }, input) => handoff.humanReply(ctx, conversationId, input),
});

export const releaseConversation = defineOperation({
  name: "releaseConversation",
  summary: "Gives a HUMAN conversation back to the agent (OPEN); 409 CONVERSATION_NOT_HUMAN otherwise.",
  access,
  params,
  target: "conversationId",
  output: { view: conversationView },
  http: { method: "POST", path: "/api/conversations/{conversationId}/release" },
  run: (ctx, { conversationId }) => handoff.release(ctx, conversationId),
});

export const closeConversation = defineOperation({
  name: "closeConversation",
  summary:
    "Closes the conversation: CLOSED, conversation.closed with reason MANUAL (409 CONVERSATION_CLOSED when it was).",
  access,
  params,
  target: "conversationId",
  output: { view: conversationView },
  http: { method: "POST", path: "/api/conversations/{conversationId}/close" },
  run: (ctx, { conversationId }) => handoff.close(ctx, conversationId),
});
