/** The readable types of src/webhooks: registrations, their deliveries and attempts (see shared/view.ts). */
import { declaredView, defineView, type FieldSpec } from "../shared/view.ts";
import { MASK, maskUrlSecrets, openUrlSecrets } from "../shared/url_secrets.ts";
import { can } from "../auth/permissions.ts";
import { DeliveryStatus, HttpMethod, WEBHOOK_EVENTS } from "./schemas.ts";

/**
 * URLs (webhook and intent) are stored with credential-like query values sealed: opened for roles
 * with webhook:secrets, masked for the others.
 */
export const presentUrl: FieldSpec["present"] = {
  apply: (ctx, url) =>
    can(ctx.actor, "webhook:secrets")
      ? openUrlSecrets(ctx.secrets, String(url))
      : maskUrlSecrets(String(url)),
};

/** Stored header values are sealed: opened for roles with webhook:secrets, masked for the others. */
const presentHeaders: FieldSpec["present"] = {
  apply: (ctx, stored) => {
    const headers = (stored ?? {}) as Record<string, string>;
    if (can(ctx.actor, "webhook:secrets")) return ctx.secrets.openValues(headers);
    return Object.fromEntries(Object.keys(headers).map((k) => [k, MASK]));
  },
};

/** A delivery's attempt: declared with Pothos (src/graphql/types/webhooks.ts). */
export const deliveryAttemptView = declaredView("WebhookDeliveryAttempt");

/** A delivery as the log shows it: the event's type in `event`, every attempt oldest first. */
export const deliveryView = defineView({
  name: "WebhookDelivery",
  label: "Delivery",
  table: "WebhookDelivery",
  fields: {
    id: { type: "ID" },
    eventId: { type: "ID", description: "Also the `webhook-id` header of each call." },
    event: {
      type: "String",
      description: "The event's type (message.sent, webhook.test, ...).",
      sql: (t) => `(SELECT e.type FROM "DomainEvent" e WHERE e.id = ${t}."eventId")`,
    },
    status: { type: DeliveryStatus },
    attemptCount: { type: "Int" },
    idempotencyKey: {
      type: "String",
      description: "X-Idempotency-Key: hex SHA-256 of the event's id, the same on every attempt.",
    },
    createdAt: { type: "DateTime" },
    updatedAt: { type: "DateTime" },
  },
  relations: {
    attempts: {
      kind: "list",
      view: () => deliveryAttemptView,
      foreignKey: "deliveryId",
      orderBy: "number",
      description: "Oldest first.",
    },
  },
});

/** An event webhook registration. The signing secret is never a field: it is shown once, by the writes. */
export const webhookView = defineView({
  name: "Webhook",
  label: "Webhook",
  table: "EventWebhook",
  fields: {
    id: { type: "ID" },
    agentId: { type: "ID" },
    event: { type: "String", description: `One of: ${WEBHOOK_EVENTS.join(", ")}.` },
    url: {
      type: "String",
      description: "Credential-like query values are masked for AGENT and VIEWER.",
      present: presentUrl,
    },
    method: { type: HttpMethod },
    headers: {
      type: "JSON",
      description:
        "Extra headers sent with each call (name to value); values are masked for AGENT and VIEWER.",
      present: presentHeaders,
    },
    lastError: { type: "JSON", nullable: true },
    createdAt: { type: "DateTime" },
    updatedAt: { type: "DateTime" },
  },
  relations: {
    deliveries: {
      kind: "connection",
      view: () => deliveryView,
      foreignKey: "webhookId",
      order: "desc",
      description: "The delivery log, newest first.",
    },
  },
});
