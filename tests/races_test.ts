/**
 * Races between a write and the deletion of its row or of its parent, as concurrent requests
 * through app.fetch (no sleeps): every answer is a success, 404 or 403 (the membership went with the
 * workspace before the caller was authorized), never 500; GraphQL never answers INTERNAL. The loser
 * of a race sees what a later request would see: the row or its parent is gone.
 */
import assert from "node:assert/strict";
import { Client, type Reply, startTestApp, type TestApp } from "./_helpers/app.ts";
import { assertProblem } from "./_helpers/problem.ts";
import { dbAppError } from "../src/shared/db_errors.ts";
import { AppError } from "../src/shared/errors.ts";
import { DATE_INTENT } from "./_helpers/fixtures.ts";

const ROUNDS = 20;
const INTENT = DATE_INTENT;
const HOOK = { event: "message.sent", url: "https://example.com/w" };

/** The reply is one of `allowed`; an error is problem+json with the code that status stands for. */
function assertOneOf(res: Reply, allowed: number[], what: string): void {
  assert.ok(allowed.includes(res.status), `${what}: ${res.status} ${JSON.stringify(res.body)}`);
  if (res.status === 404) assertProblem(res, 404, "NOT_FOUND");
  if (res.status === 403) assertProblem(res, 403, "FORBIDDEN");
}

/** GraphQL: no error, or only errors whose code is one of `codes` (never INTERNAL). */
function assertGraph(res: Reply, codes: string[], what: string): string {
  const where = `${what}: ${res.status} ${JSON.stringify(res.body)}`;
  assert.ok(res.status < 500, where);
  const errors: Array<{ extensions?: { code?: string } }> = res.body.errors ?? [];
  for (const e of errors) assert.ok(codes.includes(e.extensions?.code ?? ""), where);
  return errors[0]?.extensions?.code ?? "OK";
}

async function created(res: Promise<Reply>): Promise<string> {
  const r = await res;
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id as string;
}

