/**
 * Login sessions: every login JWT names a Session row in its `jti`. A revoked or expired row makes the
 * JWT answer 401; deleting the user deletes its rows (foreign key cascade).
 */
import type { Deps } from "../context.ts";
import type { Tx } from "../db/client.ts";
import { signUserJwt } from "./jwt.ts";

/**
 * Opens a session for `userId` and returns its login JWT. The user's expired sessions are deleted on
 * the way, so the table keeps only what can still be presented.
 */
export async function openSession(deps: Deps, userId: string): Promise<string> {
  const sessionId = crypto.randomUUID();
  const now = deps.clock.now();
  await deps.db.session.deleteMany({ where: { userId, expiresAt: { lte: now } } });
  await deps.db.session.create({
    data: { id: sessionId, userId, expiresAt: new Date(now.getTime() + deps.jwt.ttlSeconds * 1000) },
  });
  return await signUserJwt(deps.jwt, { userId, sessionId });
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
