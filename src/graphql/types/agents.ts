/**
 * Agents, their counts and prompt versions: the GraphQL face of src/agents. Nested intents,
 * webhooks and prompt versions are relation connections that the prisma plugin folds into the
 * parent's query, so a page of agents with all of them costs a constant number of statements.
 */
import { builder } from "../builder.ts";
import { scopeCursor } from "../cursors.ts";
import * as agents from "../../agents/mod.ts";
import { AgentStatusEnum, AgentTemplateEnum, MessageGroupingTimeEnum } from "./scalars.ts";
import { IntentConnection } from "./intents.ts";
import { WebhookConnection } from "./webhooks.ts";

const oldestFirst = { orderBy: [{ createdAt: "asc" as const }, { id: "asc" as const }] };
const newestFirst = { orderBy: [{ createdAt: "desc" as const }, { id: "desc" as const }] };

/** The list counts of spec section 4 (`_count` in REST); `numbers` counts channels. */
const AgentCounts = builder.objectRef<agents.AgentCounts>("AgentCounts").implement({
  fields: (t) => ({
    conversations: t.exposeInt("conversations"),
    intents: t.exposeInt("intents"),
    numbers: t.exposeInt("numbers", { description: "Messaging channels (phone numbers) of the agent." }),
  }),
});

