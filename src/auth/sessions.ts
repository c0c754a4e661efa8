/**
 * Login sessions: every login JWT names a Session row in its `jti`. A revoked or missing row makes
 * the JWT answer 401 (expiry is the JWT's own `exp`); deleting the user deletes its rows (foreign key
 * cascade).
 */
import type { Deps } from "../context.ts";
import type { Tx } from "../db/client.ts";
import { jwtExpiry, signUserJwt } from "./jwt.ts";

/**
 * Opens a session for `userId` and returns its login JWT. The row expires with the JWT (whose `exp`
 * jose checks); the user's expired rows are deleted on the way, so the table keeps only sessions that
 * can still be presented.
 */
export async function openSession(deps: Deps, userId: string): Promise<string> {
  const sessionId = crypto.randomUUID();
  const expiresAt = jwtExpiry(deps.jwt);
  await deps.db.session.deleteMany({ where: { userId, expiresAt: { lte: new Date() } } });
  await deps.db.session.create({ data: { id: sessionId, userId, expiresAt } });
  return await signUserJwt(deps.jwt, { userId, sessionId, expiresAt });
}

/** Revokes one session (logout). Revoking twice changes nothing. */
export async function revokeSession(deps: Deps, sessionId: string): Promise<void> {
  await deps.db.session.updateMany({
    where: { id: sessionId, revokedAt: null },
    data: { revokedAt: deps.clock.now() },
  });
}

/** Revokes every live session of the user except `keepSessionId` (password change). */
export async function revokeOtherSessions(
  deps: Deps,
  tx: Tx,
  user: { userId: string; keepSessionId: string },
): Promise<void> {
  await tx.session.updateMany({
    where: { userId: user.userId, id: { not: user.keepSessionId }, revokedAt: null },
    data: { revokedAt: deps.clock.now() },
  });
}

/** Revokes every live session of the user (an operator's password reset); returns how many. */
export async function revokeAllSessions(deps: Deps, tx: Tx, userId: string): Promise<number> {
  const { count } = await tx.session.updateMany({
    where: { userId, revokedAt: null },
    data: { revokedAt: deps.clock.now() },
  });
  return count;
}
