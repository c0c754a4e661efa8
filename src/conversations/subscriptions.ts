/**
 * The live feeds of conversations (docs/api.md "Live feeds"), declared once;
 * the GraphQL Subscription fields are derived from them (src/graphql/derive.ts) and served over
 * graphql-ws and SSE. Events come from src/live/hub.ts, already limited to the subscriber's workspace.
 */
import { defineSubscription, type SubscriptionPayload } from "../shared/capability.ts";
import type { ActorContext } from "../context.ts";
import { notFound } from "../shared/errors.ts";
import { enumType } from "../shared/view.ts";
import type { LiveEvent, LiveEventType } from "../live/hub.ts";
import { conversationView, messageView } from "./views.ts";

const ConversationEventType = enumType(
  "ConversationEventType",
  ["OPENED", "STATUS_CHANGED", "MESSAGE_ADDED", "MESSAGE_UPDATED", "CLOSED", "ASSIGNED"],
  "OPENED: a new conversation; STATUS_CHANGED: to HUMAN or back to OPEN; MESSAGE_ADDED: a customer, AI or human message; " +
    "MESSAGE_UPDATED: an outbound message's status or error changed (the conversation as it is then: a refusal " +
    "for the window, Meta's 131047, has closed its window); CLOSED; ASSIGNED: its assignee changed (to a member or to none).",
);

/** The live events behind each ConversationEvent type. */
const EVENT_TYPES: Partial<Record<LiveEventType, typeof ConversationEventType.values[number]>> = {
  "conversation.opened": "OPENED",
  "human.transferred": "STATUS_CHANGED",
  "conversation.released": "STATUS_CHANGED",
  "message.received": "MESSAGE_ADDED",
  "message.sent": "MESSAGE_ADDED",
  "message.updated": "MESSAGE_UPDATED",
  "conversation.closed": "CLOSED",
  "conversation.assigned": "ASSIGNED",
};

const isMessage = (e: LiveEvent) =>
  (e.type === "message.received" || e.type === "message.sent") && !!e.messageId;

const isMessageUpdate = (e: LiveEvent) => e.type === "message.updated" && !!e.messageId;

/**
 * The ConversationEvent of a live event of any agent of the workspace, or null when it is none: each
 * conversation feed keeps those of the conversations it follows.
 */
function conversationEventOf(event: LiveEvent): SubscriptionPayload | null {
  const type = EVENT_TYPES[event.type];
  if (!type || !event.conversationId) return null;
  const message = isMessage(event) || isMessageUpdate(event) ? event.messageId : null;
  if ((type === "MESSAGE_ADDED" || type === "MESSAGE_UPDATED") && !message) return null;
  return { type, conversation: event.conversationId, message };
}

const ConversationEvent = {
  name: "ConversationEvent",
  description: "What happened to a conversation; `message` is set for MESSAGE_ADDED and MESSAGE_UPDATED.",
  typeEnum: ConversationEventType,
  rows: {
    conversation: { view: conversationView },
    message: { view: messageView, nullable: true },
  },
};

/** `conversationEvents(agentId)`: an agent's conversations opened, changing status, getting messages. */
export const conversationEvents = defineSubscription({
  name: "conversationEvents",
  summary: "Conversations of an agent as they open, change status or assignee, get messages, " +
    "see an outbound message's status change and close.",
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
  select: (event: LiveEvent, { agentId }) => event.agentId === agentId ? conversationEventOf(event) : null,
});

/** `inboxEvents`: conversationEvents of every agent of the workspace (the inbox's live feed). */
export const inboxEvents = defineSubscription({
  name: "inboxEvents",
  summary:
    "Conversations of every agent of the workspace as they open, change status or assignee, get messages, " +
    "see an outbound message's status change and close.",
  action: "workspace:read",
  params: {},
  output: ConversationEvent,
  select: conversationEventOf,
});

/** A conversation feed's check: the conversation is the workspace's (404 otherwise). */
async function conversationOfWorkspace(ctx: ActorContext, { conversationId }: { conversationId: string }) {
  const conversation = await ctx.db.conversation.findFirst({
    where: { id: conversationId, workspaceId: ctx.actor.workspaceId },
    select: { id: true },
  });
  if (!conversation) throw notFound("Conversation");
}

/** `messageAdded(conversationId)`: each new message of one conversation (customer, AI, human). */
export const messageAdded = defineSubscription({
  name: "messageAdded",
  summary: "New messages of one conversation.",
  action: "workspace:read",
  params: { conversationId: "Conversation" },
  check: conversationOfWorkspace,
  output: { view: messageView },
  select(event: LiveEvent, { conversationId }) {
    if (!isMessage(event) || event.conversationId !== conversationId) return null;
    return { id: event.messageId };
  },
});

/**
 * `messageUpdated(conversationId)`: each outbound message of one conversation whose status or error
 * changed (SENT, DELIVERED, READ, FAILED with the channel's reason, UNCONFIRMED; a pacing refusal's
 * error while it waits to be sent again), as it is once changed.
 */
export const messageUpdated = defineSubscription({
  name: "messageUpdated",
  summary: "Outbound messages of one conversation whose status or error changed.",
  action: "workspace:read",
  params: { conversationId: "Conversation" },
  check: conversationOfWorkspace,
  output: { view: messageView },
  select(event: LiveEvent, { conversationId }) {
    if (!isMessageUpdate(event) || event.conversationId !== conversationId) return null;
    return { id: event.messageId };
  },
});
