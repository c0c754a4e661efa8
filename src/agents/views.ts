/**
 * The readable types of src/agents (see shared/view.ts): the agent. Its counts and prompt versions
 * are declared with Pothos (src/graphql/types/agents.ts).
 */
import { declaredView, defineView } from "../shared/view.ts";
import { AgentStatus, AgentTemplate, MessageGroupingTime } from "./schemas.ts";
import { intentView } from "../intents/views.ts";
import { webhookView } from "../webhooks/views.ts";
import { channelView } from "../channels/views.ts";
import { conversationView } from "../conversations/views.ts";

/** An agent with every field of GET /api/agents/{id}. */
export const agentView = defineView({
  name: "Agent",
  label: "Agent",
  table: "Agent",
  workspaceColumn: "workspaceId",
  fields: {
    id: { type: "ID" },
    name: { type: "String" },
    status: { type: AgentStatus },
    template: { type: AgentTemplate },
    model: { type: "String" },
    jobName: { type: "String", nullable: true },
    jobSite: { type: "String", nullable: true },
    jobDescription: { type: "String", nullable: true },
    trainingContext: { type: "String", nullable: true },
    systemPrompt: { type: "String" },
    temperature: { type: "Float", nullable: true },
    enabledHumanTransfer: { type: "Boolean" },
    enabledReminder: { type: "Boolean" },
    splitMessages: { type: "Boolean" },
    enabledEmoji: { type: "Boolean" },
    signMessages: { type: "Boolean" },
    enabledVision: {
      type: "Boolean",
      description: "Images reach the model as images (and IMAGE intents can fire); off: their caption only.",
    },
    messageGroupingTime: { type: MessageGroupingTime },
    maxDailyMessages: { type: "Int", nullable: true },
    autoCloseMinutes: { type: "Int" },
    createdAt: { type: "DateTime" },
    updatedAt: { type: "DateTime" },
  },
  relations: {
    counts: { kind: "embedded", view: () => declaredView("AgentCounts") },
    intents: { kind: "connection", view: () => intentView, foreignKey: "agentId", order: "asc" },
    webhooks: { kind: "connection", view: () => webhookView, foreignKey: "agentId", order: "asc" },
    promptVersions: {
      kind: "connection",
      view: () => declaredView("PromptVersion"),
      foreignKey: "agentId",
      order: "desc",
    },
    channels: { kind: "connection", view: () => channelView, foreignKey: "agentId", order: "asc" },
    conversations: {
      kind: "connection",
      view: () => conversationView,
      foreignKey: "agentId",
      order: "desc",
      sortKey: "lastMessageAt",
      description: "Newest activity first (the last message of either side).",
    },
  },
});
