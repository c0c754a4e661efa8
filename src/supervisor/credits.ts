/**
 * What a supervisor answer costs (docs/behaviour.md "The supervisor and approvals") and the workspace's credit use per day:
 *   usd = (input x 3 + output x 15 + cacheWrite x 3.75 + cacheRead x 0.30) / 1 000 000
 *   credits = usd x 5 (exchange rate) x 3 (markup) / 0.10 (price of a credit)
 * with the prices, rate, markup and unit price from the operator's settings (src/config.ts).
 */
import { z } from "zod";
import type { Config } from "../config.ts";
import type { ActorContext } from "../context.ts";
import type { Usage } from "../llm/client.ts";
import type { Logger } from "../shared/logger.ts";
import { authorize } from "../auth/permissions.ts";

/** Token counts as priced: `inputTokens` are the prompt tokens that were neither cache reads nor writes. */
export interface PricedUsage {
  inputTokens: number;
  outputTokens: number;
  cacheWriteTokens: number;
  cacheReadTokens: number;
}

/**
 * A count one model call may report at most: above any model's context window. The endpoint is
 * untrusted; a count beyond it (10^18) would overflow the stored columns and the credits.
 */
export const MAX_TOKENS_PER_CALL = 10_000_000;

/** The call's counts as whole numbers within 0..MAX_TOKENS_PER_CALL; clamping is logged. */
export function saneUsage(usage: Usage, logger: Logger): Usage {
  const clamp = (n: number) =>
    Number.isFinite(n) ? Math.min(Math.max(Math.floor(n), 0), MAX_TOKENS_PER_CALL) : 0;
  const sane: Usage = {
    promptTokens: clamp(usage.promptTokens),
    completionTokens: clamp(usage.completionTokens),
    cacheReadTokens: clamp(usage.cacheReadTokens),
    cacheWriteTokens: clamp(usage.cacheWriteTokens),
  };
  const changed = (Object.keys(sane) as (keyof Usage)[]).some((k) => sane[k] !== usage[k]);
  if (changed) logger.warn("model token count out of range", { reported: usage, counted: sane });
  return sane;
}

/** The usage of a turn's model calls, summed, with cached prompt tokens split off the input. */
export function pricedUsage(calls: readonly Usage[]): PricedUsage {
  const sum = { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 };
  for (const u of calls) {
    // Endpoints count cached tokens inside prompt_tokens: each token is priced once, at its own rate.
    sum.inputTokens += Math.max(0, u.promptTokens - u.cacheReadTokens - u.cacheWriteTokens);
    sum.outputTokens += u.completionTokens;
    sum.cacheWriteTokens += u.cacheWriteTokens;
    sum.cacheReadTokens += u.cacheReadTokens;
  }
  return sum;
}

/** Credits of a usage, rounded to 6 decimals (below a millionth of a credit is float noise). */
export function creditsOf(usage: PricedUsage, settings: Config["supervisor"]): number {
  const p = settings.prices;
  const usd = (usage.inputTokens * p.input + usage.outputTokens * p.output +
    usage.cacheWriteTokens * p.cacheWrite + usage.cacheReadTokens * p.cacheRead) / 1_000_000;
  return round6(usd * settings.exchangeRate * settings.markup / settings.unitPrice);
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** The UTC day of an instant, as a DATE column takes it. */
const dayOf = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));

export const creditDaySchema = z.object({
  day: z.string().describe("The UTC day, YYYY-MM-DD."),
  credits: z.number(),
  messages: z.int().describe("Supervisor answers that day."),
  inputTokens: z.int(),
  outputTokens: z.int(),
  cacheWriteTokens: z.int(),
  cacheReadTokens: z.int(),
}).meta({ id: "SupervisorCreditDay", description: "The supervisor's credit use of one UTC day." });
export type CreditDay = z.infer<typeof creditDaySchema>;

export const creditUseSchema = z.object({
  days: z.coerce.number().int().min(1).max(366).default(30)
    .describe("How many UTC days, ending today (default 30, at most 366)."),
}).prefault({});

/**
 * The workspace's supervisor credit use for each of the last `days` UTC days (today included),
 * oldest first, days without use as zeros. Requires `supervisor:use`.
 */
export async function creditUse(
  ctx: ActorContext,
  input: z.output<typeof creditUseSchema>,
): Promise<CreditDay[]> {
  authorize(ctx.actor, "supervisor:use");
  const today = dayOf(ctx.clock.now());
  const from = new Date(today.getTime() - (input.days - 1) * 86_400_000);
  const rows = await ctx.db.supervisorCreditDay.findMany({
    where: { workspaceId: ctx.actor.workspaceId, day: { gte: from, lte: today } },
  });
  const byDay = new Map(rows.map((r) => [r.day.toISOString().slice(0, 10), r]));
  const out: CreditDay[] = [];
  for (let i = 0; i < input.days; i++) {
    const day = new Date(from.getTime() + i * 86_400_000).toISOString().slice(0, 10);
    const r = byDay.get(day);
    out.push({
      day,
      credits: r ? round6(r.credits) : 0,
      messages: r?.messages ?? 0,
      inputTokens: r?.inputTokens ?? 0,
      outputTokens: r?.outputTokens ?? 0,
      cacheWriteTokens: r?.cacheWriteTokens ?? 0,
      cacheReadTokens: r?.cacheReadTokens ?? 0,
    });
  }
  return out;
}
