/**
 * Turns a request's credentials into a Principal, then into an Actor for one workspace. The same
 * code serves REST, GraphQL over HTTP and GraphQL over WebSocket.
 */
import type { Deps } from "../context.ts";
import { AppError, forbidden, unauthorized } from "../shared/errors.ts";
import { sha256Hex } from "../shared/crypto.ts";
import { idSchema } from "../shared/validation.ts";
import { verifyUserJwt } from "./jwt.ts";
import type { Actor, Principal, Role } from "./actor.ts";

/** API token values start with this, so they are recognisable in logs and secret scanners. */
export const API_TOKEN_PREFIX = "sbt_";
/** lastUsedAt is written at most this often per token, to keep writes off the hot read path. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Reads `Authorization: Bearer <jwt | api token>`; 401 when missing, malformed, expired or revoked. */
export async function authenticate(deps: Deps, authorization: string | null | undefined): Promise<Principal> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match) throw unauthorized("Send Authorization: Bearer <token>.");
  const credential = match[1];

  if (credential.startsWith(API_TOKEN_PREFIX)) {
    const token = await deps.db.apiToken.findUnique({
      where: { tokenHash: sha256Hex(credential) },
      select: { id: true, workspaceId: true, label: true, revokedAt: true, lastUsedAt: true },
    });
    if (!token || token.revokedAt) throw unauthorized("The API token is invalid or revoked.");
    const now = deps.clock.now();
    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // Not awaited: the request need not wait for bookkeeping.
      deps.db.apiToken.update({ where: { id: token.id }, data: { lastUsedAt: now } })
        .catch((e) => deps.logger.warn("could not record token use", { error: String(e) }));
    }
    return { kind: "token", tokenId: token.id, workspaceId: token.workspaceId, label: token.label };
  }

  const userId = await verifyUserJwt(deps.jwt, credential);
  if (!userId) throw unauthorized("The token is invalid or expired.");
  return { kind: "user", userId };
}

/** The x-workspace-id header value; 400 when missing. */
export function requireWorkspaceHeader(value: string | null | undefined): string {
  const id = value?.trim();
  if (!id) throw new AppError("WORKSPACE_REQUIRED", 400, "Send the x-workspace-id header.");
  return id;
}

/** The principal acting in `workspaceId`; 403 when it is not a member there. */
export async function actorFor(deps: Deps, principal: Principal, workspaceId: string): Promise<Actor> {
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
  const membership = idSchema.safeParse(workspaceId).success
    ? await deps.db.membership.findUnique({
      where: { userId_workspaceId: { userId: principal.userId, workspaceId } },
      select: { role: true, user: { select: { email: true } } },
    })
    : null;
  if (!membership) throw forbidden("You are not a member of this workspace.");
  return {
    kind: "user",
    userId: principal.userId,
    tokenId: null,
    workspaceId,
    role: membership.role as Role,
    label: membership.user.email,
  };
}
