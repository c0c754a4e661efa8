/** Conversations: the pure parts of the reply pipeline (prompt, intent tags and calls, shaping). */
export {
  intentsForTypes,
  type IntentTagMatch,
  parseIntentTags,
  renderTag,
  replaceTags,
  SKIPPING_INTENT,
  type TaggedIntent,
  type TagMatch,
  TRANSFER_TAG,
  type TransferTagMatch,
} from "./intent_tags.ts";
export {
  callIntentWebhook,
  type IntentCall,
  type IntentContext,
  type IntentOutcome,
  intentOutcome,
  type IntentRequestBody,
} from "./intent_call.ts";
export { shapeReply, type ShapingFlags, signaturePrefix, splitMessages, stripEmoji } from "./shaping.ts";
export {
  buildReplyPrompt,
  type ChatMessage,
  type PromptAgent,
  type PromptIntent,
  type PromptMessage,
  type ReplyPrompt,
  type ReplyPromptInput,
} from "./prompt.ts";
export {
  autoCloseDueAt,
  type ConversationTimes,
  GROUPING_DELAY_MS,
  groupingWindowEndsAt,
  isDue,
  mayReplyToday,
  type MessageGroupingTime,
  reminderDueAt,
  utcDay,
} from "./timing.ts";