const PromptVersion = builder.prismaObject("PromptVersion", {
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    systemPrompt: t.exposeString("systemPrompt"),
    rationale: t.exposeString("rationale"),
    authorUserId: t.exposeID("authorUserId", { nullable: true }),
    authorLabel: t.exposeString("authorLabel"),
    revertedFrom: t.exposeID("revertedFrom", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const PromptVersionConnection = builder.connectionObject({
  type: PromptVersion,
  name: "PromptVersionConnection",
});

/** An agent with every field of GET /api/agents/{id}. */
export const Agent = builder.prismaObject("Agent", {
  // The columns of the list are always loaded and read without Pothos' per-field selection
  // bookkeeping (plain resolvers), so a page of agents costs what the REST list costs.
  select: { id: true, name: true, status: true, template: true, model: true },
  fields: (t) => ({
    id: t.id({ resolve: (a) => a.id }),
    name: t.string({ resolve: (a) => a.name }),
    status: t.field({ type: AgentStatusEnum, resolve: (a) => a.status }),
    template: t.field({ type: AgentTemplateEnum, resolve: (a) => a.template }),
    model: t.string({ resolve: (a) => a.model }),
    jobName: t.exposeString("jobName", { nullable: true }),
    jobSite: t.exposeString("jobSite", { nullable: true }),
    jobDescription: t.exposeString("jobDescription", { nullable: true }),
    trainingContext: t.exposeString("trainingContext", { nullable: true }),
    systemPrompt: t.exposeString("systemPrompt"),
    temperature: t.exposeFloat("temperature", { nullable: true }),
    enabledHumanTransfer: t.exposeBoolean("enabledHumanTransfer"),
    enabledReminder: t.exposeBoolean("enabledReminder"),
    splitMessages: t.exposeBoolean("splitMessages"),
    enabledEmoji: t.exposeBoolean("enabledEmoji"),
    signMessages: t.exposeBoolean("signMessages"),
    messageGroupingTime: t.expose("messageGroupingTime", { type: MessageGroupingTimeEnum }),
    maxDailyMessages: t.exposeInt("maxDailyMessages", { nullable: true }),
    autoCloseMinutes: t.exposeInt("autoCloseMinutes"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    counts: t.field({
      type: AgentCounts,
      // Batched per request (src/graphql/context.ts) into one indexed count statement.
      resolve: (agent, _args, ctx) =>
        (agent as { _count?: agents.AgentCounts })._count ?? ctx.loaders.agentCounts.load(agent.id),
    }),
    intents: t.relatedConnection("intents", { cursor: "id", query: oldestFirst }, IntentConnection),
    webhooks: t.relatedConnection("webhooks", { cursor: "id", query: oldestFirst }, WebhookConnection),
    promptVersions: t.relatedConnection(
      "promptVersions",
      { cursor: "id", query: newestFirst },
      PromptVersionConnection,
    ),
  }),
});

const AgentConnection = builder.connectionObject({ type: Agent, name: "AgentConnection" });

builder.queryFields((t) => ({
  agents: t.prismaConnection(
    {
      type: Agent,
      cursor: "id",
      authScopes: { member: true },
      resolve: async (query, _root, _args, ctx) => {
        const actor = await ctx.actor();
        return agents.findAgentsForGraph(actor, scopeCursor(query, { workspaceId: actor.actor.workspaceId }));
      },
    },
    AgentConnection,
  ),
  agent: t.prismaField({
    type: Agent,
    authScopes: { member: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, { id }, ctx) =>
      agents.findAgentForGraph(await ctx.actor(), String(id), query),
  }),
}));

/** CreateAgentInput and ReplaceAgentInput mirror the REST bodies field for field. */
const agentInput = (name: string, description: string) =>
  builder.inputType(name, {
    description,
    fields: (t) => ({
      name: t.string({ required: true }),
      template: t.field({ type: AgentTemplateEnum }),
      model: t.string(),
      jobName: t.string(),
      jobSite: t.string(),
      jobDescription: t.string(),
      trainingContext: t.string(),
      temperature: t.float(),
      enabledHumanTransfer: t.boolean(),
      enabledReminder: t.boolean(),
      splitMessages: t.boolean(),
      enabledEmoji: t.boolean(),
      signMessages: t.boolean(),
      messageGroupingTime: t.field({ type: MessageGroupingTimeEnum }),
      maxDailyMessages: t.int(),
      autoCloseMinutes: t.int(),
    }),
  });
const CreateAgentInput = agentInput(
  "CreateAgentInput",
  "The body of POST /api/agents; omitted fields take their defaults.",
);
const ReplaceAgentInput = agentInput(
  "ReplaceAgentInput",
  "The whole agent, as PUT /api/agents/{id}: omitted fields become null or return to their defaults.",
);
const UpdateAgentPromptInput = builder.inputType("UpdateAgentPromptInput", {
  fields: (t) => ({ systemPrompt: t.string({ required: true }), rationale: t.string({ required: true }) }),
});

builder.mutationFields((t) => ({
  createAgent: t.field({
    type: Agent,
    authScopes: { member: true },
    args: { input: t.arg({ type: CreateAgentInput, required: true }) },
    resolve: async (_root, { input }, ctx) => agents.createAgent(await ctx.actor(), input),
  }),
  replaceAgent: t.field({
    type: Agent,
    authScopes: { member: true },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: ReplaceAgentInput, required: true }) },
    resolve: async (_root, { id, input }, ctx) => agents.replaceAgent(await ctx.actor(), String(id), input),
  }),
  setAgentStatus: t.field({
    type: Agent,
    authScopes: { member: true },
    args: { id: t.arg.id({ required: true }), status: t.arg({ type: AgentStatusEnum, required: true }) },
    resolve: async (_root, { id, status }, ctx) =>
      agents.setAgentStatus(await ctx.actor(), String(id), { status }),
  }),
  updateAgentPrompt: t.field({
    type: Agent,
    description: "Sets the system prompt and records a prompt version.",
    authScopes: { member: true },
    args: {
      id: t.arg.id({ required: true }),
      input: t.arg({ type: UpdateAgentPromptInput, required: true }),
    },
    resolve: async (_root, { id, input }, ctx) => agents.updatePrompt(await ctx.actor(), String(id), input),
  }),
  revertAgentPrompt: t.field({
    type: Agent,
    description: "Restores an earlier prompt version's text; this itself records a new version.",
    authScopes: { member: true },
    args: {
      id: t.arg.id({ required: true }),
      versionId: t.arg.id({ required: true }),
      rationale: t.arg.string(),
    },
    resolve: async (_root, { id, versionId, rationale }, ctx) =>
      agents.revertPrompt(
        await ctx.actor(),
        String(id),
        String(versionId),
        rationale == null ? undefined : { rationale },
      ),
  }),
  deleteAgent: t.id({
    description: "Deletes the agent with its conversations, messages, intents, channels and webhooks.",
    authScopes: { member: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await agents.deleteAgent(await ctx.actor(), String(id));
      return id;
    },
  }),
}));
