/**
 * The delivery log of an event webhook, its test event and manual redelivery: the GraphQL face of
 * src/webhooks/deliveries.ts. A delivery has the fields of the REST DeliveryView, so both agree.
 * `Webhook.deliveries` (./webhooks.ts) pages the log through the service, one bounded statement each.
 */
import { builder } from "../builder.ts";
import * as webhooks from "../../webhooks/mod.ts";
import { DeliveryStatus } from "../../generated/prisma/enums.ts";

/** PENDING while attempts are due; SUCCEEDED or FAILED once a cycle of attempts ended. */
const WebhookDeliveryStatusEnum = builder.enumType(DeliveryStatus, { name: "WebhookDeliveryStatus" });

const WebhookDeliveryAttempt = builder.prismaObject("DeliveryAttempt", {
  name: "WebhookDeliveryAttempt",
  description: "One HTTP call of a delivery.",
  select: { id: true },
  fields: (t) => ({
    number: t.exposeInt("number", { description: "1-based, counted across redeliveries." }),
    startedAt: t.expose("startedAt", { type: "DateTime" }),
    durationMs: t.exposeInt("durationMs"),
    httpStatus: t.exposeInt("httpStatus", {
      nullable: true,
      description: "The receiver's status; null when no answer came (connection error, timeout, refused).",
    }),
    error: t.exposeString("error", { nullable: true }),
  }),
});

/** One event sent to one webhook, with every attempt made. */
export const WebhookDelivery = builder.prismaObject("WebhookDelivery", {
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID("id"),
    eventId: t.exposeID("eventId", { description: "Also the `webhook-id` header of each call." }),
    event: t.string({
      description: "The event's type (message.sent, webhook.test, ...).",
      select: { event: { select: { type: true } } },
      resolve: (d) => d.event.type,
    }),
    status: t.expose("status", { type: WebhookDeliveryStatusEnum }),
    attemptCount: t.exposeInt("attemptCount"),
    idempotencyKey: t.exposeString("idempotencyKey", {
      description: "X-Idempotency-Key: hex SHA-256 of the event's id, the same on every attempt.",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    attempts: t.relation("attempts", {
      type: WebhookDeliveryAttempt,
      description: "Oldest first.",
      query: { orderBy: { number: "asc" } },
    }),
  }),
});

/** Webhook.deliveries: newest first, as the REST log. */
export const WebhookDeliveryConnection = builder.connectionObject({
  type: WebhookDelivery,
  name: "WebhookDeliveryConnection",
});

/** Arguments naming one delivery of one webhook of one agent. */
const deliveryIds = (
  args: { agentId: string | number; webhookId: string | number; id: string | number },
) => ({
  agentId: String(args.agentId),
  webhookId: String(args.webhookId),
  deliveryId: String(args.id),
});

builder.queryFields((t) => ({
  webhookDelivery: t.prismaField({
    type: WebhookDelivery,
    authScopes: { member: true },
    args: {
      agentId: t.arg.id({ required: true }),
      webhookId: t.arg.id({ required: true }),
      id: t.arg.id({ required: true }),
    },
    resolve: async (query, _root, args, ctx) =>
      webhooks.findWebhookDeliveryForGraph(await ctx.actor(), deliveryIds(args), query),
  }),
}));

builder.mutationFields((t) => ({
  sendWebhookTest: t.prismaField({
    type: WebhookDelivery,
    description: "Sends a webhook.test event to this webhook alone; the delivery is answered PENDING and " +
      "sent in the background (signed, retried and logged like any event).",
    authScopes: { member: true },
    args: { agentId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) =>
      webhooks.sendTestEventForGraph(
        await ctx.actor(),
        { agentId: String(args.agentId), webhookId: String(args.id) },
        query,
      ),
  }),
  redeliverWebhookDelivery: t.prismaField({
    type: WebhookDelivery,
    description: "Starts a new cycle of attempts for a FAILED delivery (DELIVERY_NOT_FAILED otherwise); " +
      "answered PENDING.",
    authScopes: { member: true },
    args: {
      agentId: t.arg.id({ required: true }),
      webhookId: t.arg.id({ required: true }),
      id: t.arg.id({ required: true }),
    },
    resolve: async (query, _root, args, ctx) =>
      webhooks.redeliverWebhookDeliveryForGraph(await ctx.actor(), deliveryIds(args), query),
  }),
}));
