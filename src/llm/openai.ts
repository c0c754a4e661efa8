/**
 * The LanguageModel over any OpenAI-compatible endpoint (npm `openai`): `OPENAI_API_KEY`,
 * `OPENAI_BASE_URL`. No key: every call answers "unavailable" without a request.
 */
import OpenAI from "openai";
import type { Completion, LanguageModel } from "./client.ts";

export function openAiModel(options: { apiKey?: string; baseUrl?: string }): LanguageModel {
  const client = options.apiKey
    // The pipeline decides what a failure means (a transfer to a human): no hidden retries.
    ? new OpenAI({ apiKey: options.apiKey, baseURL: options.baseUrl, maxRetries: 0 })
    : null;
  return {
    async complete(prompt, { timeoutMs }): Promise<Completion> {
      if (!client) return { ok: false, kind: "unavailable", message: "no OPENAI_API_KEY" };
      try {
        const answer = await client.chat.completions.create(
          {
            model: prompt.model,
            messages: prompt.messages,
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
        if (error instanceof OpenAI.APIConnectionTimeoutError) {
          return { ok: false, kind: "timeout", message: `no answer within ${timeoutMs} ms` };
        }
        const status = error instanceof OpenAI.APIError ? error.status : undefined;
        const text = error instanceof Error ? error.message : String(error);
        return { ok: false, kind: "error", message: (status ? `HTTP ${status}: ` : "") + text.slice(0, 300) };
      }
    },
  };
}
