/**
 * Abuse limits on login and invite acceptance (docs/behaviour.md "Accounts, members and sessions"),
 * kept in PostgreSQL so every server process on the database shares the counters. Fixed windows: a
 * key's window starts with its first hit and lasts `windowMs`; time comes from deps.clock.
 */
import type { Deps } from "../context.ts";
import { RateLimitedError } from "../shared/errors.ts";
import type { RowOf } from "../db/statement.ts";
import { rateLimitHit } from "./sql.ts";

/** Failed password checks per email (login, invite acceptance, password change) per window. */
export const EMAIL_FAILURES = { limit: 10, windowMs: 15 * 60_000 };
/** Attempts per client address (login and invite acceptance, any outcome) per window. */
export const ADDRESS_ATTEMPTS = { limit: 100, windowMs: 60_000 };

type Counter = RowOf<typeof rateLimitHit.columns>;

/** Counts one hit on `key` and returns the count in the current window (./sql.ts). */
async function hit(deps: Deps, key: string, windowMs: number): Promise<Counter> {
  const now = deps.clock.now();
  const end = new Date(now.getTime() + windowMs);
  const [row] = await rateLimitHit.rows(deps.db, { key, now, end });
  return row;
}

function refuse(deps: Deps, counter: Counter, message: string): never {
  const seconds = Math.ceil((counter.windowEnd.getTime() - deps.clock.now().getTime()) / 1000);
  throw new RateLimitedError(Math.max(1, seconds), message);
}

const emailKey = (email: string) => `email:${email.toLowerCase()}`;

/**
 * Counts an attempt from `address` (null: unknown, e.g. app.fetch called without connection info,
 * which is not limited). 429 RATE_LIMITED beyond ADDRESS_ATTEMPTS.
 */
export async function countAddressAttempt(deps: Deps, address: string | null | undefined): Promise<void> {
  if (!address) return;
  const counter = await hit(deps, `addr:${address}`, ADDRESS_ATTEMPTS.windowMs);
  if (counter.count > ADDRESS_ATTEMPTS.limit) {
    refuse(deps, counter, "Too many attempts from this address. Try again later.");
  }
}

/**
 * Runs a password check for `email` under the per-email failure limit. The attempt is counted as a
 * failure before `check` runs, so concurrent guesses cannot overshoot the limit; a success clears
 * the email's failures. Over the limit: 429 RATE_LIMITED without running `check`, so even the right
 * password is refused until the window passes.
 */
export async function guardPasswordCheck(
  deps: Deps,
  email: string,
  check: () => Promise<boolean>,
): Promise<boolean> {
  const counter = await hit(deps, emailKey(email), EMAIL_FAILURES.windowMs);
  if (counter.count > EMAIL_FAILURES.limit) {
    refuse(deps, counter, "Too many failed attempts for this account. Try again later.");
  }
  const ok = await check();
  if (ok) await deps.db.rateLimit.deleteMany({ where: { key: emailKey(email) } });
  return ok;
}

/** Forgets the email's failed password checks (an operator reset the password: it may be used at once). */
export async function clearPasswordFailures(deps: Deps, email: string): Promise<void> {
  await deps.db.rateLimit.deleteMany({ where: { key: emailKey(email) } });
}
