/** Request helpers shared by the REST routes: JSON bodies, credentials, the acting workspace. */
import type { Context } from "hono";
import type { ActorContext, Deps } from "../context.ts";
import type { Principal } from "../auth/actor.ts";
import { authenticate, authenticateActor, requireWorkspaceHeader } from "../auth/authenticate.ts";
import { requestAuthorization } from "../auth/console_cookie.ts";
import { AppError } from "../shared/errors.ts";
import { decodeUtf8, readBody } from "../shared/http_body.ts";
import { UnreadableBody } from "../shared/validation.ts";

/**
 * The JSON body: 415 unless it is JSON, 413 over 1 MiB, 400 when malformed or not UTF-8. An empty body is
 * `undefined` (services decide whether that is allowed). A body that cannot be read comes back as
 * an UnreadableBody, thrown by the service's parseInput after its role check.
 */
export async function readJson(c: Context): Promise<unknown> {
  try {
    return await parseJsonBody(c);
  } catch (e) {
    if (e instanceof AppError) return new UnreadableBody(e);
    throw e;
  }
}

async function parseJsonBody(c: Context): Promise<unknown> {
  const raw = await readBody(c.req.raw);
  if (raw.length === 0) return undefined;
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/([\w.+-]*\+)?json\b/i.test(type.trim())) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", 415, "Send the body as application/json.");
  }
  const text = decodeUtf8(raw);
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("MALFORMED_JSON", 400, "The body is not valid JSON.");
  }
}

/** The authenticated principal (401 otherwise). */
export function principalOf(deps: Deps, c: Context): Promise<Principal> {
  return authenticate(deps, c.req.header("authorization"));
}

/**
 * The actor for a request. Paths under /api/workspaces/{workspaceId} name their workspace in the
 * path; every other path names it in x-workspace-id (400 when missing, 403 when not a member).
 */
export async function actorOf(deps: Deps, c: Context, pathWorkspaceId?: string): Promise<ActorContext> {
  const workspaceId = () => pathWorkspaceId ?? requireWorkspaceHeader(c.req.header("x-workspace-id"));
  return { ...deps, actor: await authenticateActor(deps, c.req.header("authorization"), workspaceId) };
}

/**
 * actorOf for a route the console calls too (the media file): the console's session cookie is a
 * credential there besides Authorization, once the request came from this origin (403 CSRF_REFUSED).
 */
export async function consoleActorOf(deps: Deps, c: Context): Promise<ActorContext> {
  const authorization = requestAuthorization(deps.config, c.req.raw);
  const workspaceId = () => requireWorkspaceHeader(c.req.header("x-workspace-id"));
  return { ...deps, actor: await authenticateActor(deps, authorization, workspaceId) };
}

/** The query string as a plain object (last value wins). */
export function queryOf(c: Context): Record<string, string> {
  return c.req.query();
}
