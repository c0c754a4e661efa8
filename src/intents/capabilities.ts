/** What the API can do with intents, declared once (see shared/capability.ts). */
import { defineRead } from "../shared/capability.ts";
import { agentView } from "../agents/views.ts";

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
  params: { agentId: "Agent", intentId: "Intent" },
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "intents", idParam: "intentId" }],
  http: { path: "/api/agents/{agentId}/intents/{intentId}" },
});
