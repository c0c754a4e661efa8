/**
 * Event webhooks of an agent: the GraphQL face of src/webhooks. `headers` values are masked for
 * roles without webhook:secrets by the service's own visibleHeaders(); the signing secret appears
 * only in the payloads of createWebhook and rotateWebhookSecret.
 */
import { builder } from "../builder.ts";
import { scopeCursor } from "../cursors.ts";
import * as webhooks from "../../webhooks/mod.ts";
import { WEBHOOK_EVENTS } from "../../webhooks/mod.ts";
import { WebhookDelivery, WebhookDeliveryConnection } from "./webhook_deliveries.ts";

/** An event webhook registration. */
export const Webhook = builder.prismaObject("EventWebhook", {
  name: "Webhook",
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    event: t.exposeString("event", { description: `One of: ${WEBHOOK_EVENTS.join(", ")}.` }),
    url: t.string({
      description: "Credential-like query values are masked for AGENT and VIEWER.",
      select: { url: true },
      resolve: async (row, _args, ctx) => webhooks.visibleUrl(await ctx.actor(), row.url),
    }),
    method: t.exposeString("method"),
    headers: t.field({
      type: "JSON",
      description:
        "Extra headers sent with each call (name to value); values are masked for AGENT and VIEWER.",
      select: { headers: true },
      resolve: async (row, _args, ctx) => webhooks.visibleHeaders(await ctx.actor(), row.headers),
    }),
    lastError: t.expose("lastError", { type: "JSON", nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    deliveries: t.prismaConnection(
      {
        type: WebhookDelivery,
        cursor: "id",
        description: "The delivery log, newest first.",
        resolve: async (query, webhook, _args, ctx) =>
          webhooks.findWebhookDeliveriesForGraph(
            await ctx.actor(),
            webhook.id,
            scopeCursor(query, { webhookId: webhook.id }),
          ),
      },
      WebhookDeliveryConnection,
    ),
  }),
});

/** Shared by Query.webhooks and Agent.webhooks. */
export const WebhookConnection = builder.connectionObject({ type: Webhook, name: "WebhookConnection" });

const WebhookWithSecret = builder.objectRef<{ webhook: { id: string }; signingSecret: string }>(
  "WebhookWithSecret",
)
  .implement({
    description: "A webhook with its signing secret, shown this once.",
    fields: (t) => ({
      webhook: t.expose("webhook", { type: Webhook }),
      signingSecret: t.exposeString("signingSecret", {
        description: "Standard Webhooks secret (whsec_...).",
      }),
    }),
  });

builder.queryFields((t) => ({
  webhooks: t.prismaConnection(
    {
      type: Webhook,
      cursor: "id",
      authScopes: { member: true },
      args: { agentId: t.arg.id({ required: true }) },
      resolve: async (query, _root, { agentId }, ctx) =>
        webhooks.findWebhooksForGraph(
          await ctx.actor(),
          String(agentId),
          scopeCursor(query, { agentId: String(agentId) }),
        ),
    },
    WebhookConnection,
  ),
  webhook: t.prismaField({
    type: Webhook,
    authScopes: { member: true },
    args: { agentId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (query, _root, { agentId, id }, ctx) =>
      webhooks.findWebhookForGraph(
        await ctx.actor(),
        { agentId: String(agentId), webhookId: String(id) },
        query,
      ),
  }),
}));

const CreateWebhookInput = builder.inputType("CreateWebhookInput", {
  description: "The body of POST /api/agents/{id}/webhooks.",
  fields: (t) => ({
    event: t.string({ required: true, description: `One of: ${WEBHOOK_EVENTS.join(", ")}.` }),
    url: t.string({ required: true }),
    method: t.string({ description: "POST (default), PUT or PATCH." }),
    headers: t.field({ type: "JSON", description: "An object of header name to value." }),
  }),
});

const UpdateWebhookInput = builder.inputType("UpdateWebhookInput", {
  description: "PATCH semantics: only the fields given change.",
  fields: (t) => ({
    event: t.string(),
    url: t.string(),
    method: t.string(),
    headers: t.field({ type: "JSON" }),
  }),
});

/** Arguments naming one webhook of one agent. */
const ids = (args: { agentId: string | number; id: string | number }) => ({
  agentId: String(args.agentId),
  webhookId: String(args.id),
});

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: WebhookWithSecret,
    authScopes: { member: true },
    args: {
      agentId: t.arg.id({ required: true }),
      input: t.arg({ type: CreateWebhookInput, required: true }),
    },
    resolve: async (_root, { agentId, input }, ctx) => {
      const { signingSecret, ...webhook } = await webhooks.createWebhook(
        await ctx.actor(),
        String(agentId),
        input,
      );
      return { webhook, signingSecret };
    },
  }),
  updateWebhook: t.field({
    type: Webhook,
    authScopes: { member: true },
    args: {
      agentId: t.arg.id({ required: true }),
      id: t.arg.id({ required: true }),
      input: t.arg({ type: UpdateWebhookInput, required: true }),
    },
    resolve: async (_root, args, ctx) => webhooks.updateWebhook(await ctx.actor(), ids(args), args.input),
  }),
  rotateWebhookSecret: t.field({
    type: WebhookWithSecret,
    authScopes: { member: true },
    args: { agentId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const { signingSecret, ...webhook } = await webhooks.rotateWebhookSecret(await ctx.actor(), ids(args));
      return { webhook, signingSecret };
    },
  }),
  deleteWebhook: t.id({
    authScopes: { member: true },
    args: { agentId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      await webhooks.deleteWebhook(await ctx.actor(), ids(args));
      return args.id;
    },
  }),
}));
