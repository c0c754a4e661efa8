/**
 * The language model as its callers see it, failures as kinds (never a throw):
 * - `complete`: the reply pipeline's one chat completion, the text and its token usage, so the
 *   caller can hand the conversation to a human with the reason;
 * - `converse`: the supervisor's tool-calling completion, the text, the tool calls the model asked
 *   for and the usage with cached prompt tokens;
 * - `transcribe`: a voice note's text (src/media/).
 */
import type { ReplyPrompt } from "../conversations/prompt.ts";

export type Completion =
  | { ok: true; content: string; inputTokens: number; outputTokens: number }
  /** `kind`: "unavailable" (no key), "timeout", "error" (HTTP or network), "empty" (no text). */
  | { ok: false; kind: "unavailable" | "timeout" | "error" | "empty"; message: string; retry?: Retry };

/**
 * A failure that may pass if the same call is made again (a rate limit, a 5xx, a dropped
 * connection), with the wait the endpoint asked for (`Retry-After` or `retry-after-ms`), if any.
 */
export interface Retry {
  afterMs?: number;
}

/** A message of a tool-calling conversation, as OpenAI-compatible endpoints take it. */
export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: readonly ToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

/** A call the model asked for; `arguments` is the model's JSON text, not yet parsed. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A tool offered to the model: its name, what it does, the JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ConverseRequest {
  model: string;
  messages: readonly ChatMessage[];
  tools: readonly ToolSpec[];
  /** "none": the model must answer in text (the supervisor's last call of a turn). Default "auto". */
  toolChoice?: "auto" | "none";
}

/**
 * Token usage of one call. `promptTokens` includes the cached ones: `cacheReadTokens` from
 * `usage.prompt_tokens_details.cached_tokens`, `cacheWriteTokens` when the endpoint reports them
 * (`prompt_tokens_details.cache_write_tokens` or `cache_creation_input_tokens`), else 0.
 */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export type ToolCompletion =
  | { ok: true; content: string; toolCalls: ToolCall[]; usage: Usage }
  /** `kind`: "unavailable" (no key), "timeout", "error" (HTTP, network, or an answer without a choice). */
  | { ok: false; kind: "unavailable" | "timeout" | "error"; message: string };

/** An audio file to transcribe; `fileName`'s extension must be one the endpoint accepts (media/transcription.ts). */
export interface TranscriptionRequest {
  model: string;
  bytes: Uint8Array;
  fileName: string;
  mimeType: string;
}

export type Transcription =
  | { ok: true; text: string }
  /** `kind`: "unavailable" (no key), "timeout", "error" (HTTP or network). */
  | { ok: false; kind: "unavailable" | "timeout" | "error"; message: string };

export interface LanguageModel {
  complete(prompt: ReplyPrompt, options: { timeoutMs: number }): Promise<Completion>;
  converse(request: ConverseRequest, options: { timeoutMs: number }): Promise<ToolCompletion>;
  /** Speech to text (`POST /audio/transcriptions`). */
  transcribe(request: TranscriptionRequest, options: { timeoutMs: number }): Promise<Transcription>;
}