Deno.test("races between writes and deletes", async (t) => {
  const ta: TestApp = await startTestApp({}, { workers: false });
  try {
    const { owner } = await ta.seed.workspace();
    const c = owner.client;
    const db = ta.app.deps.db;
    const newAgent = () => created(c.post("/api/agents", { name: "Ana" }));
    /** A workspace of its own for each round of a race against its deletion. */
    const newWorkspace = async () => {
      const id = await created(new Client(ta.app, owner.token).post("/api/workspaces", { name: "W" }));
      return { id, client: new Client(ta.app, owner.token, id) };
    };
    const agentId = await newAgent();

    await t.step("intent PATCH vs DELETE: 200 or 404, and the DELETE 204", async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const id = await created(c.post(`/api/agents/${agentId}/intents`, { ...INTENT, name: `I${i}` }));
        const path = `/api/agents/${agentId}/intents/${id}`;
        const [patch, del] = await Promise.all([c.patch(path, { description: "x" }), c.delete(path)]);
        assertOneOf(patch, [200, 404], "PATCH");
        assertOneOf(del, [204], "DELETE");
      }
    });

    await t.step("two DELETEs of one webhook: one 204, one 404", async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const id = await created(c.post(`/api/agents/${agentId}/webhooks`, HOOK));
        const path = `/api/agents/${agentId}/webhooks/${id}`;
        const both = await Promise.all([c.delete(path), c.delete(path)]);
        both.forEach((r) => assertOneOf(r, [204, 404], "DELETE"));
        assert.deepEqual(both.map((r) => r.status).sort(), [204, 404]);
      }
    });

    await t.step("webhook PATCH, rotate-secret and test event vs DELETE", async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const id = await created(c.post(`/api/agents/${agentId}/webhooks`, HOOK));
        const path = `/api/agents/${agentId}/webhooks/${id}`;
        const [patch, rotate, test, del] = await Promise.all([
          c.patch(path, { method: "PUT" }),
          c.post(`${path}/rotate-secret`),
          c.post(`${path}/test`),
          c.delete(path),
        ]);
        assertOneOf(patch, [200, 404], "PATCH");
        assertOneOf(rotate, [200, 404], "rotate-secret");
        assertOneOf(test, [202, 404], "test");
        assertOneOf(del, [204], "DELETE");
      }
      assert.equal(await db.eventWebhook.count(), 0);
    });

    await t.step("prompt update, PUT, status and intent create vs agent DELETE", async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const id = await newAgent();
        const path = `/api/agents/${id}`;
        const [prompt, put, status, intent, del] = await Promise.all([
          c.put(`${path}/prompt`, { systemPrompt: "P", rationale: "r" }),
          c.put(path, { name: "B" }),
          c.patch(`${path}/status`, { status: "PAUSED" }),
          c.post(`${path}/intents`, INTENT),
          c.delete(path),
        ]);
        assertOneOf(prompt, [200, 404], "prompt");
        assertOneOf(put, [200, 404], "PUT");
        assertOneOf(status, [200, 404], "status");
        assertOneOf(intent, [201, 404], "intent");
        assertOneOf(del, [204], "DELETE");
      }
    });

    await t.step(
      "agent, invite and API token created, token revoked, while the workspace is deleted",
      async () => {
        for (let i = 0; i < ROUNDS; i++) {
          const ws = await newWorkspace();
          const tokenId = await created(
            ws.client.post(`/api/workspaces/${ws.id}/api-tokens`, { label: "t" }),
          );
          const [agent, invite, token, revoke, del] = await Promise.all([
            ws.client.post("/api/agents", { name: "Ana" }),
            ws.client.post(`/api/workspaces/${ws.id}/invites`, { email: "x@example.test", role: "AGENT" }),
            ws.client.post(`/api/workspaces/${ws.id}/api-tokens`, { label: "u" }),
            ws.client.delete(`/api/workspaces/${ws.id}/api-tokens/${tokenId}`),
            ws.client.delete(`/api/workspaces/${ws.id}`),
          ]);
          assertOneOf(agent, [201, 403, 404], "agent");
          assertOneOf(invite, [201, 403, 404], "invite");
          assertOneOf(token, [201, 403, 404], "token");
          assertOneOf(revoke, [204, 403, 404], "revoke");
          assertOneOf(del, [204], "workspace DELETE");
          // Nothing outlives its workspace.
          assert.equal(await db.agent.count({ where: { workspaceId: ws.id } }), 0);
          assert.equal(await db.invite.count({ where: { workspaceId: ws.id } }), 0);
          assert.equal(await db.apiToken.count({ where: { workspaceId: ws.id } }), 0);
        }
      },
    );

    await t.step("two intents with one tag at once: one 201, one 409 DUPLICATE_INTENT", async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const body = { ...INTENT, name: `Dup${i}` };
        const both = await Promise.all([
          c.post(`/api/agents/${agentId}/intents`, body),
          c.post(`/api/agents/${agentId}/intents`, body),
        ]);
        assert.deepEqual(
          both.map((r) => r.status).sort(),
          [201, 409],
          JSON.stringify(both.map((r) => r.body)),
        );
        assertProblem(both.find((r) => r.status === 409)!, 409, "DUPLICATE_INTENT");
      }
    });

    await t.step("an invite accepted while its workspace is deleted: 200 or 404, never 500", async () => {
      for (let i = 0; i < 5; i++) {
        const ws = await newWorkspace();
        const invite = await ws.client.post(`/api/workspaces/${ws.id}/invites`, {
          email: `new${i}@example.test`,
          role: "AGENT",
        });
        const token = (invite.body.inviteUrl as string).split("/").pop();
        const [accept, del] = await Promise.all([
          ta.anon.post(`/invite/${token}`, { password: "correct horse battery" }),
          ws.client.delete(`/api/workspaces/${ws.id}`),
        ]);
        assertOneOf(accept, [200, 404], "accept");
        assertOneOf(del, [204], "workspace DELETE");
        assert.equal(await db.membership.count({ where: { workspaceId: ws.id } }), 0);
      }
    });

    await t.step("member role change and removal vs workspace DELETE", async () => {
      const member = await ta.seed.user();
      for (let i = 0; i < ROUNDS; i++) {
        const ws = await newWorkspace();
        await db.membership.create({ data: { userId: member.userId, workspaceId: ws.id, role: "MANAGER" } });
        const path = `/api/workspaces/${ws.id}/members/${member.userId}`;
        const [role, remove, del] = await Promise.all([
          ws.client.patch(path, { role: "VIEWER" }),
          ws.client.delete(path),
          ws.client.delete(`/api/workspaces/${ws.id}`),
        ]);
        assertOneOf(role, [200, 403, 404], "role change");
        assertOneOf(remove, [204, 403, 404], "removal");
        assertOneOf(del, [204], "workspace DELETE");
      }
    });

    await t.step("two DELETEs of one workspace: one 204, the other 403 or 404", async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const ws = await newWorkspace();
        const both = await Promise.all([
          ws.client.delete(`/api/workspaces/${ws.id}`),
          ws.client.delete(`/api/workspaces/${ws.id}`),
        ]);
        const sorted = both.map((r) => r.status).sort();
        assert.equal(sorted[0], 204, JSON.stringify(both.map((r) => r.body)));
        assertOneOf(both.find((r) => r.status !== 204) ?? both[1], [204, 403, 404], "second DELETE");
        assert.notEqual(sorted[1], 204);
      }
    });

    await t.step("GraphQL: the same races answer NOT_FOUND or FORBIDDEN, never INTERNAL", async () => {
      const seen = new Set<string>();
      for (let i = 0; i < ROUNDS; i++) {
        const intentId = await created(
          c.post(`/api/agents/${agentId}/intents`, { ...INTENT, name: `G${i}` }),
        );
        const hookId = await created(c.post(`/api/agents/${agentId}/webhooks`, HOOK));
        const doomed = await newAgent();
        const ws = await newWorkspace();
        const replies = await Promise.all([
          c.graphql(
            `mutation($a: ID!, $i: ID!) { updateIntent(agentId: $a, id: $i, input: { description: "x" }) { id } }`,
            { a: agentId, i: intentId },
          ),
          c.graphql(`mutation($a: ID!, $i: ID!) { deleteIntent(agentId: $a, id: $i) }`, {
            a: agentId,
            i: intentId,
          }),
          c.graphql(`mutation($a: ID!, $i: ID!) { deleteWebhook(agentId: $a, id: $i) }`, {
            a: agentId,
            i: hookId,
          }),
          c.graphql(`mutation($a: ID!, $i: ID!) { deleteWebhook(agentId: $a, id: $i) }`, {
            a: agentId,
            i: hookId,
          }),
          c.graphql(
            `mutation($a: ID!, $i: ID!) { rotateWebhookSecret(agentId: $a, id: $i) { webhook { id } } }`,
            {
              a: agentId,
              i: hookId,
            },
          ),
          c.graphql(
            `mutation($a: ID!) { updateAgentPrompt(id: $a, input: { systemPrompt: "P", rationale: "r" }) { id promptVersions(first: 5) { edges { node { id } } } } }`,
            { a: doomed },
          ),
          c.graphql(`mutation($a: ID!) { deleteAgent(id: $a) }`, { a: doomed }),
          ws.client.graphql(`mutation { createAgent(input: { name: "Ana" }) { id } }`),
          ws.client.graphql(
            `mutation { createInvite(input: { email: "x@example.test", role: AGENT }) { inviteUrl } }`,
          ),
          ws.client.graphql(`mutation($w: ID!) { deleteWorkspace(id: $w) }`, { w: ws.id }),
        ]);
        replies.forEach((r, n) => seen.add(assertGraph(r, ["NOT_FOUND", "FORBIDDEN"], `mutation ${n}`)));
        const deletes = [replies[2], replies[3]].map((r) => assertGraph(r, ["NOT_FOUND"], "deleteWebhook"));
        assert.deepEqual(deletes.sort(), ["NOT_FOUND", "OK"]);
        assert.equal(assertGraph(replies[1], [], "deleteIntent"), "OK");
        assert.equal(assertGraph(replies[6], [], "deleteAgent"), "OK");
        assert.equal(assertGraph(replies[9], [], "deleteWorkspace"), "OK");
      }
      assert.ok(seen.has("NOT_FOUND"), `the races were lost at least once: ${[...seen]}`);
    });

    await t.step(
      "a deleted user's JWT creating a workspace: 401 UNAUTHENTICATED over REST and GraphQL",
      async () => {
        const gone = await ta.seed.user();
        await db.user.delete({ where: { id: gone.userId } });
        const before = await db.workspace.count();
        assertProblem(await gone.client.post("/api/workspaces", { name: "X" }), 401, "UNAUTHENTICATED");
        const res = await gone.client.graphql(`mutation { createWorkspace(input: { name: "X" }) { id } }`);
        assert.equal(res.body.errors?.[0]?.extensions?.code, "UNAUTHENTICATED", JSON.stringify(res.body));
        assert.equal(await db.workspace.count(), before);
      },
    );
  } finally {
    await ta.close();
  }
});

