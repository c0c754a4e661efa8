/** Intents of an agent: the GraphQL face of src/intents. */
import { builder } from "../builder.ts";
import { scopeCursor } from "../cursors.ts";
import * as intents from "../../intents/mod.ts";
import type { RequiredField } from "../../intents/schemas.ts";
import { MessageTypeEnum } from "./scalars.ts";
import { visibleUrl } from "../../webhooks/mod.ts";

const RequiredFieldRef = builder.objectRef<RequiredField>("RequiredField").implement({
  description: "A field the model must fill in the intent's tag; sent to the intent webhook.",
  fields: (t) => ({
    name: t.exposeString("name"),
    type: t.exposeString("type"),
    description: t.exposeString("description"),
  }),
});

/** An intent: the agent emits its tag to call `webhookUrl`. */
export const Intent = builder.prismaObject("Intent", {
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    name: t.exposeString("name"),
    tag: t.exposeString("tag", {
      description: "The tag name: `name` lowercased, spaces and underscores as hyphens.",
    }),
    description: t.exposeString("description"),
    triggerOnTypes: t.expose("triggerOnTypes", { type: [MessageTypeEnum] }),
    requiredFields: t.field({
      type: [RequiredFieldRef],
      select: { requiredFields: true },
      resolve: (intent) => (intent.requiredFields ?? []) as unknown as RequiredField[],
    }),
    webhookUrl: t.string({
      description: "Credential-like query values are masked for AGENT and VIEWER.",
      select: { webhookUrl: true },
      resolve: async (intent, _args, ctx) => visibleUrl(await ctx.actor(), intent.webhookUrl),
    }),
    webhookMethod: t.exposeString("webhookMethod"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

/** Shared by Query.intents and Agent.intents. */
export const IntentConnection = builder.connectionObject({ type: Intent, name: "IntentConnection" });

builder.queryFields((t) => ({
  intents: t.prismaConnection(
    {
      type: Intent,
      cursor: "id",
      authScopes: { member: true },
      args: { agentId: t.arg.id({ required: true }) },
      resolve: async (query, _root, { agentId }, ctx) =>
        intents.findIntentsForGraph(
          await ctx.actor(),
          String(agentId),
          scopeCursor(query, { agentId: String(agentId) }),
        ),
    },
    IntentConnection,
  ),
  intent: t.prismaField({
    type: Intent,
    authScopes: { member: true },
    args: { agentId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (query, _root, { agentId, id }, ctx) =>
      intents.findIntentForGraph(
        await ctx.actor(),
        { agentId: String(agentId), intentId: String(id) },
        query,
      ),
  }),
}));

const RequiredFieldInput = builder.inputType("RequiredFieldInput", {
  fields: (t) => ({
    name: t.string({ required: true }),
    type: t.string({ required: true }),
    description: t.string({ required: true }),
  }),
});

const CreateIntentInput = builder.inputType("CreateIntentInput", {
  description: "The body of POST /api/agents/{id}/intents.",
  fields: (t) => ({
    name: t.string({ required: true }),
    description: t.string({ required: true }),
    triggerOnTypes: t.field({ type: [MessageTypeEnum], required: true }),
    requiredFields: t.field({ type: [RequiredFieldInput], required: true }),
    webhookUrl: t.string({ required: true }),
    webhookMethod: t.string({ description: "POST (default), PUT or PATCH." }),
  }),
});

const UpdateIntentInput = builder.inputType("UpdateIntentInput", {
  description: "PATCH semantics: only the fields given change.",
  fields: (t) => ({
    name: t.string(),
    description: t.string(),
    triggerOnTypes: t.field({ type: [MessageTypeEnum] }),
    requiredFields: t.field({ type: [RequiredFieldInput] }),
    webhookUrl: t.string(),
    webhookMethod: t.string(),
  }),
});

builder.mutationFields((t) => ({
  createIntent: t.field({
    type: Intent,
    authScopes: { member: true },
    args: {
      agentId: t.arg.id({ required: true }),
      input: t.arg({ type: CreateIntentInput, required: true }),
    },
    resolve: async (_root, { agentId, input }, ctx) =>
      intents.createIntent(await ctx.actor(), String(agentId), input),
  }),
  updateIntent: t.field({
    type: Intent,
    authScopes: { member: true },
    args: {
      agentId: t.arg.id({ required: true }),
      id: t.arg.id({ required: true }),
      input: t.arg({ type: UpdateIntentInput, required: true }),
    },
    resolve: async (_root, { agentId, id, input }, ctx) =>
      intents.updateIntent(await ctx.actor(), { agentId: String(agentId), intentId: String(id) }, input),
  }),
  deleteIntent: t.id({
    authScopes: { member: true },
    args: { agentId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_root, { agentId, id }, ctx) => {
      await intents.deleteIntent(await ctx.actor(), { agentId: String(agentId), intentId: String(id) });
      return id;
    },
  }),
}));
