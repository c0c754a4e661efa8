import { z } from "zod";
import { enumType } from "../shared/view.ts";

/** The event types a webhook can subscribe to, named as the API names them. */
export const WEBHOOK_EVENTS = [
  "message.received",
  "message.sent",
  "conversation.opened",
  "conversation.closed",
  "human.transferred",
  "intent.fired",
] as const;
export const DeliveryStatus = enumType("WebhookDeliveryStatus", ["PENDING", "SUCCEEDED", "FAILED"]);

/** How a webhook or intent URL is called. */
export const HttpMethod = enumType("HttpMethod", ["POST", "PUT", "PATCH"], "How the URL is called.");

export type WebhookEventName = typeof WEBHOOK_EVENTS[number];

// Headers the platform sets itself or that would break the HTTP exchange.
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "connection",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-authorization",
  "x-idempotency-key",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

// What fetch() can send as a header value: one line, printable, no character beyond U+00FF.
const headerValue = z.string().max(4096).regex(/^[\t\x20-\x7e\x80-\xff]*$/, "must be one printable line");

const headers = z.record(z.string(), headerValue)
  .superRefine((h, ctx) => {
    const names = Object.keys(h);
    if (names.length > 50) ctx.addIssue({ code: "custom", message: "at most 50 headers" });
    for (const name of names) {
      if (!HEADER_NAME.test(name)) {
        ctx.addIssue({ code: "custom", path: [name], message: "is not a valid header name" });
      } else if (RESERVED_HEADERS.has(name.toLowerCase())) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: "is set by the platform and cannot be overridden",
        });
      }
    }
  });

const fields = {
  event: z.enum(WEBHOOK_EVENTS).describe(`One of: ${WEBHOOK_EVENTS.join(", ")}.`),
  url: z.string().trim().max(2048),
  method: HttpMethod.schema,
  headers,
};

export const createWebhookSchema = z.strictObject({
  ...fields,
  method: fields.method.default("POST").describe("POST (default), PUT or PATCH."),
  headers: fields.headers.default({}).describe("An object of header name to value."),
});
export const updateWebhookSchema = z.strictObject({
  event: fields.event.optional(),
  url: fields.url.optional(),
  method: fields.method.optional(),
  headers: fields.headers.optional(),
});