/** What a statement's error maps to: [status, code, message], or "unmapped" (a bug: stays a 500). */
async function mapped(statement: Promise<unknown>): Promise<[number, string, string] | "unmapped"> {
  const err = await statement.then(() => assert.fail("the statement should fail"), (e) => e);
  const app = dbAppError(err);
  if (!app) return "unmapped";
  assert.ok(app instanceof AppError);
  return [app.status, app.code, app.message];
}

Deno.test("dbAppError() maps only Prisma's not-found, foreign key, unique and deadlock errors", async () => {
  const ta = await startTestApp({}, { workers: false });
  try {
    const db = ta.app.deps.db;
    const { workspaceId } = await ta.seed.workspace();
    const agent = { name: "A", model: "m", systemPrompt: "p" };
    assert.deepEqual(
      await mapped(db.intent.update({ where: { id: "gone" }, data: { description: "x" } })),
      [404, "NOT_FOUND", "Intent not found."],
    );
    assert.deepEqual(
      await mapped(db.eventWebhook.delete({ where: { id: "gone" } })),
      [404, "NOT_FOUND", "Webhook not found."],
    );
    assert.deepEqual(
      await mapped(db.agent.create({ data: { ...agent, workspaceId: "gone" } })),
      [404, "NOT_FOUND", "Workspace not found."],
    );
    assert.deepEqual(
      await mapped(db.$executeRaw`
        INSERT INTO "PromptVersion" (id, "agentId", "systemPrompt", rationale, "authorLabel")
        VALUES ('pv', 'gone', 'p', 'r', 'l')`),
      [404, "NOT_FOUND", "Agent not found."],
    );
    const user = await db.user.findFirstOrThrow();
    assert.deepEqual(
      await mapped(db.user.create({ data: { email: user.email, name: "n", passwordHash: "h" } })),
      [409, "DUPLICATE", "A record with these values already exists."],
    );
    assert.deepEqual(
      await mapped(
        db.$executeRaw`INSERT INTO "User" (id, email, name, "passwordHash") VALUES ('u', ${user.email}, 'n', 'h')`,
      ),
      [409, "DUPLICATE", "A record with these values already exists."],
    );
    // Anything else stays a bug (500): a bad statement, a value out of range, a NOT NULL violation.
    assert.equal(await mapped(db.$executeRawUnsafe("SELEC 1")), "unmapped");
    assert.equal(
      await mapped(db.agent.create({ data: { ...agent, workspaceId, maxDailyMessages: 2 ** 31 } })),
      "unmapped",
    );
    assert.equal(
      await mapped(
        db.$executeRaw`INSERT INTO "User" (id, email, name, "passwordHash") VALUES ('u2', 'e', NULL, 'h')`,
      ),
      "unmapped",
    );
    assert.equal(dbAppError(new Error("P2025")), undefined);

    // A real deadlock: two transactions lock two rows in opposite orders; PostgreSQL aborts one.
    const [a, b] = await Promise.all([ta.seed.workspace("A"), ta.seed.workspace("B")]);
    let firstLocks = 0;
    let bothLocked!: () => void;
    const barrier = new Promise<void>((resolve) => bothLocked = resolve);
    const lockInOrder = (first: string, second: string) =>
      db.$transaction(async (tx) => {
        await tx.workspace.update({ where: { id: first }, data: { name: "x" } });
        if (++firstLocks === 2) bothLocked();
        await barrier;
        await tx.workspace.update({ where: { id: second }, data: { name: "y" } });
      });
    const outcomes = await Promise.allSettled([
      lockInOrder(a.workspaceId, b.workspaceId),
      lockInOrder(b.workspaceId, a.workspaceId),
    ]);
    const failed = outcomes.filter((o) => o.status === "rejected") as PromiseRejectedResult[];
    assert.equal(failed.length, 1);
    assert.deepEqual(await mapped(Promise.reject(failed[0].reason)), [
      409,
      "CONCURRENT_CHANGE",
      "A concurrent change got in the way; nothing was changed. Try again.",
    ]);
  } finally {
    await ta.close();
  }
});
