/** What tests of event webhooks share. */

/** The keys of a webhook as every read answers it, sorted: never a signing secret. */
export const WEBHOOK_VIEW_KEYS = [
  "agentId",
  "createdAt",
  "event",
  "headers",
  "id",
  "lastError",
  "method",
  "updatedAt",
  "url",
];
