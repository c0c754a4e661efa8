/**
 * Workspaces: create with a login JWT, list memberships, delete
 * (OWNER only) with everything in it.
 */
import assert from "node:assert/strict";
import { Client, startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus, counts, snapshot } from "./_helpers/problem.ts";

Deno.test("workspaces", async (t) => {
  const ta = await startTestApp();
  const { app, seed } = ta;
  const db = app.deps.db;
  try {
    const user = await seed.user();
    let first = "";
    let second = "";

    await t.step(
      "POST /api/workspaces: 201 { id, name, role: OWNER }, no x-workspace-id needed",
      async () => {
        const res = await user.client.post("/api/workspaces", { name: "  First  " });
        assertStatus(res, 201);
        assert.deepEqual(Object.keys(res.body).sort(), ["id", "name", "role"]);
        assert.equal(res.body.name, "First");
        assert.equal(res.body.role, "OWNER");
        first = res.body.id;
        const m = await db.membership.findUniqueOrThrow({
          where: { userId_workspaceId: { userId: user.userId, workspaceId: first } },
        });
        assert.equal(m.role, "OWNER");
        second = (await user.client.post("/api/workspaces", { name: "Second" })).body.id;
      },
    );

    await t.step("GET /api/workspaces lists the caller's memberships like login", async () => {
      const res = await user.client.get("/api/workspaces");
      assertStatus(res, 200);
      assert.deepEqual(res.body, {
        data: [{ id: first, name: "First", role: "OWNER" }, { id: second, name: "Second", role: "OWNER" }],
      });
      const login = await ta.anon.post("/api/auth/login", { email: user.email, password: user.password });
      assert.deepEqual(login.body.workspaces, res.body.data);
      const stranger = await seed.user();
      assert.deepEqual((await stranger.client.get("/api/workspaces")).body, { data: [] });
    });

    await t.step("GET /api/workspaces with an API token: its own workspace, as MANAGER", async () => {
      const tok = await user.client.post(`/api/workspaces/${first}/api-tokens`, { label: "t" });
      const res = await new Client(app, tok.body.token).get("/api/workspaces");
      assert.deepEqual(res.body, { data: [{ id: first, name: "First", role: "MANAGER" }] });
    });

    await t.step("create: name required and non-empty; unknown fields refused", async () => {
      const before = await counts(app);
      assertProblem(await user.client.post("/api/workspaces", {}), 400, "VALIDATION_FAILED", ["name"]);
      assertProblem(await user.client.post("/api/workspaces", { name: "   " }), 400, "VALIDATION_FAILED", [
        "name",
      ]);
      assertProblem(await user.client.post("/api/workspaces", { name: 3 }), 400, "VALIDATION_FAILED", [
        "name",
      ]);
      assertProblem(
        await user.client.post("/api/workspaces", { name: "x".repeat(201) }),
        400,
        "VALIDATION_FAILED",
        [
          "name",
        ],
      );
      assertProblem(
        await user.client.post("/api/workspaces", { name: "X", role: "VIEWER" }),
        400,
        "VALIDATION_FAILED",
        [
          "role",
        ],
      );
      assertProblem(await ta.anon.post("/api/workspaces", { name: "X" }), 401, "UNAUTHENTICATED");
      assert.deepEqual(await counts(app), before);
    });

    await t.step("an API token cannot create a workspace (403)", async () => {
      const tok = await user.client.post(`/api/workspaces/${first}/api-tokens`, { label: "ci" });
      const before = await counts(app);
      const res = await new Client(app, tok.body.token, first).post("/api/workspaces", { name: "By token" });
      assertProblem(res, 403, "FORBIDDEN");
      assert.deepEqual(await counts(app), before);
    });

    // Fill `first` with one of everything, and `second` with a little, to see what DELETE removes.
    const owner = new Client(app, user.token, first);
    const agent = await seed.agent(owner);
    assertStatus(
      await owner.post(`/api/agents/${agent.id}/intents`, {
        name: "Book",
        description: "d",
        triggerOnTypes: ["TEXT"],
        requiredFields: [],
        webhookUrl: "https://example.com/i",
      }),
      201,
    );
    assertStatus(
      await owner.post(`/api/agents/${agent.id}/webhooks`, {
        event: "message.sent",
        url: "https://example.com/w",
      }),
      201,
    );
    assertStatus(
      await owner.put(`/api/agents/${agent.id}/prompt`, { systemPrompt: "P", rationale: "r" }),
      200,
    );
    assertStatus(
      await owner.post(`/api/workspaces/${first}/invites`, { email: "i@example.test", role: "AGENT" }),
      201,
    );
    const token = (await owner.post(`/api/workspaces/${first}/api-tokens`, { label: "x" })).body.token;
    const manager = await seed.member(first, "MANAGER");
    const agentMember = await seed.member(first, "AGENT");
    const viewer = await seed.member(first, "VIEWER");
    const keptAgent = await seed.agent(new Client(app, user.token, second));

    await t.step("DELETE by MANAGER, AGENT, VIEWER or an API token -> 403, nothing removed", async () => {
      const stranger = await seed.user(); // not a member at all
      const before = await snapshot(app);
      for (
        const c of [
          manager.client,
          agentMember.client,
          viewer.client,
          new Client(app, token, first),
          stranger.client,
        ]
      ) {
        assertProblem(await c.delete(`/api/workspaces/${first}`), 403, "FORBIDDEN");
      }
      assert.equal(await snapshot(app), before);
    });

    await t.step("DELETE by OWNER -> 204, then everything in it is gone", async () => {
      const secondBefore = await db.agent.count({ where: { workspaceId: second } });
      assertStatus(await owner.delete(`/api/workspaces/${first}`), 204);
      assert.equal(await db.workspace.count({ where: { id: first } }), 0);
      for (
        const n of await Promise.all([
          db.agent.count({ where: { workspaceId: first } }),
          db.intent.count({ where: { agentId: agent.id } }),
          db.eventWebhook.count({ where: { agentId: agent.id } }),
          db.promptVersion.count({ where: { agentId: agent.id } }),
          db.membership.count({ where: { workspaceId: first } }),
          db.invite.count({ where: { workspaceId: first } }),
          db.apiToken.count({ where: { workspaceId: first } }),
        ])
      ) assert.equal(n, 0);
      // Its former members are no longer members; its agent is unreachable.
      assertProblem(await owner.get("/api/agents"), 403, "FORBIDDEN");
      assertProblem(await owner.get(`/api/agents/${agent.id}`), 403, "FORBIDDEN");
      assertProblem(await manager.client.get("/api/agents"), 403, "FORBIDDEN");
      assertProblem(
        await new Client(app, user.token, second).get(`/api/agents/${agent.id}`),
        404,
        "NOT_FOUND",
      );
      // Its API tokens stop working.
      assertProblem(await new Client(app, token, first).get("/api/agents"), 401, "UNAUTHENTICATED");
      // The users remain; the other workspace is untouched.
      assert.equal(await db.user.count({ where: { id: manager.userId } }), 1);
      assert.deepEqual((await user.client.get("/api/workspaces")).body, {
        data: [{ id: second, name: "Second", role: "OWNER" }],
      });
      assert.deepEqual((await manager.client.get("/api/workspaces")).body, { data: [] });
      assert.equal(await db.agent.count({ where: { workspaceId: second } }), secondBefore);
      assertStatus(await new Client(app, user.token, second).get(`/api/agents/${keptAgent.id}`), 200);
      // Deleting it again: no longer a member.
      assertProblem(await owner.delete(`/api/workspaces/${first}`), 403, "FORBIDDEN");
    });

    await t.step("GET /api/workspaces/{id}/members lists members with their roles", async () => {
      const other = await seed.workspace("Members");
      const viewer2 = await seed.member(other.workspaceId, "VIEWER");
      const res = await viewer2.client.get(`/api/workspaces/${other.workspaceId}/members`);
      assertStatus(res, 200);
      assert.deepEqual(
        res.body.data.map((m: { id: string; role: string }) => [m.id, m.role]),
        [[other.owner.userId, "OWNER"], [viewer2.userId, "VIEWER"]],
      );
      assert.deepEqual(Object.keys(res.body.data[0]).sort(), ["email", "id", "joinedAt", "name", "role"]);
    });
  } finally {
    await ta.close();
  }
});
