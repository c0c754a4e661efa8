/** The readable types of src/conversations: conversations, their messages and contacts (see shared/view.ts). */
import { declaredType, enumType, type JsonObjectType } from "../shared/view.ts";

export const ConversationStatus = enumType(
  "ConversationStatus",
  ["OPEN", "HUMAN", "CLOSED"],
  "OPEN: the agent answers; HUMAN: transferred or taken over, the agent is silent; CLOSED.",
);
export const Sender = enumType("Sender", ["CUSTOMER", "AI", "HUMAN", "SYSTEM"], "Who wrote a message.");
export const MessageStatus = enumType(
  "MessageStatus",
  ["RECEIVED", "PENDING", "SENT", "DELIVERED", "READ", "FAILED", "UNCONFIRMED"],
  "RECEIVED: a customer's; PENDING, SENT, DELIVERED, READ as the channel reports, or FAILED with `error`; UNCONFIRMED: the sender stopped during the send, so it may have reached the customer (not sent again).",
);
export const MessageContentType = enumType(
  "MessageContentType",
  ["TEXT", "AUDIO", "IMAGE", "DOCUMENT", "LOCATION", "OTHER", "TEMPLATE"],
  "What a message carries; a media message's file is described by `media`; a TEMPLATE message is a WhatsApp template the business sent (`template`).",
);

/** A media message's file (docs/behaviour.md "Media"). */
export const MessageMediaType: JsonObjectType = {
  name: "MessageMedia",
  description: "The file of an AUDIO, IMAGE or DOCUMENT message (and of OTHER media such as stickers); " +
    "its bytes are served by GET /api/messages/{messageId}/media.",
  fields: {
    id: { type: "String", description: "The channel's media id." },
    url: {
      type: "String",
      description: "Where the file is served: GET this path of the API with the reader's credentials " +
        "(the message's `mediaSignedUrl` needs none).",
    },
    mimeType: { type: "String", nullable: true },
    size: { type: "Int", nullable: true, description: "Bytes, once the channel described the file." },
    fileName: { type: "String", nullable: true, description: "A document's name as the customer sent it." },
    error: {
      type: "String",
      nullable: true,
      description:
        "Why the file could not be fetched or understood (it is missing, too large, not transcribed...).",
    },
  },
};

/** A contact: declared with Pothos (src/graphql/types/conversations.ts). */
export const contactView = declaredType("Contact");

/** A message: declared with Pothos (src/graphql/types/conversations.ts). */
export const messageView = declaredType("Message");

/** A conversation: declared with Pothos (src/graphql/types/conversations.ts). */
export const conversationView = declaredType("Conversation");

/**
 * WhatsApp's customer service window of a conversation: free-form messages reach the customer only
 * for 24 hours after the customer's latest message, and not after Meta refused one with 131047
 * (until the customer writes again). Always open on API channels.
 */
export const ConversationWindowType: JsonObjectType = {
  name: "ConversationWindow",
  description: "WhatsApp's customer service window: free-form messages go out only while it is open " +
    "(24 hours after the customer's latest message). Always open on API channels.",
  fields: {
    open: { type: "Boolean" },
    closesAt: {
      type: "DateTime",
      nullable: true,
      description: "The customer's latest message + 24 h; null on API channels.",
    },
  },
};

/** How long WhatsApp's window stays open after the customer's latest message. */
export const WINDOW_MS = 24 * 3600_000;

/** Whether Meta refused a message with 131047 since the customer's latest message. */
export const refusedByMeta = (c: { lastContactMessageAt: Date | null; windowClosedAt: Date | null }) =>
  c.windowClosedAt !== null && c.lastContactMessageAt !== null && c.windowClosedAt >= c.lastContactMessageAt;

/** The window of a conversation row (with its channel's type), at `now`. */
export function windowOf(
  c: { lastContactMessageAt: Date | null; windowClosedAt: Date | null; channel: { type: string } },
  now: Date,
): { open: boolean; closesAt: string | null } {
  if (c.channel.type !== "WHATSAPP") return { open: true, closesAt: null };
  const last = c.lastContactMessageAt;
  if (!last) return { open: false, closesAt: null };
  const closesAt = new Date(last.getTime() + WINDOW_MS);
  return { open: closesAt > now && !refusedByMeta(c), closesAt: closesAt.toISOString() };
}

/** What Meta bills a delivered WhatsApp message for (from its status webhooks). */
export const MessagePricingType: JsonObjectType = {
  name: "MessagePricing",
  description: "What Meta bills the message for, from its status webhooks (null until one says).",
  fields: {
    category: {
      type: "String",
      description: "Meta's pricing.category, lowercased: marketing, utility, authentication, service...",
    },
    billable: { type: "Boolean" },
  },
};

/** The WhatsApp template a TEMPLATE message sent. */
export const MessageTemplateType: JsonObjectType = {
  name: "MessageTemplate",
  description:
    "The WhatsApp template a TEMPLATE message sent (its `content` is the body with the parameters filled in).",
  fields: {
    name: { type: "String" },
    language: { type: "String" },
  },
};

/** A text of a JSON value as PostgreSQL's `->>` gives it for a string or a number; null otherwise. */
const textOf = (v: unknown): string | null =>
  typeof v === "string" ? v : typeof v === "number" ? String(v) : null;

/**
 * The one-line reason of a message's `error`, as the channel gave it: a send's answer
 * (`{ message, ... }`, Meta's message and details already joined) or a `failed` status' first
 * error (`{ errors: [{ code, title, message, details }] }`: `(#code) message: details`, the title
 * when there is no message). Null without an error or a reason. The Message type's `errorMessage`
 * repeats this in SQL.
 */
export function errorMessageOf(error: unknown): string | null {
  if (error === null || typeof error !== "object" || Array.isArray(error)) return null;
  const e = error as Record<string, unknown>;
  if (!Array.isArray(e.errors)) return textOf(e.message);
  const first = e.errors[0];
  if (first === null || typeof first !== "object" || Array.isArray(first)) return null;
  const f = first as Record<string, unknown>;
  const said = textOf(f.message) || textOf(f.title) || null;
  if (said === null) return null;
  const code = textOf(f.code);
  const details = textOf(f.details);
  return `${code === null ? "" : `(#${code}) `}${said}${details ? `: ${details}` : ""}`;
}
