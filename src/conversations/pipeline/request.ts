/**
 * The model request of one reply, from what the reply read: the history before the window, the
 * intents that may fire for the window's message types (a media message counts once understood),
 * each message as the model reads it (a transcript, a document's text, a shown image) and the
 * agent's prompt (../prompt.ts). The live reply (./reply.ts) and the replay of an agent change
 * (src/replay/) build their requests here, so both ask the model the same way. Pure.
 */
import { buildReplyPrompt, PENDING_MAX_CHARS, type PromptMessage, type ReplyPrompt } from "../prompt.ts";
import { modelText, understoodType } from "../../media/understanding.ts";
import { intentsForTypes } from "../intent_tags.ts";
import type { HistoryMessage, PendingMessage, ReplyAgent, ReplyIntent } from "../sql.ts";

/** The agent's columns a request is made of. */
export type RequestAgent = Pick<
  ReplyAgent,
  "name" | "systemPrompt" | "trainingContext" | "model" | "temperature" | "enabledHumanTransfer"
>;

export interface ReplyRequestInput {
  agent: RequestAgent;
  /** Every intent of the agent; those the window's types may trigger are offered. */
  intents: readonly ReplyIntent[];
  /** The latest messages before the window, oldest first (the window's own are left out here). */
  history: readonly HistoryMessage[];
  /** The customer messages the reply answers, oldest first. */
  pending: readonly PendingMessage[];
  /** The window's images the model sees, as data: URLs by message id. */
  images: ReadonlyMap<string, string>;
  contactName: string;
  /** When the reply is made: the model is told the date and time. */
  now: Date;
  /** DOCUMENT_MAX_CHARS: a document's text may come on top of the window's usual bound. */
  documentMaxChars: number;
}

export interface ReplyRequest {
  prompt: ReplyPrompt;
  /** The intents offered, whose tags the answer may hold (parseIntentTags). */
  intents: ReplyIntent[];
}

export function replyRequest(input: ReplyRequestInput): ReplyRequest {
  const { pending, images } = input;
  const pendingIds = new Set(pending.map((m) => m.id));
  // The latest messages before the window; customer messages newer than the claim are not history.
  const history: PromptMessage[] = input.history.filter((m) => !pendingIds.has(m.id)).map((m) => ({
    sender: m.sender,
    content: modelText(m, { inWindow: false }),
  }));
  // A media message triggers intents of its type once understood (a transcript, a seen image, a read document).
  const types = pending.map((m) => understoodType(m, { imageShown: images.has(m.id) }));
  const intents: ReplyIntent[] = intentsForTypes(input.intents, types.filter((t) => t !== null));
  // A document's text comes on top of what the window's messages may hold.
  const documents = pending.some((m) => m.type === "DOCUMENT" && m.text !== null);
  const prompt = buildReplyPrompt({
    agent: input.agent,
    intents,
    history,
    pending: pending.map((m) => {
      const image = images.get(m.id);
      return {
        sender: "CUSTOMER",
        content: modelText(m, { inWindow: true, imageShown: image !== undefined }),
        ...(image ? { image: { url: image } } : {}),
      };
    }),
    contactName: input.contactName,
    now: input.now,
    limits: documents ? { pendingChars: PENDING_MAX_CHARS + input.documentMaxChars } : undefined,
  });
  return { prompt, intents };
}
