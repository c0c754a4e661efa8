/**
 * The declared types of src/agents: an agent, its prompt versions and counts. The read planner, REST
 * and OpenAPI read them from here (../declared.ts).
 */
import { builder } from "../builder.ts";
import { ident, sql } from "../../shared/sql_fragment.ts";
import { fieldPlan, typePlan } from "../declared.ts";
import { connectionOf, enumOf, jsonObjectRef } from "../common_types.ts";
import {
  AgentStatus,
  AgentTemplate,
  MessageGroupingTime,
  ReminderTemplateType,
} from "../../agents/schemas.ts";
import { Intent } from "./intents.ts";
import { Webhook } from "./webhooks.ts";
import { Channel } from "./channels.ts";
import { Conversation } from "./conversations.ts";
import { ReplayPin } from "./replay.ts";

/** The agent's rows of `table`, counted in SQL (`t` aliases the agent's row). */
const counted = (table: string) =>
  fieldPlan({ sql: (t) => sql`(SELECT count(*)::int FROM ${ident(table)} c WHERE c."agentId" = ${t}.id)` });

export const PromptVersion = builder.prismaObject("PromptVersion", {
  extensions: typePlan({ label: "Prompt version" }),
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

/** An agent's counts, as Prisma's `_count` of its relations names them (REST's `_count`). */
export interface AgentCountsShape {
  conversations: number;
  intents: number;
  numbers: number;
}

/** The counts of the agent list (`_count` over REST); `numbers` counts channels. */
export const AgentCounts = builder.objectRef<AgentCountsShape>("AgentCounts").implement({
  extensions: typePlan({ label: "Counts" }),
  fields: (t) => ({
    conversations: t.exposeInt("conversations", { extensions: counted("Conversation") }),
    intents: t.exposeInt("intents", { extensions: counted("Intent") }),
    numbers: t.exposeInt("numbers", {
      description: "Messaging channels (phone numbers) of the agent.",
      extensions: counted("Channel"),
    }),
  }),
});

/** Relay pages of an agent's rows, by (`key`, id) in `order` (plugin-prisma's query; the planner reads it). */
const byKey = <K extends string>(key: K, order: "asc" | "desc") => ({
  cursor: "id" as const,
  query: { orderBy: [{ [key]: order } as { [k in K]: "asc" | "desc" }, { id: order }] },
});

/** An agent with every field of GET /api/agents/{id}. */
export const Agent = builder.prismaObject("Agent", {
  extensions: typePlan({ label: "Agent", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    status: t.expose("status", { type: enumOf(AgentStatus) }),
    template: t.expose("template", { type: enumOf(AgentTemplate) }),
    model: t.exposeString("model"),
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
    enabledVision: t.exposeBoolean("enabledVision", {
      description: "Images reach the model as images (and IMAGE intents can fire); off: their caption only.",
    }),
    messageGroupingTime: t.expose("messageGroupingTime", { type: enumOf(MessageGroupingTime) }),
    maxDailyMessages: t.exposeInt("maxDailyMessages", { nullable: true }),
    autoCloseMinutes: t.exposeInt("autoCloseMinutes"),
    reminderTemplate: t.field({
      type: jsonObjectRef(ReminderTemplateType),
      nullable: true,
      resolve: (a) => a.reminderTemplate as { name: string; language: string; parameters: unknown } | null,
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    counts: t.field({
      type: AgentCounts,
      select: { _count: { select: { conversations: true, intents: true, channels: true } } },
      resolve: ({ _count }) => ({
        conversations: _count.conversations,
        intents: _count.intents,
        numbers: _count.channels,
      }),
    }),
    intents: t.relatedConnection("intents", byKey("createdAt", "asc"), connectionOf(Intent)),
    webhooks: t.relatedConnection("webhooks", byKey("createdAt", "asc"), connectionOf(Webhook)),
    promptVersions: t.relatedConnection(
      "promptVersions",
      byKey("createdAt", "desc"),
      connectionOf(PromptVersion),
    ),
    channels: t.relatedConnection("channels", byKey("createdAt", "asc"), connectionOf(Channel)),
    conversations: t.relatedConnection(
      "conversations",
      {
        ...byKey("lastMessageAt", "desc"),
        description: "Newest activity first (the last message of either side).",
      },
      connectionOf(Conversation),
    ),
    replayPins: t.relatedConnection(
      "replayPins",
      { ...byKey("createdAt", "asc"), description: "Conversations pinned for its replays, oldest first." },
      connectionOf(ReplayPin),
    ),
  }),
});
