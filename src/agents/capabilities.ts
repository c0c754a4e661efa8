/** What the API can do with agents and their prompts, declared once (see shared/capability.ts). */
import { defineRead } from "../shared/capability.ts";
import { agentView } from "./views.ts";

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
