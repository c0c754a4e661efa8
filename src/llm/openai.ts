/**
 * The LanguageModel over any OpenAI-compatible endpoint (npm `openai`): `OPENAI_API_KEY`,
 * `OPENAI_BASE_URL`. No key: every call answers "unavailable" without a request.
 */
import OpenAI, { toFile } from "openai";
import { Agent, fetch as undiciFetch } from "undici";
import { POOL_OPTIONS } from "../shared/outbound_http.ts";
import type { ReplyPrompt } from "../conversations/prompt.ts";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type {
  ChatMessage,
  Completion,
  LanguageModel,
  Retry,
  ToolCall,
  ToolCompletion,
  Transcription,
  Usage,
} from "./client.ts";

export function openAiModel(options: { apiKey?: string; baseUrl?: string }): LanguageModel {
  const client = options.apiKey
    ? new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseUrl,
      // The callers decide what a failure means (a transfer to a human, a 502): no hidden retries.
      maxRetries: 0,
      // Deno's fetch re-sends a request whose reused connection was reset or closed before the
      // answer; undici never re-sends, so each call made is one request sent.
      fetch: fetchWithForms,
      fetchOptions: { dispatcher: new Agent(POOL_OPTIONS) } as Record<string, unknown>,
    })
    : null;
  return {
    async complete(prompt, { timeoutMs }): Promise<Completion> {
      if (!client) return { ok: false, kind: "unavailable", message: "no OPENAI_API_KEY" };
      try {
        const answer = await client.chat.completions.create(
          {
            model: prompt.model,
            messages: prompt.messages.map(withParts),
            ...(prompt.temperature === undefined ? {} : { temperature: prompt.temperature }),
          },
          { timeout: timeoutMs },
        );
        const content = answer.choices[0]?.message?.content ?? "";
        if (!content.trim()) return { ok: false, kind: "empty", message: "the model answered no text" };
        return {
          ok: true,
          content,
          inputTokens: answer.usage?.prompt_tokens ?? 0,
          outputTokens: answer.usage?.completion_tokens ?? 0,
        };
      } catch (error) {
        return failure(error, timeoutMs);
      }
    },

    async converse(request, { timeoutMs }): Promise<ToolCompletion> {
      if (!client) return { ok: false, kind: "unavailable", message: "no OPENAI_API_KEY" };
      try {
        const answer = await client.chat.completions.create(
          {
            model: request.model,
            messages: request.messages.map(toOpenAi),
            ...(request.tools.length
              ? {
                tools: request.tools.map((t) => ({
                  type: "function" as const,
                  function: { name: t.name, description: t.description, parameters: t.parameters },
                })),
                tool_choice: request.toolChoice ?? "auto",
              }
              : {}),
          },
          { timeout: timeoutMs },
        );
        const message = answer.choices?.[0]?.message;
        if (!message) return { ok: false, kind: "error", message: "the model answered no choice" };
        // The endpoint is untrusted: the client does not check the answer's types, so each field
        // is taken as the text it should be.
        const toolCalls: ToolCall[] = [];
        const calls: unknown[] = Array.isArray(message.tool_calls) ? message.tool_calls : [];
        for (const [i, call] of calls.entries()) {
          const c = (call ?? {}) as Record<string, unknown>;
          // Custom (non-function) tools are never offered: anything else is passed on as unknown.
          const fn = (c.function ?? {}) as Record<string, unknown>;
          toolCalls.push({
            // Each call needs its own id: the tool's answer names it.
            id: typeof c.id === "string" && c.id ? c.id : `call_unnamed_${i}`,
            name: typeof fn.name === "string" ? fn.name : "",
            arguments: argumentsText(fn.arguments),
          });
        }
        const content = typeof message.content === "string" ? message.content : "";
        return { ok: true, content, toolCalls, usage: usageOf(answer.usage) };
      } catch (error) {
        return failure(error, timeoutMs);
      }
    },

    async transcribe(request, { timeoutMs }): Promise<Transcription> {
      if (!client) return { ok: false, kind: "unavailable", message: "no OPENAI_API_KEY" };
      try {
        const file = await toFile(request.bytes, request.fileName, { type: request.mimeType });
        const answer = await client.audio.transcriptions.create(
          { model: request.model, file, response_format: "json" },
          { timeout: timeoutMs },
        );
        const text = typeof answer?.text === "string" ? answer.text : null;
        if (text === null) return { ok: false, kind: "error", message: "the answer has no text" };
        return { ok: true, text };
      } catch (error) {
        return failure(error, timeoutMs);
      }
    },
  };
}

