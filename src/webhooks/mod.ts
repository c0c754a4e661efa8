export * from "./service.ts";
export { WEBHOOK_EVENTS, type WebhookEventName } from "./schemas.ts";
