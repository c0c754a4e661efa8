export * from "./service.ts";
export { renderSystemPrompt, TEMPLATES } from "./template.ts";
export { type AgentCounts, agentCounts } from "./counts.ts";
