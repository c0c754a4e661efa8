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
