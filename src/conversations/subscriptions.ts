/**
 * The live feeds of conversations (docs/api.md "Live feeds"), declared once;
 * the GraphQL Subscription fields are derived from them (src/graphql/derive.ts) and served over
 * graphql-ws and SSE. Events come from src/live/hub.ts, already limited to the subscriber's workspace.
 */
import { defineSubscription } from "../shared/capability.ts";
import { notFound } from "../shared/errors.ts";
import { enumType } from "../shared/view.ts";
import type { DomainEventType } from "../shared/events.ts";
import type { LiveEvent } from "../live/hub.ts";
import { conversationView, messageView } from "./views.ts";

const ConversationEventType = enumType(
  "ConversationEventType",
  ["OPENED", "STATUS_CHANGED", "MESSAGE_ADDED", "CLOSED", "ASSIGNED"],
  "OPENED: a new conversation; STATUS_CHANGED: to HUMAN or back to OPEN; MESSAGE_ADDED: a customer, AI or human message; CLOSED; ASSIGNED: its assignee changed (to a member or to none).",
);

/** The domain events behind each ConversationEvent type. */
const EVENT_TYPES: Partial<Record<DomainEventType, typeof ConversationEventType.values[number]>> = {
  "conversation.opened": "OPENED",
  "human.transferred": "STATUS_CHANGED",
  "conversation.released": "STATUS_CHANGED",
  "message.received": "MESSAGE_ADDED",
  "message.sent": "MESSAGE_ADDED",
  "conversation.closed": "CLOSED",
  "conversation.assigned": "ASSIGNED",
};

const isMessage = (e: LiveEvent) =>
  (e.type === "message.received" || e.type === "message.sent") && !!e.messageId;

/** The ConversationEvent of a live event, or null when it is none. */
function conversationEvent(event: LiveEvent) {
  const type = EVENT_TYPES[event.type];
  if (!type || !event.conversationId) return null;
  if (type === "MESSAGE_ADDED" && !isMessage(event)) return null;
  return { type, conversation: event.conversationId, message: isMessage(event) ? event.messageId : null };
}

const ConversationEvent = {
  name: "ConversationEvent",
  description: "What happened to a conversation; `message` is set for MESSAGE_ADDED.",
  typeEnum: ConversationEventType,
  rows: {
    conversation: { view: conversationView },
    message: { view: messageView, nullable: true },
  },
};

/** `conversationEvents(agentId)`: an agent's conversations opened, changing status, getting messages. */
export const conversationEvents = defineSubscription({
  name: "conversationEvents",
  summary: "Conversations of an agent as they open, change status or assignee, get messages and close.",
  action: "workspace:read",
  params: { agentId: "Agent" },
  async check(ctx, { agentId }) {
    const agent = await ctx.db.agent.findFirst({
      where: { id: agentId, workspaceId: ctx.actor.workspaceId },
      select: { id: true },
    });
    if (!agent) throw notFound("Agent");
  },
  output: ConversationEvent,
  select(event: LiveEvent, { agentId }) {
    return event.agentId === agentId ? conversationEvent(event) : null;
  },
});

/** `inboxEvents`: conversationEvents of every agent of the workspace (the inbox's live feed). */
export const inboxEvents = defineSubscription({
  name: "inboxEvents",
  summary:
    "Conversations of every agent of the workspace as they open, change status or assignee, get messages and close.",
  action: "workspace:read",
  params: {},
  output: ConversationEvent,
  select: conversationEvent,
});

/** `messageAdded(conversationId)`: each new message of one conversation (customer, AI, human). */
export const messageAdded = defineSubscription({
  name: "messageAdded",
  summary: "New messages of one conversation.",
  action: "workspace:read",
  params: { conversationId: "Conversation" },
  async check(ctx, { conversationId }) {
    const conversation = await ctx.db.conversation.findFirst({
      where: { id: conversationId, workspaceId: ctx.actor.workspaceId },
      select: { id: true },
    });
    if (!conversation) throw notFound("Conversation");
  },
  output: { view: messageView },
  select(event: LiveEvent, { conversationId }) {
    if (!isMessage(event) || event.conversationId !== conversationId) return null;
    return { id: event.messageId };
  },
});
