/** Request helpers shared by the REST routes: JSON bodies, credentials, the acting workspace. */
import type { Context } from "hono";
import type { ActorContext, Deps } from "../context.ts";
import type { Principal } from "../auth/actor.ts";
import { actorFor, authenticate, requireWorkspaceHeader } from "../auth/authenticate.ts";
import { AppError } from "../shared/errors.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The JSON body: 415 unless it is JSON, 413 over 1 MiB, 400 when malformed. An empty body is
 * `undefined` (services decide whether that is allowed).
 */
export async function readJson(c: Context): Promise<unknown> {
  const length = Number(c.req.header("content-length") ?? "0");
  if (length > MAX_BODY_BYTES) throw tooLarge();
  const raw = await readCapped(c.req.raw);
  if (raw.length === 0) return undefined;
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/([\w.+-]*\+)?json\b/i.test(type.trim())) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", 415, "Send the body as application/json.");
  }
  try {
    return JSON.parse(new TextDecoder().decode(raw));
  } catch {
    throw new AppError("MALFORMED_JSON", 400, "The body is not valid JSON.");
  }
}

const tooLarge = () => new AppError("PAYLOAD_TOO_LARGE", 413, `The body is over ${MAX_BODY_BYTES} bytes.`);

/** Reads the body but stops at the limit, so a huge chunked upload is never buffered whole. */
async function readCapped(req: Request): Promise<Uint8Array> {
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
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
  const principal = await principalOf(deps, c);
  const workspaceId = pathWorkspaceId ?? requireWorkspaceHeader(c.req.header("x-workspace-id"));
  return { ...deps, actor: await actorFor(deps, principal, workspaceId) };
}

/** The query string as a plain object (last value wins). */
export function queryOf(c: Context): Record<string, string> {
  return c.req.query();
}
