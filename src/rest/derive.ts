/**
 * REST routes derived from the capability declarations: each http binding becomes a route that
 * resolves the caller, runs the capability through its runner and answers with the status the
 * declaration names. Reads answer the JSON text the read planner builds in PostgreSQL.
 */
import { type Context, Hono } from "hono";
import type { Deps } from "../context.ts";
import type { CallerContext, Capability, OperationCapability, ReadCapability } from "../shared/capability.ts";
import { invoke } from "../shared/capability.ts";
import { restRead } from "../reads/rest.ts";
import { presentAnswer } from "./present.ts";
import { actorOf, principalOf, queryOf, readJson } from "./http.ts";

/** `/api/agents/{agentId}` → `/api/agents/:agentId` (Hono's syntax). */
export const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

export function capabilityRoutes(deps: Deps, capabilities: readonly Capability[]): Hono {
  const r = new Hono();
  for (const cap of capabilities) {
    if (cap.kind === "read") {
      if (cap.http) r.get(honoPath(cap.http.path), (c) => serveRead(deps, c, cap));
    } else if (cap.http) {
      r.on(cap.http.method, honoPath(cap.http.path), (c) => serveOperation(deps, c, cap));
    }
  }
  return r;
}

/**
 * The caller of a request, resolved lazily and once. A path under /api/workspaces/{workspaceId}
 * names its workspace there; any other path names it in x-workspace-id.
 */
function restCaller(deps: Deps, c: Context): CallerContext {
  let principal: ReturnType<CallerContext["principal"]> | undefined;
  let actor: ReturnType<CallerContext["actor"]> | undefined;
  return {
    deps,
    clientAddress: (c.env as { clientAddress?: string | null } | undefined)?.clientAddress ?? null,
    principal: () => principal ??= principalOf(deps, c),
    actor: () => actor ??= actorOf(deps, c, c.req.param("workspaceId")),
  };
}

async function serveRead(deps: Deps, c: Context, read: ReadCapability): Promise<Response> {
  // restRead checks access, then the query string, then the ids, as `invoke` orders them.
  const json = await restRead(await restCaller(deps, c).actor(), read, c.req.param(), queryOf(c));
  return c.body(json, 200, { "content-type": "application/json" });
}

const WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

async function serveOperation(deps: Deps, c: Context, cap: OperationCapability): Promise<Response> {
  // A GET has no body: its input is its query string (as the OpenAPI document says).
  const input = WITH_BODY.has(c.req.method)
    ? await readJson(c)
    : c.req.method === "GET"
    ? queryOf(c)
    : undefined;
  const caller = restCaller(deps, c);
  const result = await invoke(cap, caller, c.req.param(), input);
  const status = cap.http?.status ?? 200;
  if ("none" in cap.output) return c.body(null, 204);
  // The function returned stored rows: presented here, once (the actor is the one invoke resolved).
  const answer = presentAnswer(
    cap.access.kind === "workspace" ? await caller.actor() : undefined,
    cap,
    result,
  );
  // Lists answer { data: [...] }, never a bare array, so list answers can gain fields such as nextCursor.
  return c.json(Array.isArray(answer) ? { data: answer } : answer, status as 200);
}
