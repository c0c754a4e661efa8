/** The declared types of src/webhooks: registrations, their delivery log and each delivery's attempts. */
import { builder } from "../builder.ts";
import { sql } from "../../shared/sql_fragment.ts";
import { computedField, presentedField, typePlan } from "../declared.ts";
import { connectionOf, enumOf } from "../common_types.ts";
import { DeliveryStatus, HttpMethod, WEBHOOK_EVENTS } from "../../webhooks/schemas.ts";
import { presentHeaders, presentUrl, webhookPrivate } from "../../webhooks/views.ts";

export const WebhookDeliveryAttempt = builder.prismaObject("DeliveryAttempt", {
  name: "WebhookDeliveryAttempt",
  extensions: typePlan({ label: "Attempt" }),
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

/** A delivery as the log shows it: the event's type in `event`, every attempt oldest first. */
export const WebhookDelivery = builder.prismaObject("WebhookDelivery", {
  extensions: typePlan({ label: "Delivery" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    eventId: t.exposeID("eventId", { description: "Also the `webhook-id` header of each call." }),
    event: t.string({
      description: "The event's type (message.sent, webhook.test, ...).",
      ...computedField({
        sql: (d) => sql`(SELECT e.type FROM "DomainEvent" e WHERE e.id = ${d}."eventId")`,
        row: (delivery: { event: { type: string } }) => delivery.event.type,
      }),
      select: { event: { select: { type: true } } },
    }),
    status: t.expose("status", { type: enumOf(DeliveryStatus) }),
    attemptCount: t.exposeInt("attemptCount"),
    idempotencyKey: t.exposeString("idempotencyKey", {
      description: "X-Idempotency-Key: hex SHA-256 of the event's id, the same on every attempt.",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    attempts: t.relation("attempts", {
      description: "Oldest first.",
      query: { orderBy: { number: "asc" } },
    }),
  }),
});

/** An event webhook registration. The signing secret is never a field: it is shown once, by the writes. */
export const Webhook = builder.prismaObject("EventWebhook", {
  name: "Webhook",
  extensions: typePlan({ label: "Webhook", private: webhookPrivate }),
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    event: t.exposeString("event", { description: `One of: ${WEBHOOK_EVENTS.join(", ")}.` }),
    url: t.string({
      description: "Credential-like query values are masked for AGENT and VIEWER.",
      ...presentedField(presentUrl, (webhook) => webhook.url),
    }),
    method: t.expose("method", { type: enumOf(HttpMethod) }),
    headers: t.field({
      type: "JSON",
      description:
        "Extra headers sent with each call (name to value); values are masked for AGENT and VIEWER.",
      ...presentedField(presentHeaders, (webhook) => webhook.headers),
    }),
    lastError: t.expose("lastError", { type: "JSON", nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    deliveries: t.relatedConnection(
      "deliveries",
      {
        cursor: "id",
        description: "The delivery log, newest first.",
        query: { orderBy: [{ createdAt: "desc" }, { id: "desc" }] },
      },
      connectionOf(WebhookDelivery),
    ),
  }),
});
