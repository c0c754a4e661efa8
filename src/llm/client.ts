/**
 * The language model as the reply pipeline sees it: one chat completion in, the text and its token
 * usage out, or the kind of failure (never a throw), so the caller can hand the conversation to a
 * human with the reason.
 */
import type { ReplyPrompt } from "../conversations/prompt.ts";

export type Completion =
  | { ok: true; content: string; inputTokens: number; outputTokens: number }
  /** `kind`: "unavailable" (no key), "timeout", "error" (HTTP or network), "empty" (no text). */
  | { ok: false; kind: "unavailable" | "timeout" | "error" | "empty"; message: string };

export interface LanguageModel {
  complete(prompt: ReplyPrompt, options: { timeoutMs: number }): Promise<Completion>;
}
