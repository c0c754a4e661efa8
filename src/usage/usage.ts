/**
 * What the workspace's messages cost (docs/behaviour.md "What WhatsApp messages cost"): its
 * delivered outbound messages per channel and UTC day, by the pricing category and billable flag
 * Meta's status webhooks gave them (src/channels/whatsapp/inbound.ts `pricingOf`).
 */
import { z } from "zod";
import type { ActorContext } from "../context.ts";
import { badRequest } from "../shared/errors.ts";
import { usageCounts } from "./sql.ts";

const DAY_MS = 86_400_000;
/** The default range, in UTC days ending with today. */
export const DEFAULT_DAYS = 30;
/** The longest range one call may ask for (a leap year). */
export const MAX_DAYS = 366;
/** What PostgreSQL and an ISO string both hold: years 1 to 9999. */
const EARLIEST = Date.parse("0001-01-01T00:00:00.000Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

/** `parse`'s value, or undefined when it throws (Temporal throws on what it cannot read). */
function attempt(parse: () => number): number | undefined {
  try {
    return parse();
  } catch {
    return undefined;
  }
}

/**
 * An ISO 8601 date or date-time, liberally (`2026-11-01`, `2026-11-01T09:30Z`, `2026-11-01 09:30`,
 * an offset, fractions, a bracketed zone): one with an offset or a zone is that instant; a date, or
 * a date-time without either, is UTC. Null when it is none of these or outside years 1 to 9999.
 */
export function parseInstant(text: string): Date | null {
  const s = text.trim();
  if (!s) return null;
  const ms = attempt(() => Temporal.Instant.from(s).epochMilliseconds) ??
    attempt(() => Temporal.ZonedDateTime.from(s).epochMilliseconds) ??
    attempt(() => Temporal.PlainDateTime.from(s).toZonedDateTime("UTC").epochMilliseconds);
  return ms !== undefined && ms >= EARLIEST && ms <= LATEST ? new Date(ms) : null;
}

const instant = z.string().max(100).transform((s, ctx) => {
  const at = parseInstant(s);
  if (at) return at;
  ctx.addIssue({
    code: "custom",
    message: "must be an ISO 8601 date (2026-11-01, a UTC day) or date-time (2026-11-01T09:30:00Z)",
  });
  return z.NEVER;
});

export const usageRangeSchema = z.object({
  from: instant.optional().describe(
    `Where the range starts, inclusive: an ISO 8601 date (that UTC day's start) or date-time. Default: ${DEFAULT_DAYS} days before \`to\`.`,
  ),
  to: instant.optional().describe(
    `Where it ends, exclusive, as \`from\`. Default: the end of today (UTC). At most ${MAX_DAYS} days after \`from\`.`,
  ),
}).prefault({});

export const usageRowSchema = z.object({
  channelId: z.string(),
  day: z.iso.date().describe("The UTC day the messages were created, YYYY-MM-DD."),
  category: z.string().nullable().describe(
    "Meta's pricing.category, lowercased (service, utility, marketing, authentication...); null while no status has given one.",
  ),
  billable: z.boolean().nullable().describe("Whether Meta bills them; null while no status has said."),
  messages: z.int().min(1).describe(
    "Outbound messages of the group that reached the customer (DELIVERED or READ).",
  ),
}).meta({
  id: "UsageCount",
  description: "Delivered messages of one channel, UTC day, pricing category and billable flag.",
});

export const usageSchema = z.object({
  from: z.iso.datetime().describe("The range's start, inclusive."),
  to: z.iso.datetime().describe("The range's end, exclusive."),
  data: z.array(usageRowSchema).describe(
    "By day, channelId, category, billable (nulls last); groups without a delivered message are left out.",
  ),
}).meta({
  id: "Usage",
  description: "The workspace's delivered outbound messages in a range, per channel, UTC day and pricing.",
});
export type Usage = z.infer<typeof usageSchema>;

/** The start of the UTC day after `at`'s. */
const nextUtcDay = (at: Date) => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS + DAY_MS);

/** The asked range with its defaults, or 400 VALIDATION_FAILED (reversed, empty, too long). */
export function rangeOf(
  now: Date,
  input: z.output<typeof usageRangeSchema>,
): { from: Date; to: Date } {
  const to = input.to ?? nextUtcDay(now);
  const from = input.from ?? new Date(to.getTime() - DEFAULT_DAYS * DAY_MS);
  const problem = from >= to
    ? "must be after `from` (`from` is inclusive, `to` exclusive)"
    : to.getTime() - from.getTime() > MAX_DAYS * DAY_MS
    ? `the range must be at most ${MAX_DAYS} days`
    : null;
  if (problem) throw badRequest(`Invalid input: to: ${problem}`, [{ path: "to", message: problem }]);
  return { from, to };
}

/** GET /api/usage, Workspace.usage: the counts of the caller's workspace in the range, in one statement. */
export async function usageOf(ctx: ActorContext, input: z.output<typeof usageRangeSchema>): Promise<Usage> {
  const { from, to } = rangeOf(ctx.clock.now(), input);
  const data = await usageCounts.rows(ctx.db, { workspaceId: ctx.actor.workspaceId, from, to });
  return { from: from.toISOString(), to: to.toISOString(), data };
}
