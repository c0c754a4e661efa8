/**
 * Workspace API tokens: created with a label, shown once,
 * stored as a hash, act as MANAGER in their own workspace only, revoked at once by DELETE.
 */
import assert from "node:assert/strict";
import { Client, startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus, counts } from "./_helpers/problem.ts";

const VIEW_KEYS = ["createdAt", "createdBy", "id", "label", "lastUsedAt", "prefix", "revokedAt"];

Deno.test("api tokens", async (t) => {
  const ta = await startTestApp();
  const { app, seed } = ta;
  const db = app.deps.db;
  try {
    const a = await seed.workspace("A");
    const b = await seed.workspace("B");
    const tokensA = `/api/workspaces/${a.workspaceId}/api-tokens`;
    const tokensB = `/api/workspaces/${b.workspaceId}/api-tokens`;
    let token = "";
    let tokenId = "";

    await t.step("create: 201, sbt_ value shown once, prefix is its first 10 characters", async () => {
      const res = await a.owner.client.post(tokensA, { label: "CRM sync" });
      assertStatus(res, 201);
      assert.deepEqual(Object.keys(res.body).sort(), [...VIEW_KEYS, "token"].sort());
      token = res.body.token;
      tokenId = res.body.id;
      assert.match(token, /^sbt_[A-Za-z0-9_-]{20,}$/);
      assert.equal(res.body.prefix, token.slice(0, 10));
      assert.equal(res.body.label, "CRM sync");
      assert.equal(res.body.lastUsedAt, null);
      assert.equal(res.body.revokedAt, null);
      // Stored only as a hash.
      const row = await db.apiToken.findUniqueOrThrow({ where: { id: tokenId } });
      assert.equal(row.workspaceId, a.workspaceId);
      assert.notEqual(row.tokenHash, token);
      assert.ok(!Object.values(row).some((v) => typeof v === "string" && v.includes(token.slice(10))));
    });

    await t.step("list: never the value nor a hash", async () => {
      const res = await a.owner.client.get(tokensA);
      assertStatus(res, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ["data", "nextCursor"]);
      assert.equal(res.body.nextCursor, null);
      assert.equal(res.body.data.length, 1);
      assert.deepEqual(Object.keys(res.body.data[0]).sort(), VIEW_KEYS);
      assert.equal(res.body.data[0].id, tokenId);
      assert.equal(res.body.data[0].prefix, token.slice(0, 10));
      assert.ok(!JSON.stringify(res.body).includes(token.slice(10)));
      assert.deepEqual((await b.owner.client.get(tokensB)).body, { data: [], nextCursor: null });
    });

    await t.step("the token works as bearer with x-workspace-id and acts as MANAGER", async () => {
      const client = new Client(app, token, a.workspaceId);
      assertStatus(await client.get("/api/agents"), 200);
      const created = await client.post("/api/agents", { name: "Made by token" });
      assertStatus(created, 201);
      assert.equal(
        (await db.agent.findUniqueOrThrow({ where: { id: created.body.id } })).workspaceId,
        a.workspaceId,
      );
      // MANAGER, not OWNER: cannot delete the workspace, cannot invite an OWNER.
      assertProblem(await client.delete(`/api/workspaces/${a.workspaceId}`), 403, "FORBIDDEN");
      assertProblem(
        await client.post(`/api/workspaces/${a.workspaceId}/invites`, {
          email: "o@example.test",
          role: "OWNER",
        }),
        403,
        "FORBIDDEN",
      );
      // A person-only action: creating a workspace.
      assertProblem(await client.post("/api/workspaces", { name: "Mine" }), 403, "FORBIDDEN");
      assert.equal(await db.workspace.count(), 2);
    });

    await t.step("the prompt version written by a token names the token", async () => {
      const client = new Client(app, token, a.workspaceId);
      const agent = await seed.agent(a.owner.client);
      assertStatus(
        await client.put(`/api/agents/${agent.id}/prompt`, { systemPrompt: "P", rationale: "r" }),
        200,
      );
      const [v] = (await client.get(`/api/agents/${agent.id}/prompt-versions`)).body.data;
      assert.equal(v.authorUserId, null);
      assert.match(v.authorLabel, /CRM sync/);
    });

    await t.step("the token without x-workspace-id -> 400, with another workspace -> 403", async () => {
      assertProblem(await new Client(app, token).get("/api/agents"), 400, "WORKSPACE_REQUIRED");
      assertProblem(await new Client(app, token, b.workspaceId).get("/api/agents"), 403, "FORBIDDEN");
      assertProblem(
        await new Client(app, token, b.workspaceId).post("/api/agents", { name: "x" }),
        403,
        "FORBIDDEN",
      );
      assertProblem(
        await new Client(app, token).get(`/api/workspaces/${b.workspaceId}/members`),
        403,
        "FORBIDDEN",
      );
      assert.equal(await db.agent.count({ where: { workspaceId: b.workspaceId } }), 0);
    });

    await t.step("lastUsedAt is set after use", async () => {
      let row = await db.apiToken.findUniqueOrThrow({ where: { id: tokenId } });
      for (let i = 0; i < 50 && !row.lastUsedAt; i++) {
        await new Promise((r) => setTimeout(r, 20));
        row = await db.apiToken.findUniqueOrThrow({ where: { id: tokenId } });
      }
      assert.ok(row.lastUsedAt instanceof Date);
      assert.ok(Math.abs(row.lastUsedAt.getTime() - Date.now()) < 60_000);
      const listed = (await a.owner.client.get(tokensA)).body.data[0];
      assert.equal(listed.lastUsedAt, row.lastUsedAt.toISOString());
    });

    await t.step(
      "the list names who created each token and when it was last used, REST and GraphQL",
      async () => {
        const ownerRow = await db.user.findUniqueOrThrow({ where: { id: a.owner.userId } });
        const byOwner = { id: ownerRow.id, name: ownerRow.name, email: ownerRow.email };
        // Created by an API token: no person to name.
        const byToken = await new Client(app, token, a.workspaceId).post(tokensA, {
          label: "made by a token",
        });
        assertStatus(byToken, 201);
        assert.equal(byToken.body.createdBy, null);
        // Created by a manager who is deleted since: the creator is unknown.
        const manager = await seed.member(a.workspaceId, "MANAGER");
        const byManager = await manager.client.post(tokensA, { label: "made by a manager" });
        assertStatus(byManager, 201);
        assert.equal(byManager.body.createdBy.id, manager.userId);
        await db.user.delete({ where: { id: manager.userId } });

        const used = await db.apiToken.findUniqueOrThrow({ where: { id: tokenId } });
        const listed = (await a.owner.client.get(tokensA)).body.data;
        assert.deepEqual(
          listed.map((x: Record<string, unknown>) => [x.id, x.createdBy, x.lastUsedAt]),
          [
            [tokenId, byOwner, used.lastUsedAt!.toISOString()],
            [byToken.body.id, null, null],
            [byManager.body.id, null, null],
          ],
        );
        const gql = await a.owner.client.graphql(
          `{ apiTokens { edges { node { id createdBy { id name email } lastUsedAt } } } }`,
        );
        assert.equal(gql.body.errors, undefined, JSON.stringify(gql.body));
        assert.deepEqual(
          gql.body.data.apiTokens.edges.map((e: { node: Record<string, unknown> }) => e.node),
          listed.map((x: Record<string, unknown>) => ({
            id: x.id,
            createdBy: x.createdBy,
            lastUsedAt: x.lastUsedAt,
          })),
        );
        // Back to one token in A for the steps below.
        await db.apiToken.deleteMany({ where: { id: { in: [byToken.body.id, byManager.body.id] } } });
      },
    );

    await t.step("a token of workspace A cannot revoke a token of workspace B", async () => {
      const inB = await b.owner.client.post(tokensB, { label: "B's" });
      assertStatus(inB, 201);
      const clientA = new Client(app, token, a.workspaceId);
      // Through B's path: not its workspace.
      assertProblem(await clientA.delete(`${tokensB}/${inB.body.id}`), 403, "FORBIDDEN");
      // Through A's path: B's token id is unknown there.
      assertProblem(await clientA.delete(`${tokensA}/${inB.body.id}`), 404, "NOT_FOUND");
      // And B's owner cannot revoke A's token through either path.
      assertProblem(await b.owner.client.delete(`${tokensB}/${tokenId}`), 404, "NOT_FOUND");
      assertProblem(await b.owner.client.delete(`${tokensA}/${tokenId}`), 403, "FORBIDDEN");
      assert.equal((await db.apiToken.findUniqueOrThrow({ where: { id: inB.body.id } })).revokedAt, null);
      assert.equal((await db.apiToken.findUniqueOrThrow({ where: { id: tokenId } })).revokedAt, null);
      assertStatus(await new Client(app, inB.body.token, b.workspaceId).get("/api/agents"), 200);
    });

    await t.step("revoke unknown id -> 404", async () => {
      assertProblem(await a.owner.client.delete(`${tokensA}/does-not-exist`), 404, "NOT_FOUND");
      assertProblem(await a.owner.client.delete(`${tokensA}/${"x".repeat(100)}`), 404, "NOT_FOUND");
    });

    await t.step("revoke: 204, then the same token gets 401 at once", async () => {
      const client = new Client(app, token, a.workspaceId);
      assertStatus(await client.get("/api/agents"), 200);
      const before = await counts(app);
      assertStatus(await a.owner.client.delete(`${tokensA}/${tokenId}`), 204);
      assertProblem(await client.get("/api/agents"), 401, "UNAUTHENTICATED");
      assertProblem(await client.post("/api/agents", { name: "after revoke" }), 401, "UNAUTHENTICATED");
      assertProblem(await new Client(app, token).get("/api/auth/me"), 401, "UNAUTHENTICATED");
      assert.deepEqual(await counts(app), before);
      const listed = (await a.owner.client.get(tokensA)).body.data.find((x: { id: string }) =>
        x.id === tokenId
      );
      assert.equal(typeof listed.revokedAt, "string");
    });

    await t.step("a token can revoke itself; a revoked token cannot be used to revoke", async () => {
      const res = await a.owner.client.post(tokensA, { label: "self" });
      const self = new Client(app, res.body.token, a.workspaceId);
      assertStatus(await self.delete(`${tokensA}/${res.body.id}`), 204);
      assertProblem(await self.delete(`${tokensA}/${res.body.id}`), 401, "UNAUTHENTICATED");
    });

    await t.step("create: label required, non-empty, no unknown fields", async () => {
      const before = await counts(app);
      assertProblem(await a.owner.client.post(tokensA, {}), 400, "VALIDATION_FAILED", ["label"]);
      assertProblem(await a.owner.client.post(tokensA, { label: "  " }), 400, "VALIDATION_FAILED", ["label"]);
      assertProblem(await a.owner.client.post(tokensA, { label: 7 }), 400, "VALIDATION_FAILED", ["label"]);
      assertProblem(
        await a.owner.client.post(tokensA, { label: "x", role: "OWNER" }),
        400,
        "VALIDATION_FAILED",
        [
          "role",
        ],
      );
      assert.deepEqual(await counts(app), before);
    });

    await t.step(
      "MANAGER may create and revoke tokens; AGENT and VIEWER may not even list them",
      async () => {
        const manager = await seed.member(a.workspaceId, "MANAGER");
        const res = await manager.client.post(tokensA, { label: "by manager" });
        assertStatus(res, 201);
        assertStatus(await manager.client.delete(`${tokensA}/${res.body.id}`), 204);
        for (const role of ["AGENT", "VIEWER"] as const) {
          const m = await seed.member(a.workspaceId, role);
          assertProblem(await m.client.get(tokensA), 403, "FORBIDDEN");
          assertProblem(await m.client.post(tokensA, { label: "nope" }), 403, "FORBIDDEN");
        }
      },
    );
  } finally {
    await ta.close();
  }
});
