/**
 * The reply's model call, made again when it failed in a way that may pass: a rate limit, a 5xx or
 * a dropped connection. A provider's brief overload should not hand every conversation of the
 * moment to a person. The next attempt waits 1 s, then 4 s (as WhatsApp sends do), or the wait the
 * endpoint asked for when it gave one. All attempts together take at most the call's timeout plus
 * RETRY_BUDGET_MS (the reply's claim is sized for that, config.ts): an attempt gets what is left of
 * it, and a wait that does not fit is not waited for; the failure stands. A timeout is not tried
 * again (it used the whole timeout). Each failed attempt is logged, so the log shows every request
 * the endpoint received.
 */
import type { ReplyPrompt } from "../conversations/prompt.ts";
import type { Logger } from "../shared/logger.ts";
import type { Completion, LanguageModel } from "./client.ts";

/** Waits before the second and the third attempt. */
export const RETRY_DELAYS_MS = [1000, 4000] as const;

/** What retries may add to the model call's timeout, waits included. */
export const RETRY_BUDGET_MS = 30_000;

/** An attempt is not started with less time than this left. */
const MIN_ATTEMPT_MS = 1000;

export async function completeWithRetries(
  llm: LanguageModel,
  prompt: ReplyPrompt,
  options: { timeoutMs: number; logger: Logger; log: Record<string, unknown> },
): Promise<Completion> {
  const deadline = performance.now() + options.timeoutMs + RETRY_BUDGET_MS;
  let timeoutMs = options.timeoutMs;
  for (let attempt = 1;; attempt++) {
    const completion = await llm.complete(prompt, { timeoutMs });
    if (completion.ok || !completion.retry || attempt > RETRY_DELAYS_MS.length) return completion;
    const waitMs = completion.retry.afterMs ?? RETRY_DELAYS_MS[attempt - 1];
    const left = deadline - performance.now() - waitMs;
    if (left < MIN_ATTEMPT_MS) return completion;
    timeoutMs = Math.min(options.timeoutMs, Math.floor(left));
    options.logger.warn("language model call failed; calling it again", {
      ...options.log,
      attempt,
      waitMs,
      error: completion.message,
    });
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}
