/** What the API can do with event webhooks and their delivery log, declared once (see shared/capability.ts). */
import { defineRead } from "../shared/capability.ts";
import { agentView } from "../agents/views.ts";

const webhookParams = { agentId: "Agent", webhookId: "Webhook" } as const;

export const webhooks = defineRead({
  name: "webhooks",
  summary: "The agent's event webhooks, oldest first.",
  action: "workspace:read",
  params: { agentId: "Agent" },
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "webhooks" }],
  http: { path: "/api/agents/{agentId}/webhooks" },
});

export const webhook = defineRead({
  name: "webhook",
  summary: "One event webhook of the agent.",
  action: "workspace:read",
  params: webhookParams,
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "webhooks", idParam: "webhookId" }],
  http: { path: "/api/agents/{agentId}/webhooks/{webhookId}" },
});

export const webhookDeliveries = defineRead({
  name: "webhookDeliveries",
  summary: "The webhook's delivery log, newest first.",
  action: "workspace:read",
  params: webhookParams,
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "webhooks", idParam: "webhookId" }, { relation: "deliveries" }],
  http: { path: "/api/agents/{agentId}/webhooks/{webhookId}/deliveries" },
  // REST shows each delivery with its attempts.
  rest: {
    fields: [
      "id",
      "eventId",
      "event",
      "status",
      "attemptCount",
      "idempotencyKey",
      "createdAt",
      "updatedAt",
      "attempts",
    ],
  },
});

export const webhookDelivery = defineRead({
  name: "webhookDelivery",
  summary: "One delivery of the webhook, with its attempts.",
  action: "workspace:read",
  params: { ...webhookParams, deliveryId: "Delivery" },
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "webhooks", idParam: "webhookId" }, { relation: "deliveries", idParam: "deliveryId" }],
  http: { path: "/api/agents/{agentId}/webhooks/{webhookId}/deliveries/{deliveryId}" },
  // REST shows each delivery with its attempts.
  rest: {
    fields: [
      "id",
      "eventId",
      "event",
      "status",
      "attemptCount",
      "idempotencyKey",
      "createdAt",
      "updatedAt",
      "attempts",
    ],
  },
});
