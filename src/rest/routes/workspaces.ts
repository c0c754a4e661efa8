/** Authentication and workspace administration (spec section 4, decisions.md "Workspaces"). */
import { Hono } from "hono";
import type { Deps } from "../../context.ts";
import * as workspaces from "../../workspaces/mod.ts";
import { actorOf, principalOf, queryOf, readJson } from "../http.ts";

export function workspaceRoutes(deps: Deps): Hono {
  const r = new Hono();

  r.post("/api/auth/login", async (c) => c.json(await workspaces.login(deps, await readJson(c))));
  r.get("/api/auth/me", async (c) => {
    const principal = await principalOf(deps, c);
    return c.json(await workspaces.viewer(deps, principal));
  });

  r.get("/api/workspaces", async (c) => {
    const principal = await principalOf(deps, c);
    return c.json({ data: await workspaces.listWorkspaces(deps, principal) });
  });
  r.post("/api/workspaces", async (c) => {
    const principal = await principalOf(deps, c);
    return c.json(await workspaces.createWorkspace(deps, principal, await readJson(c)), 201);
  });
  r.delete("/api/workspaces/:workspaceId", async (c) => {
    await workspaces.deleteWorkspace(await actorOf(deps, c, c.req.param("workspaceId")));
    return c.body(null, 204);
  });
  r.get("/api/workspaces/:workspaceId/members", async (c) => {
    const ctx = await actorOf(deps, c, c.req.param("workspaceId"));
    return c.json({ data: await workspaces.listMembers(ctx) });
  });

  r.post("/api/workspaces/:workspaceId/invites", async (c) => {
    const ctx = await actorOf(deps, c, c.req.param("workspaceId"));
    return c.json(await workspaces.createInvite(ctx, await readJson(c)), 201);
  });
  r.get("/api/workspaces/:workspaceId/invites", async (c) => {
    const ctx = await actorOf(deps, c, c.req.param("workspaceId"));
    return c.json(await workspaces.listInvites(ctx, queryOf(c)));
  });
  r.delete("/api/workspaces/:workspaceId/invites/:inviteId", async (c) => {
    const ctx = await actorOf(deps, c, c.req.param("workspaceId"));
    await workspaces.deleteInvite(ctx, c.req.param("inviteId"));
    return c.body(null, 204);
  });

  r.post("/api/workspaces/:workspaceId/api-tokens", async (c) => {
    const ctx = await actorOf(deps, c, c.req.param("workspaceId"));
    return c.json(await workspaces.createApiToken(ctx, await readJson(c)), 201);
  });
  r.get("/api/workspaces/:workspaceId/api-tokens", async (c) => {
    const ctx = await actorOf(deps, c, c.req.param("workspaceId"));
    return c.json(await workspaces.listApiTokens(ctx, queryOf(c)));
  });
  r.delete("/api/workspaces/:workspaceId/api-tokens/:tokenId", async (c) => {
    const ctx = await actorOf(deps, c, c.req.param("workspaceId"));
    await workspaces.revokeApiToken(ctx, c.req.param("tokenId"));
    return c.body(null, 204);
  });

  // The invitee's side: the token in the path is the credential.
  r.get("/invite/:token", async (c) => c.json(await workspaces.viewInvite(deps, c.req.param("token"))));
  r.post("/invite/:token", async (c) => {
    return c.json(await workspaces.acceptInvite(deps, c.req.param("token"), await readJson(c)));
  });

  return r;
}
