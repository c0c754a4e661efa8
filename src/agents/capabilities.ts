/** What the API can do with agents and their prompts, declared once (see shared/capability.ts). */
import { defineOperation, defineRead } from "../shared/capability.ts";
import { agentView } from "./views.ts";
import * as service from "./service.ts";
import {
  createAgentSchema,
  replaceAgentSchema,
  revertPromptSchema,
  setStatusSchema,
  updatePromptSchema,
} from "./schemas.ts";

const agentParam = { agentId: "Agent" } as const;

export const agents = defineRead({
  name: "agents",
  summary: "The workspace's agents, oldest first, with their counts.",
  action: "workspace:read",
  params: {},
  from: { view: agentView },
  http: { path: "/api/agents" },
  rest: { fields: ["id", "name", "status", "template", "model", ["_count", "counts"]] },
});

export const agent = defineRead({
  name: "agent",
  summary: "One agent with every field.",
  action: "workspace:read",
  params: agentParam,
  from: { view: agentView, idParam: "agentId" },
  http: { path: "/api/agents/{agentId}" },
});

export const promptVersions = defineRead({
  name: "promptVersions",
  summary: "The agent's prompt versions, newest first.",
  action: "workspace:read",
  params: agentParam,
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "promptVersions" }],
  http: { path: "/api/agents/{agentId}/prompt-versions" },
});

export const createAgent = defineOperation({
  name: "createAgent",
  summary:
    "Creates an agent, ACTIVE, with a system prompt generated from its template; omitted fields take their defaults.",
  access: { kind: "workspace", action: "agent:write" },
  params: {},
  input: createAgentSchema,
  output: { view: agentView },
  http: { method: "POST", path: "/api/agents", status: 201 },
  run: (ctx, _params, input) => service.createAgent(ctx, input),
});

export const replaceAgent = defineOperation({
  name: "replaceAgent",
  summary:
    "Replaces the whole agent: omitted optional fields become null, omitted flags, template and model return to their defaults; read-only fields are ignored.",
  access: { kind: "workspace", action: "agent:write" },
  params: agentParam,
  target: "agentId",
  input: replaceAgentSchema,
  output: { view: agentView },
  http: { method: "PUT", path: "/api/agents/{agentId}" },
  run: (ctx, { agentId }, input) => service.replaceAgent(ctx, agentId, input),
});

export const setAgentStatus = defineOperation({
  name: "setAgentStatus",
  summary: "Sets ACTIVE (answers) or PAUSED (stores incoming messages without answering).",
  access: { kind: "workspace", action: "agent:write" },
  params: agentParam,
  target: "agentId",
  input: setStatusSchema,
  output: { view: agentView },
  http: { method: "PATCH", path: "/api/agents/{agentId}/status" },
  run: (ctx, { agentId }, input) => service.setAgentStatus(ctx, agentId, input),
});

export const updateAgentPrompt = defineOperation({
  name: "updateAgentPrompt",
  summary: "Sets the system prompt and records a prompt version.",
  access: { kind: "workspace", action: "agent:write" },
  params: agentParam,
  target: "agentId",
  input: updatePromptSchema,
  output: { view: agentView },
  http: { method: "PUT", path: "/api/agents/{agentId}/prompt" },
  run: (ctx, { agentId }, input) => service.updatePrompt(ctx, agentId, input),
});

export const revertAgentPrompt = defineOperation({
  name: "revertAgentPrompt",
  summary: "Restores an earlier prompt version's text; this itself records a new version.",
  access: { kind: "workspace", action: "agent:write" },
  params: { agentId: "Agent", versionId: "Prompt version" },
  target: "agentId",
  input: revertPromptSchema,
  output: { view: agentView },
  http: { method: "POST", path: "/api/agents/{agentId}/prompt-versions/{versionId}/revert" },
  run: (ctx, { agentId, versionId }, input) => service.revertPrompt(ctx, agentId, versionId, input),
});

export const deleteAgent = defineOperation({
  name: "deleteAgent",
  summary: "Deletes the agent with its conversations, messages, intents, channels and webhooks.",
  access: { kind: "workspace", action: "agent:write" },
  params: agentParam,
  target: "agentId",
  output: { none: true },
  http: { method: "DELETE", path: "/api/agents/{agentId}", status: 204 },
  run: (ctx, { agentId }) => service.deleteAgent(ctx, agentId),
});