/**
 * undici's fetch, also for the transcription's multipart upload: the client builds the platform's
 * FormData, which undici cannot encode, so it is encoded by the platform's Response first. `Response`
 * tells the client's upload check which Response class encodes its forms.
 */
const fetchWithForms = Object.assign(
  async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (init?.body instanceof FormData) {
      const encoded = new Response(init.body);
      const headers = new Headers(init.headers);
      headers.set("content-type", encoded.headers.get("content-type")!);
      init = { ...init, headers, body: new Uint8Array(await encoded.arrayBuffer()) };
    }
    return await (undiciFetch as unknown as typeof globalThis.fetch)(input, init);
  },
  { Response },
) as typeof globalThis.fetch;

/** A reply prompt's message as the endpoint takes it: its parts (text and images) when it has them. */
function withParts(m: ReplyPrompt["messages"][number]): ChatCompletionMessageParam {
  if (m.role === "user" && m.parts?.length) {
    return {
      role: "user",
      content: m.parts.map((p) =>
        p.type === "text"
          ? { type: "text" as const, text: p.text }
          : { type: "image_url" as const, image_url: { url: p.url } }
      ),
    };
  }
  return { role: m.role, content: m.content };
}

function failure(
  error: unknown,
  timeoutMs: number,
): { ok: false; kind: "timeout" | "error"; message: string; retry?: Retry } {
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return { ok: false, kind: "timeout", message: `no answer within ${timeoutMs} ms` };
  }
  const status = error instanceof OpenAI.APIError ? error.status : undefined;
  // With a status, the endpoint's own message (`Unsupported file format ...`), without the status
  // the client puts before it.
  const detail = status
    ? ((error as InstanceType<typeof OpenAI.APIError>).error as { message?: unknown })?.message
    : null;
  const text = typeof detail === "string" ? detail : error instanceof Error ? error.message : String(error);
  const message = (status ? `HTTP ${status}: ` : "") + text.slice(0, 300);
  // The connection failed before an answer (refused, reset).
  if (error instanceof OpenAI.APIConnectionError) return { ok: false, kind: "error", message, retry: {} };
  if (status === undefined || (!TRANSIENT_STATUSES.has(status) && status < 500)) {
    return { ok: false, kind: "error", message };
  }
  const afterMs = retryAfterMs((error as InstanceType<typeof OpenAI.APIError>).headers);
  return { ok: false, kind: "error", message, retry: afterMs === undefined ? {} : { afterMs } };
}

/** Statuses below 500 worth another call: a timeout, a conflict and a rate limit, as OpenAI's clients retry. */
const TRANSIENT_STATUSES = new Set([408, 409, 429]);

/** The wait an answer asks for: `retry-after-ms` (OpenAI's), else `Retry-After` in seconds or as a date. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get("retry-after-ms") ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function toOpenAi(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
    case "assistant":
      return m.toolCalls?.length
        ? {
          role: "assistant",
          content: m.content || null,
          tool_calls: m.toolCalls.map((c) => ({
            id: c.id,
            type: "function" as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        }
        : { role: "assistant", content: m.content };
    default:
      return { role: m.role, content: m.content };
  }
}

/** Arguments as JSON text: some endpoints send an object; anything else is no arguments. */
function argumentsText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || typeof value !== "object") return "";
  try {
    return JSON.stringify(value);
  } catch {
    return ""; // too deep to write out
  }
}

/** Counts the endpoint reported (missing or malformed ones count as 0). */
function usageOf(raw: unknown): Usage {
  const u = (raw ?? {}) as Record<string, unknown>;
  const details = (u.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  return {
    promptTokens: n(u.prompt_tokens),
    completionTokens: n(u.completion_tokens),
    cacheReadTokens: n(details.cached_tokens),
    cacheWriteTokens: n(details.cache_write_tokens) || n(u.cache_creation_input_tokens),
  };
}
