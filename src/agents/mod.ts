export * from "./service.ts";
export { renderSystemPrompt, TEMPLATES } from "./template.ts";
