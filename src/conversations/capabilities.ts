/** Reading conversations and their messages, declared once (see shared/capability.ts). */
import { defineRead } from "../shared/capability.ts";
import { agentView } from "../agents/views.ts";
import { contactView, ConversationStatus, conversationView } from "./views.ts";

export const conversations = defineRead({
  name: "conversations",
  summary:
    "The agent's conversations, newest activity first (last message); `status` keeps those in that state.",
  action: "workspace:read",
  params: { agentId: "Agent" },
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "conversations" }],
  filters: { status: ConversationStatus },
  http: { path: "/api/agents/{agentId}/conversations" },
});

export const conversation = defineRead({
  name: "conversation",
  summary: "One conversation with its contact and channel.",
  action: "workspace:read",
  params: { conversationId: "Conversation" },
  from: { view: conversationView, idParam: "conversationId" },
  http: { path: "/api/conversations/{conversationId}" },
});

export const conversationMessages = defineRead({
  name: "conversationMessages",
  summary: "The conversation's messages, oldest first.",
  action: "workspace:read",
  params: { conversationId: "Conversation" },
  from: { view: conversationView, idParam: "conversationId" },
  path: [{ relation: "messages" }],
  http: { path: "/api/conversations/{conversationId}/messages" },
});

export const contactConversations = defineRead({
  name: "contactConversations",
  summary:
    "The contact's conversations on every channel of the workspace, newest first (a conversation's earlier ones; " +
    "`contactId` is its contact.id).",
  action: "workspace:read",
  params: { contactId: "Contact" },
  from: { view: contactView, idParam: "contactId" },
  path: [{ relation: "conversations" }],
  http: { path: "/api/contacts/{contactId}/conversations" },
});
