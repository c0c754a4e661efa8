export * from "./service.ts";
export { renderSystemPrompt, TEMPLATES } from "./template.ts";
export { agentCounts, type AgentCounts } from "./counts.ts";
