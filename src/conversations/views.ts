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
  ["TEXT", "AUDIO", "IMAGE", "DOCUMENT", "LOCATION", "OTHER"],
  "What a message carries; a media message's file is described by `media`.",
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
