/** Authentication and workspace administration (spec section 4, decisions.md "Workspaces"). */
import { type Context, Hono } from "hono";
import type { Deps } from "../../context.ts";
import * as workspaces from "../../workspaces/mod.ts";
import { actorOf, principalOf, queryOf, readJson } from "../http.ts";

/** The client's socket address, handed over by app.ts as Hono env (null when unknown). */
function attemptSource(c: Context): workspaces.AttemptSource {
  return { clientAddress: (c.env as { clientAddress?: string | null } | undefined)?.clientAddress ?? null };
}

export function workspaceRoutes(deps: Deps): Hono {
  const r = new Hono();

  r.post("/api/auth/login", async (c) => {
    return c.json(await workspaces.login(deps, await readJson(c), attemptSource(c)));
  });
  r.post("/api/auth/logout", async (c) => {
    await workspaces.logout(deps, await principalOf(deps, c));
    return c.body(null, 204);
  });
  r.post("/api/auth/password", async (c) => {
    await workspaces.changePassword(deps, await principalOf(deps, c), await readJson(c));
    return c.body(null, 204);
  });
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
  r.patch("/api/workspaces/:workspaceId/members/:userId", async (c) => {
    const ctx = await actorOf(deps, c, c.req.param("workspaceId"));
    return c.json(await workspaces.changeMemberRole(ctx, c.req.param("userId"), await readJson(c)));
  });
  r.delete("/api/workspaces/:workspaceId/members/:userId", async (c) => {
    const ctx = await actorOf(deps, c, c.req.param("workspaceId"));
    await workspaces.removeMember(ctx, c.req.param("userId"));
    return c.body(null, 204);
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
    return c.json(
      await workspaces.acceptInvite(deps, c.req.param("token"), await readJson(c), attemptSource(c)),
    );
  });

  return r;
}
