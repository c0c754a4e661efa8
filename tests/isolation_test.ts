/**
 * Workspace isolation: two workspaces of one owner, and a third of another user. Nothing of one
 * is visible or reachable from another, by id (agent, intent, webhook, prompt version, API token,
 * invite) or in any list; a foreign id answers exactly like an unknown one.
 */
import assert from "node:assert/strict";
import { Client, type Reply, startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus, snapshot } from "./_helpers/problem.ts";
import { encodeCursor } from "../src/shared/pagination.ts";
import { HOOK, INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { actorOf, newApproval } from "./_helpers/approvals.ts";

const INTENT = { name: "Agendar Visita", ...INTENT_FIELDS };

interface Fixture {
  workspaceId: string;
  client: Client;
  tokenClient: Client;
  agent: string;
  intent: string;
  webhook: string;
  version: string;
  invite: string;
  inviteToken: string;
  apiToken: string;
  /** A PENDING approval. */
  approval: string;
}

const ids = (r: Reply) => r.body.data.map((x: { id: string }) => x.id).sort();

Deno.test("isolation", async (t) => {
  const ta = await startTestApp();
  const { app, seed } = ta;
  try {
    const u = await seed.workspace("U one");
    const v = await seed.workspace("V");
    const uTwo = await u.owner.client.post("/api/workspaces", { name: "U two" });
    assertStatus(uTwo, 201);

    // Same names everywhere, so only ids tell them apart.
    const fill = async (client: Client, workspaceId: string): Promise<Fixture> => {
      const agent = (await client.post("/api/agents", { name: "Ana" })).body.id;
      const intent = (await client.post(`/api/agents/${agent}/intents`, INTENT)).body.id;
      const webhook = (await client.post(`/api/agents/${agent}/webhooks`, HOOK)).body.id;
      await client.put(`/api/agents/${agent}/prompt`, { systemPrompt: "P", rationale: "r" });
      const version = (await client.get(`/api/agents/${agent}/prompt-versions`)).body.data[0].id;
      const inv = await client.post(`/api/workspaces/${workspaceId}/invites`, {
        email: "same@example.test",
        role: "VIEWER",
      });
      const tok = await client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "same" });
      const approval = await newApproval(await actorOf(app, client.token!, workspaceId), agent);
      return {
        approval,
        workspaceId,
        client,
        tokenClient: new Client(app, tok.body.token, workspaceId),
        agent,
        intent,
        webhook,
        version,
        invite: inv.body.id,
        inviteToken: inv.body.inviteUrl.split("/").pop(),
        apiToken: tok.body.id,
      };
    };
    const w1 = await fill(u.owner.client, u.workspaceId);
    const w2 = await fill(u.owner.client.in(uTwo.body.id), uTwo.body.id);
    const w3 = await fill(v.owner.client, v.workspaceId);
    const all = [w1, w2, w3];

    /** Every by-id call of `target`'s records, made from `from`'s workspace. */
    const byIdCalls = (c: Client, from: Fixture, target: Fixture): Array<[string, Promise<Reply>]> => {
      const A = `/api/agents/${target.agent}`;
      const mine = `/api/agents/${from.agent}`;
      const ws = `/api/workspaces/${from.workspaceId}`;
      return [
        ["GET agent", c.get(A)],
        ["PUT agent", c.put(A, { name: "Taken" })],
        ["PATCH status", c.patch(`${A}/status`, { status: "PAUSED" })],
        ["PUT prompt", c.put(`${A}/prompt`, { systemPrompt: "Taken", rationale: "r" })],
        ["GET versions", c.get(`${A}/prompt-versions`)],
        ["revert foreign agent", c.post(`${A}/prompt-versions/${target.version}/revert`)],
        ["revert foreign version", c.post(`${mine}/prompt-versions/${target.version}/revert`)],
        ["GET intents", c.get(`${A}/intents`)],
        ["POST intent", c.post(`${A}/intents`, { ...INTENT, name: "Planted" })],
        ["GET intent", c.get(`${A}/intents/${target.intent}`)],
        ["GET intent via mine", c.get(`${mine}/intents/${target.intent}`)],
        ["PATCH intent", c.patch(`${A}/intents/${target.intent}`, { description: "x" })],
        ["PATCH intent via mine", c.patch(`${mine}/intents/${target.intent}`, { description: "x" })],
        ["DELETE intent via mine", c.delete(`${mine}/intents/${target.intent}`)],
        ["GET webhooks", c.get(`${A}/webhooks`)],
        ["POST webhook", c.post(`${A}/webhooks`, HOOK)],
        ["GET webhook", c.get(`${A}/webhooks/${target.webhook}`)],
        ["GET webhook via mine", c.get(`${mine}/webhooks/${target.webhook}`)],
        ["PATCH webhook via mine", c.patch(`${mine}/webhooks/${target.webhook}`, { method: "PUT" })],
        ["rotate via mine", c.post(`${mine}/webhooks/${target.webhook}/rotate-secret`)],
        ["DELETE webhook via mine", c.delete(`${mine}/webhooks/${target.webhook}`)],
        ["DELETE intent", c.delete(`${A}/intents/${target.intent}`)],
        ["DELETE webhook", c.delete(`${A}/webhooks/${target.webhook}`)],
        ["DELETE agent", c.delete(A)],
        ["DELETE invite via mine", c.delete(`${ws}/invites/${target.invite}`)],
        ["revoke token via mine", c.delete(`${ws}/api-tokens/${target.apiToken}`)],
        ["GET approval", c.get(`/api/approvals/${target.approval}`)],
        // Deciding needs a person: an API token is refused (403) before any id is looked at.
        ...(c === from.tokenClient ? [] : [
          ["approve", c.post(`/api/approvals/${target.approval}/approve`)] as [string, Promise<Reply>],
          ["reject", c.post(`/api/approvals/${target.approval}/reject`)] as [string, Promise<Reply>],
        ]),
      ];
    };

    const pairs: Array<[string, Fixture, Fixture]> = [
      ["same owner: W1 -> W2", w1, w2],
      ["same owner: W2 -> W1", w2, w1],
      ["other user: W1 -> W3", w1, w3],
      ["other user: W3 -> W1", w3, w1],
    ];
    for (const [name, from, target] of pairs) {
      await t.step(
        `by id, ${name}: 404 like an unknown id, nothing changes (JWT and API token)`,
        async () => {
          const before = await snapshot(app);
          for (const c of [from.client, from.tokenClient]) {
            for (const [what, call] of byIdCalls(c, from, target)) {
              const res = await call;
              assert.equal(res.status, 404, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
              assertProblem(res, 404, "NOT_FOUND");
            }
            // The answer does not reveal that the id exists.
            const foreign = await c.get(`/api/agents/${target.agent}`);
            const unknown = await c.get(`/api/agents/c${"0".repeat(24)}`);
            assert.deepEqual(foreign.body, {
              ...unknown.body,
              detail: foreign.body.detail,
              instance: foreign.body.instance, // each request's own id
            });
            assert.equal(foreign.body.detail, unknown.body.detail);
          }
          assert.equal(await snapshot(app), before);
        },
      );
    }

    await t.step("lists show only the workspace's own records", async () => {
      for (const f of all) {
        for (const c of [f.client, f.tokenClient]) {
          assert.deepEqual(ids(await c.get("/api/agents")), [f.agent]);
          const [listed] = (await c.get("/api/agents")).body.data;
          assert.deepEqual(listed._count, { conversations: 0, intents: 1, numbers: 0 });
          assert.deepEqual(ids(await c.get(`/api/agents/${f.agent}/intents`)), [f.intent]);
          assert.deepEqual(ids(await c.get(`/api/agents/${f.agent}/webhooks`)), [f.webhook]);
          assert.deepEqual(ids(await c.get(`/api/agents/${f.agent}/prompt-versions`)), [f.version]);
          assert.deepEqual(ids(await c.get(`/api/workspaces/${f.workspaceId}/invites`)), [f.invite]);
          assert.deepEqual(ids(await c.get(`/api/workspaces/${f.workspaceId}/api-tokens`)), [f.apiToken]);
          assert.deepEqual(ids(await c.get("/api/approvals")), [f.approval]);
          assert.deepEqual(ids(await c.get("/api/supervisor/changes")), [f.approval]);
        }
      }
      // Members: W1 and W2 have the same single owner; W3 another.
      const m1 = (await w1.client.get(`/api/workspaces/${w1.workspaceId}/members`)).body.data;
      const m3 = (await w3.client.get(`/api/workspaces/${w3.workspaceId}/members`)).body.data;
      assert.deepEqual(m1.map((m: { id: string }) => m.id), [u.owner.userId]);
      assert.deepEqual(m3.map((m: { id: string }) => m.id), [v.owner.userId]);
    });

    await t.step("cursors of another workspace do not leak its rows", async () => {
      // A cursor naming their agent at the start of time: every row after it, of W1 only.
      for (const id of [w2.agent, w3.agent]) {
        const res = await w1.client.get(`/api/agents?cursor=${encodeCursor({ at: new Date(0), id })}`);
        assertStatus(res, 200);
        for (const a of res.body.data) assert.equal(a.id, w1.agent);
        assert.equal(res.body.nextCursor, null);
      }
    });

    await t.step("a workspace of which the caller is not a member: 403 with header or path", async () => {
      const before = await snapshot(app);
      for (const c of [u.owner.client.in(w3.workspaceId), w1.tokenClient.in(w2.workspaceId)]) {
        assertProblem(await c.get("/api/agents"), 403, "FORBIDDEN");
        assertProblem(await c.get(`/api/agents/${w3.agent}`), 403, "FORBIDDEN");
        assertProblem(await c.post("/api/agents", { name: "Planted" }), 403, "FORBIDDEN");
        assertProblem(await c.get("/api/supervisor/conversation"), 403, "FORBIDDEN");
        assertProblem(await c.post("/api/supervisor/chat", { message: "Planted" }), 403, "FORBIDDEN");
        assertProblem(await c.delete("/api/supervisor/conversation"), 403, "FORBIDDEN");
        assertProblem(await c.get("/api/supervisor/credits"), 403, "FORBIDDEN");
      }
      const paths = (
        ws: string,
      ) => [
        `/api/workspaces/${ws}/members`,
        `/api/workspaces/${ws}/invites`,
        `/api/workspaces/${ws}/api-tokens`,
      ];
      for (const p of paths(w3.workspaceId)) assertProblem(await w1.client.get(p), 403, "FORBIDDEN");
      // An API token of W1 does not reach W2, although the same person owns both.
      for (const p of paths(w2.workspaceId)) assertProblem(await w1.tokenClient.get(p), 403, "FORBIDDEN");
      assertProblem(
        await w1.tokenClient.delete(`/api/workspaces/${w2.workspaceId}/api-tokens/${w2.apiToken}`),
        403,
        "FORBIDDEN",
      );
      assertProblem(
        await w1.client.post(`/api/workspaces/${w3.workspaceId}/invites`, {
          email: "x@example.test",
          role: "OWNER",
        }),
        403,
        "FORBIDDEN",
      );
      assertProblem(await w1.client.delete(`/api/workspaces/${w3.workspaceId}`), 403, "FORBIDDEN");
      assert.equal(await snapshot(app), before);
    });

    await t.step("accepting W2's invite grants W2 only", async () => {
      const res = await ta.anon.post(`/invite/${w2.inviteToken}`, {
        name: "Same",
        password: "a long password",
      });
      assertStatus(res, 200);
      assert.deepEqual(res.body.workspaces, [{ id: w2.workspaceId, name: "U two", role: "VIEWER" }]);
      const c = new Client(app, res.body.token);
      assertStatus(await c.in(w2.workspaceId).get(`/api/agents/${w2.agent}`), 200);
      assertProblem(await c.in(w1.workspaceId).get("/api/agents"), 403, "FORBIDDEN");
      assertProblem(await c.in(w2.workspaceId).get(`/api/agents/${w1.agent}`), 404, "NOT_FOUND");
      // The same email's invites of W1 and W3 are separate and still open.
      assertStatus(await ta.anon.get(`/invite/${w1.inviteToken}`), 200);
      assertStatus(await ta.anon.get(`/invite/${w3.inviteToken}`), 200);
    });

    await t.step(
      "each workspace has its own supervisor conversation; a reset erases only its own",
      async () => {
        // No model here: each chat answers 503 and keeps the person's message, enough to tell them apart.
        for (const f of all) {
          assertProblem(
            await f.client.post("/api/supervisor/chat", { message: `from ${f.workspaceId}` }),
            503,
            "SUPERVISOR_MODEL_UNAVAILABLE",
          );
        }
        const seen = await Promise.all(
          all.map(async (f) => (await f.tokenClient.get("/api/supervisor/conversation")).body),
        );
        assert.equal(new Set(seen.map((c) => c.id)).size, 3);
        for (const [i, f] of all.entries()) {
          assert.deepEqual(seen[i].messages.map((m: { content: string }) => m.content), [
            `from ${f.workspaceId}`,
          ]);
        }
        assertStatus(await w3.client.delete("/api/supervisor/conversation"), 204);
        assert.equal((await w1.client.get("/api/supervisor/conversation")).body.messages.length, 1);
        assert.equal((await w3.client.get("/api/supervisor/conversation")).body.messages.length, 0);
      },
    );

    await t.step("deleting W2 leaves W1 and W3 whole", async () => {
      const keep = async () =>
        JSON.stringify(
          await Promise.all([w1, w3].map(async (f) => [
            (await f.client.get(`/api/agents/${f.agent}`)).body,
            (await f.client.get(`/api/agents/${f.agent}/intents`)).body,
            (await f.client.get(`/api/agents/${f.agent}/webhooks`)).body,
            (await f.client.get(`/api/agents/${f.agent}/prompt-versions`)).body,
          ])),
        );
      const before = await keep();
      assertStatus(await w2.client.delete(`/api/workspaces/${w2.workspaceId}`), 204);
      assert.equal(await keep(), before);
      assertStatus(await w1.tokenClient.get("/api/agents"), 200);
      assertProblem(await w2.tokenClient.get("/api/agents"), 401, "UNAUTHENTICATED");
    });
  } finally {
    await ta.close();
  }
});
