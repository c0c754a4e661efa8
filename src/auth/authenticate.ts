/**
 * Turns a request's credentials into a Principal, then into an Actor for one workspace. The same
 * code serves REST, GraphQL over HTTP and GraphQL over WebSocket.
 */
import type { Db } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import type { Logger } from "../shared/logger.ts";
import { AppError, forbidden, unauthorized } from "../shared/errors.ts";
import { sha256Hex } from "../shared/crypto.ts";
import { idSchema } from "../shared/validation.ts";
import { type JwtKeys, verifyUserJwt } from "./jwt.ts";
import type { Actor, Principal } from "./actor.ts";
import { apiTokenByHash, liveSession, sessionMembership, touchApiToken } from "./sql.ts";

/** What reading a credential needs of the app's dependencies (src/context.ts's Deps has it all). */
export interface CredentialDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  jwt: JwtKeys;
}

/** API token values start with this, so they are recognisable in logs and secret scanners. */
export const API_TOKEN_PREFIX = "sbt_";
/** lastUsedAt is written at most this often per token, to keep writes off the hot read path. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Reads `Authorization: Bearer <jwt | api token>`; 401 when missing or malformed. API tokens are
 * looked up here (401 when unknown or revoked); a login JWT's signature and expiry are checked, but
 * not its session: `authenticate` and `actorFor` do that.
 */
export async function readCredential(
  deps: CredentialDeps,
  authorization: string | null | undefined,
): Promise<Principal> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match) throw unauthorized("Send Authorization: Bearer <token>.");
  const credential = match[1];

  if (credential.startsWith(API_TOKEN_PREFIX)) {
    const [token] = await apiTokenByHash.rows(deps.db, { tokenHash: sha256Hex(credential) });
    if (!token || token.revokedAt) throw unauthorized("The API token is invalid or revoked.");
    const now = deps.clock.now();
    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // Not awaited: the request need not wait for bookkeeping.
      touchApiToken.run(deps.db, { id: token.id, now })
        .catch((e) => deps.logger.warn("could not record token use", { error: String(e) }));
    }
    return { kind: "token", tokenId: token.id, workspaceId: token.workspaceId, label: token.label };
  }

  const claims = await verifyUserJwt(deps.jwt, credential);
  if (!claims) throw unauthorized("The token is invalid or expired.");
  return { kind: "user", ...claims };
}

export const sessionEnded = () =>
  unauthorized("The session has ended (logged out, password changed or expired).");

/**
 * 401 unless the JWT's session is live: not revoked, its user not deleted (expiry was checked with
 * the JWT's `exp`).
 */
async function requireLiveSession(deps: CredentialDeps, principal: { userId: string; sessionId: string }) {
  const [session] = await liveSession.rows(deps.db, principal);
  if (!session) throw sessionEnded();
}

/** The bearer credential as a Principal; 401 when missing, malformed, expired or revoked. */
export async function authenticate(
  deps: CredentialDeps,
  authorization: string | null | undefined,
): Promise<Principal> {
  const principal = await readCredential(deps, authorization);
  if (principal.kind === "user") await requireLiveSession(deps, principal);
  return principal;
}

/**
 * The credential acting in a workspace: `authenticate` + `actorFor` with one database round trip for
 * login JWTs. `workspaceId` is asked for after the credential is read, so a bad credential answers
 * 401 before a missing x-workspace-id answers 400.
 */
export async function authenticateActor(
  deps: CredentialDeps,
  authorization: string | null | undefined,
  workspaceId: () => string,
): Promise<Actor> {
  const principal = await readCredential(deps, authorization);
  let id: string;
  try {
    id = workspaceId();
  } catch (e) {
    if (principal.kind === "user") await requireLiveSession(deps, principal);
    throw e;
  }
  return await actorFor(deps, principal, id);
}

/** The x-workspace-id header value; 400 when missing. */
export function requireWorkspaceHeader(value: string | null | undefined): string {
  const id = value?.trim();
  if (!id) throw new AppError("WORKSPACE_REQUIRED", 400, "Send the x-workspace-id header.");
  return id;
}

/**
 * The principal acting in `workspaceId`; 403 when it is not a member there. For a login JWT the
 * session is checked again here (401), in the same statement as the membership.
 */
export async function actorFor(
  deps: CredentialDeps,
  principal: Principal,
  workspaceId: string,
): Promise<Actor> {
  if (principal.kind === "token") {
    if (principal.workspaceId !== workspaceId) {
      throw forbidden("This API token belongs to another workspace.");
    }
    return {
      kind: "token",
      userId: null,
      tokenId: principal.tokenId,
      workspaceId,
      role: "MANAGER",
      label: `API token "${principal.label}"`,
    };
  }
  // One statement for the session (401) and the membership (403): the JWT path is benchmarked.
  const validId = idSchema.safeParse(workspaceId).success;
  const [row] = await sessionMembership.rows(deps.db, {
    sessionId: principal.sessionId,
    userId: principal.userId,
    workspaceId: validId ? workspaceId : null,
  });
  if (!row) throw sessionEnded();
  if (!row.role) throw forbidden("You are not a member of this workspace.");
  return {
    kind: "user",
    userId: principal.userId,
    tokenId: null,
    workspaceId,
    role: row.role,
    label: row.email,
  };
}
