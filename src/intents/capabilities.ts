/** What the API can do with intents, declared once (see shared/capability.ts). */
import { defineOperation, defineRead } from "../shared/capability.ts";
import { agentView } from "../agents/views.ts";
import { intentView } from "./views.ts";
import { createIntentSchema, updateIntentSchema } from "./schemas.ts";
import * as service from "./service.ts";

const intentParams = { agentId: "Agent", intentId: "Intent" } as const;

export const intents = defineRead({
  name: "intents",
  summary: "The agent's intents, oldest first.",
  action: "workspace:read",
  params: { agentId: "Agent" },
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "intents" }],
  http: { path: "/api/agents/{agentId}/intents" },
});

export const intent = defineRead({
  name: "intent",
  summary: "One intent of the agent.",
  action: "workspace:read",
  params: intentParams,
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "intents", idParam: "intentId" }],
  http: { path: "/api/agents/{agentId}/intents/{intentId}" },
});

export const createIntent = defineOperation({
  name: "createIntent",
  summary: "Creates an intent; 409 DUPLICATE_INTENT when the agent has one with the same tag.",
  access: { kind: "workspace", action: "agent:write" },
  params: { agentId: "Agent" },
  input: createIntentSchema,
  output: { view: intentView },
  http: { method: "POST", path: "/api/agents/{agentId}/intents", status: 201 },
  run: (ctx, { agentId }, input) => service.createIntent(ctx, agentId, input),
});

export const updateIntent = defineOperation({
  name: "updateIntent",
  summary: "Changes the fields given.",
  access: { kind: "workspace", action: "agent:write" },
  params: intentParams,
  target: "intentId",
  input: updateIntentSchema,
  output: { view: intentView },
  http: { method: "PATCH", path: "/api/agents/{agentId}/intents/{intentId}" },
  run: (ctx, ids, input) =>
    service.updateIntent(ctx, { agentId: ids.agentId, intentId: ids.intentId }, input),
});

export const deleteIntent = defineOperation({
  name: "deleteIntent",
  summary: "Deletes the intent.",
  access: { kind: "workspace", action: "agent:write" },
  params: intentParams,
  target: "intentId",
  output: { none: true },
  http: { method: "DELETE", path: "/api/agents/{agentId}/intents/{intentId}", status: 204 },
  run: (ctx, ids) => service.deleteIntent(ctx, { agentId: ids.agentId, intentId: ids.intentId }),
});
