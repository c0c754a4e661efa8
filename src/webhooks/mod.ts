export * from "./service.ts";
export * from "./deliveries.ts";
export type { WebhookLastError } from "./delivery.ts";
export { WEBHOOK_EVENTS, type WebhookEventName } from "./schemas.ts";
