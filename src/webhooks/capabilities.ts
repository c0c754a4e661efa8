/** What the API can do with event webhooks and their delivery log, declared once (see shared/capability.ts). */
import { z } from "zod";
import { defineOperation, defineRead } from "../shared/capability.ts";
import { agentView } from "../agents/views.ts";
import { deliveryView, webhookView } from "./views.ts";
import { createWebhookSchema, updateWebhookSchema } from "./schemas.ts";
import * as service from "./service.ts";
import * as deliveries from "./deliveries.ts";

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
});

export const webhookDelivery = defineRead({
  name: "webhookDelivery",
  summary: "One delivery of the webhook, with its attempts.",
  action: "workspace:read",
  params: { ...webhookParams, deliveryId: "Delivery" },
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "webhooks", idParam: "webhookId" }, { relation: "deliveries", idParam: "deliveryId" }],
  http: { path: "/api/agents/{agentId}/webhooks/{webhookId}/deliveries/{deliveryId}" },
});

const withSecret = {
  extra: z.object({
    signingSecret: z.string().describe("Standard Webhooks secret (whsec_...), shown this once."),
  }),
  nested: { name: "WebhookWithSecret", rowKey: "webhook" },
};

export const createWebhook = defineOperation({
  name: "createWebhook",
  summary: "Registers an event webhook; the answer carries its signing secret, shown this once.",
  access: { kind: "workspace", action: "agent:write" },
  params: { agentId: "Agent" },
  input: createWebhookSchema,
  output: { view: webhookView, ...withSecret },
  http: { method: "POST", path: "/api/agents/{agentId}/webhooks", status: 201 },
  run: (ctx, { agentId }, input) => service.createWebhook(ctx, agentId, input),
});

export const updateWebhook = defineOperation({
  name: "updateWebhook",
  summary: "Changes the fields given.",
  access: { kind: "workspace", action: "agent:write" },
  params: webhookParams,
  target: "webhookId",
  input: updateWebhookSchema,
  output: { view: webhookView },
  http: { method: "PATCH", path: "/api/agents/{agentId}/webhooks/{webhookId}" },
  run: (ctx, ids, input) => service.updateWebhook(ctx, ids, input),
});

export const rotateWebhookSecret = defineOperation({
  name: "rotateWebhookSecret",
  summary:
    "A new signing secret, shown this once; the replaced one also signs deliveries for 24 hours, so receivers can switch without rejecting a call.",
  access: { kind: "workspace", action: "agent:write" },
  params: webhookParams,
  target: "webhookId",
  output: { view: webhookView, ...withSecret },
  http: { method: "POST", path: "/api/agents/{agentId}/webhooks/{webhookId}/rotate-secret" },
  run: (ctx, ids) => service.rotateWebhookSecret(ctx, ids),
});

export const deleteWebhook = defineOperation({
  name: "deleteWebhook",
  summary: "Deletes the webhook and its delivery log.",
  access: { kind: "workspace", action: "agent:write" },
  params: webhookParams,
  target: "webhookId",
  output: { none: true },
  http: { method: "DELETE", path: "/api/agents/{agentId}/webhooks/{webhookId}", status: 204 },
  run: (ctx, ids) => service.deleteWebhook(ctx, ids),
});

export const sendWebhookTest = defineOperation({
  name: "sendWebhookTest",
  summary:
    "Sends a webhook.test event to this webhook alone; the delivery is answered PENDING and sent in the background (signed, retried and logged like any event).",
  access: { kind: "workspace", action: "agent:write" },
  params: webhookParams,
  target: "webhookId",
  output: { view: deliveryView },
  // 202: the delivery is accepted and sent in the background; its log shows how it went.
  http: { method: "POST", path: "/api/agents/{agentId}/webhooks/{webhookId}/test", status: 202 },
  run: (ctx, ids) => deliveries.sendTestEvent(ctx, ids),
});

export const redeliverWebhookDelivery = defineOperation({
  name: "redeliverWebhookDelivery",
  summary:
    "Starts a new cycle of attempts for a FAILED delivery (409 DELIVERY_NOT_FAILED otherwise); answered PENDING.",
  access: { kind: "workspace", action: "agent:write" },
  params: { ...webhookParams, deliveryId: "Delivery" },
  target: "deliveryId",
  output: { view: deliveryView },
  http: {
    method: "POST",
    path: "/api/agents/{agentId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver",
    status: 202,
  },
  run: (ctx, ids) => deliveries.redeliverWebhookDelivery(ctx, ids),
});
