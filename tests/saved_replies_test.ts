/**
 * Saved replies (docs/behaviour.md "Saved replies") over REST and GraphQL: created, listed, read,
 * changed and deleted; a shortcut is unique in its workspace, case and a leading `/` aside (409
 * DUPLICATE_SHORTCUT, over both transports, also for two creations at once); bad input is 400 with
 * nothing changed; OWNER and MANAGER (and API tokens) write, AGENT and VIEWER read only (403 on
 * writes, nothing changed); another workspace's are 404. And a contact's conversations: every one
 * of the contact on every channel of the workspace, newest first, over both transports, paged.
 */
import assert from "node:assert/strict";
import { Client, startTestApp } from "./_helpers/app.ts";
import { assertProblem, snapshot } from "./_helpers/problem.ts";
import { gql, gqlOk, gqlRefused } from "./_helpers/roles.ts";

Deno.test("saved replies: CRUD, unique shortcuts, roles, bad input, workspaces", async (t) => {
  const ta = await startTestApp({}, { workers: false });
  const { app, seed } = ta;
  try {
    const { workspaceId, owner } = await seed.workspace();
    const o = owner.client;
    const manager = await seed.member(workspaceId, "MANAGER");
    const agent = await seed.member(workspaceId, "AGENT");
    const viewer = await seed.member(workspaceId, "VIEWER");
    const token = new Client(
      app,
      (await o.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "t" })).body.token,
      workspaceId,
    );
    let thanks = "";

    await t.step("created over REST and GraphQL, the shortcut lowercased and its / dropped", async () => {
      const created = await o.post("/api/saved-replies", { shortcut: " /Thanks ", content: " Obrigado! " });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(
        [created.body.shortcut, created.body.content, typeof created.body.id],
        ["thanks", "Obrigado!", "string"],
      );
      thanks = created.body.id;
      const byGql = gqlOk(
        await gql(
          manager.client,
          `mutation { createSavedReply(input: { shortcut: "pix_key-2", content: "A chave é 123" }) { id shortcut content } }`,
        ),
      );
      assert.equal(byGql.createSavedReply.shortcut, "pix_key-2");
      const byToken = await token.post("/api/saved-replies", { shortcut: "hours", content: "9h às 18h" });
      assert.equal(byToken.status, 201);
    });

    await t.step("every member and the token reads them, oldest first, REST and GraphQL alike", async () => {
      for (const c of [o, manager.client, agent.client, viewer.client, token]) {
        const rest = await c.get("/api/saved-replies");
        assert.equal(rest.status, 200);
        assert.deepEqual(rest.body.data.map((r: { shortcut: string }) => r.shortcut), [
          "thanks",
          "pix_key-2",
          "hours",
        ]);
        assert.equal(rest.body.nextCursor, null);
        const d = gqlOk(await gql(c, "{ savedReplies { edges { node { id shortcut content } } } }"));
        assert.deepEqual(
          d.savedReplies.edges.map((e: { node: unknown }) => e.node),
          rest.body.data.map((r: { id: string; shortcut: string; content: string }) => ({
            id: r.id,
            shortcut: r.shortcut,
            content: r.content,
          })),
        );
        const one = await c.get(`/api/saved-replies/${thanks}`);
        assert.equal(one.status, 200);
        assert.equal(one.body.content, "Obrigado!");
      }
      const page = await o.get("/api/saved-replies?limit=2");
      assert.equal(page.body.data.length, 2);
      const rest = await o.get(`/api/saved-replies?limit=2&cursor=${page.body.nextCursor}`);
      assert.deepEqual(rest.body.data.map((r: { shortcut: string }) => r.shortcut), ["hours"]);
    });

    await t.step("a taken shortcut is 409 DUPLICATE_SHORTCUT, nothing changed", async () => {
      const before = await snapshot(app);
      const rest = await o.post("/api/saved-replies", { shortcut: "/THANKS", content: "Valeu" });
      assertProblem(rest, 409, "DUPLICATE_SHORTCUT");
      const renamed = await o.patch(`/api/saved-replies/${thanks}`, { shortcut: "hours" });
      assertProblem(renamed, 409, "DUPLICATE_SHORTCUT");
      const byGql = await gql(
        o,
        `mutation { createSavedReply(input: { shortcut: "hours", content: "x" }) { id } }`,
      );
      gqlRefused(byGql, "DUPLICATE_SHORTCUT", "createSavedReply");
      assert.equal(await snapshot(app), before);
      // Two at once: one is stored, the other refused.
      const both = await Promise.all([
        o.post("/api/saved-replies", { shortcut: "race", content: "a" }),
        manager.client.post("/api/saved-replies", { shortcut: "race", content: "b" }),
      ]);
      assert.deepEqual(both.map((r) => r.status).sort(), [201, 409]);
      assert.equal(both.find((r) => r.status === 409)!.body.code, "DUPLICATE_SHORTCUT");
      assert.equal(await app.deps.db.savedReply.count({ where: { workspaceId, shortcut: "race" } }), 1);
    });

    await t.step("bad input is 400 naming the field, nothing changed", async () => {
      const before = await snapshot(app);
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ shortcut: "", content: "x" }, "shortcut"],
        [{ shortcut: "a".repeat(33), content: "x" }, "shortcut"],
        [{ shortcut: "oi tudo", content: "x" }, "shortcut"],
        [{ shortcut: "olá", content: "x" }, "shortcut"],
        [{ shortcut: "ok", content: "   " }, "content"],
        [{ shortcut: "ok", content: "x".repeat(4097) }, "content"],
        [{ shortcut: "ok" }, "content"],
        [{ shortcut: "ok", content: "x", extra: 1 }, "extra"],
      ];
      for (const [body, path] of bad) {
        const res = await o.post("/api/saved-replies", body);
        assertProblem(res, 400, "VALIDATION_FAILED");
        assert.ok(res.body.errors.some((e: { path: string }) => e.path === path), JSON.stringify(res.body));
      }
      const patch = await o.patch(`/api/saved-replies/${thanks}`, { content: "" });
      assertProblem(patch, 400, "VALIDATION_FAILED");
      const byGql = await gql(
        o,
        `mutation { createSavedReply(input: { shortcut: "a b", content: "x" }) { id } }`,
      );
      gqlRefused(byGql, "VALIDATION_FAILED", "createSavedReply");
      assert.equal(await snapshot(app), before);
      // The longest shortcut and content are taken.
      const longest = await o.post("/api/saved-replies", {
        shortcut: "a".repeat(32),
        content: "x".repeat(4096),
      });
      assert.equal(longest.status, 201);
    });

    await t.step("AGENT and VIEWER get 403 on every write, whatever they send; nothing changed", async () => {
      const before = await snapshot(app);
      for (const c of [agent.client, viewer.client]) {
        assertProblem(
          await c.post("/api/saved-replies", { shortcut: "mine", content: "x" }),
          403,
          "FORBIDDEN",
        );
        assertProblem(await c.post("/api/saved-replies", { shortcut: "" }), 403, "FORBIDDEN");
        assertProblem(await c.patch(`/api/saved-replies/${thanks}`, { content: "x" }), 403, "FORBIDDEN");
        assertProblem(await c.delete(`/api/saved-replies/${thanks}`), 403, "FORBIDDEN");
        const byGql = await gql(c, `mutation($id: ID!) { deleteSavedReply(id: $id) }`, { id: thanks });
        gqlRefused(byGql, "FORBIDDEN", "deleteSavedReply");
      }
      assert.equal(await snapshot(app), before);
    });

    await t.step("changed and deleted by OWNER and MANAGER, over REST and GraphQL", async () => {
      const patched = await manager.client.patch(`/api/saved-replies/${thanks}`, {
        content: "Muito obrigado!",
      });
      assert.equal(patched.status, 200);
      assert.deepEqual([patched.body.shortcut, patched.body.content], ["thanks", "Muito obrigado!"]);
      const renamed = gqlOk(
        await gql(
          o,
          `mutation($id: ID!) { updateSavedReply(id: $id, input: { shortcut: "Obrigado" }) { shortcut content } }`,
          {
            id: thanks,
          },
        ),
      );
      assert.deepEqual(renamed.updateSavedReply, { shortcut: "obrigado", content: "Muito obrigado!" });
      assert.equal((await o.delete(`/api/saved-replies/${thanks}`)).status, 204);
      assertProblem(await o.get(`/api/saved-replies/${thanks}`), 404, "NOT_FOUND");
      assertProblem(await o.delete(`/api/saved-replies/${thanks}`), 404, "NOT_FOUND");
      // Its shortcut is free again.
      assert.equal((await o.post("/api/saved-replies", { shortcut: "obrigado", content: "x" })).status, 201);
    });

    await t.step("another workspace's are 404 and unlisted; the same shortcut is free there", async () => {
      const other = await seed.workspace("Other");
      const mine = (await o.get("/api/saved-replies")).body.data[0];
      const before = await snapshot(app);
      assertProblem(await other.owner.client.get(`/api/saved-replies/${mine.id}`), 404, "NOT_FOUND");
      assertProblem(
        await other.owner.client.patch(`/api/saved-replies/${mine.id}`, { content: "x" }),
        404,
        "NOT_FOUND",
      );
      assertProblem(await other.owner.client.delete(`/api/saved-replies/${mine.id}`), 404, "NOT_FOUND");
      assert.equal(await snapshot(app), before);
      assert.deepEqual((await other.owner.client.get("/api/saved-replies")).body.data, []);
      const same = await other.owner.client.post("/api/saved-replies", {
        shortcut: mine.shortcut,
        content: "x",
      });
      assert.equal(same.status, 201);
    });
  } finally {
    await ta.close();
  }
});

Deno.test("a contact's conversations: every channel of the workspace, newest first, paged", async () => {
  const ta = await startTestApp({}, { workers: false });
  const db = ta.app.deps.db;
  try {
    const { owner } = await ta.seed.workspace();
    const o = owner.client;
    const ana = await ta.seed.agent(o);
    const bea = await ta.seed.agent(o, { name: "Bea" });
    const channels = [];
    for (const a of [ana, bea]) {
      channels.push((await o.post(`/api/agents/${a.id}/channels`, { type: "API", label: "App" })).body.id);
    }
    const write = async (channel: string, externalId: string) =>
      (await o.post(`/api/channels/${channel}/messages`, {
        contact: { externalId },
        type: "TEXT",
        content: "oi",
      }))
        .body.conversationId as string;
    // Maria: one conversation on Ana's channel, closed, a second there, and one on Bea's; João another.
    const first = await write(channels[0], "maria");
    assert.equal((await o.post(`/api/conversations/${first}/close`)).status, 200);
    const second = await write(channels[0], "maria");
    const third = await write(channels[1], "maria");
    const joao = await write(channels[0], "joao");
    const { contactId } = await db.conversation.findUniqueOrThrow({ where: { id: second } });
    const newestFirst = [third, second, first];

    const rest = await o.get(`/api/contacts/${contactId}/conversations`);
    assert.equal(rest.status, 200);
    assert.deepEqual(rest.body.data.map((c: { id: string }) => c.id), newestFirst);
    assert.deepEqual(rest.body.data.map((c: { status: string }) => c.status), ["OPEN", "OPEN", "CLOSED"]);
    assert.ok(!rest.body.data.some((c: { id: string }) => c.id === joao));
    const page = await o.get(`/api/contacts/${contactId}/conversations?limit=2`);
    assert.deepEqual(page.body.data.map((c: { id: string }) => c.id), newestFirst.slice(0, 2));
    const next = await o.get(
      `/api/contacts/${contactId}/conversations?limit=2&cursor=${page.body.nextCursor}`,
    );
    assert.deepEqual(next.body.data.map((c: { id: string }) => c.id), [first]);

    // GraphQL: from the conversation's contact (what the console reads), and the root field.
    const d = gqlOk(
      await gql(
        o,
        `query($id: ID!, $c: ID!) {
          conversation(id: $id) { contact { id conversations(first: 10) { edges { node { id status agentId } } } } }
          contactConversations(contactId: $c, first: 2) { edges { node { id } } pageInfo { hasNextPage } }
        }`,
        { id: second, c: contactId },
      ),
    );
    assert.equal(d.conversation.contact.id, contactId);
    assert.deepEqual(
      d.conversation.contact.conversations.edges.map((e: { node: { id: string; agentId: string } }) => [
        e.node.id,
        e.node.agentId,
      ]),
      [[third, bea.id], [second, ana.id], [first, ana.id]],
    );
    assert.deepEqual(
      d.contactConversations.edges.map((e: { node: { id: string } }) => e.node.id),
      newestFirst.slice(0, 2),
    );
    assert.equal(d.contactConversations.pageInfo.hasNextPage, true);

    // Another workspace's contact: 404 as an unknown one.
    const other = await ta.seed.workspace("Other");
    assertProblem(await other.owner.client.get(`/api/contacts/${contactId}/conversations`), 404, "NOT_FOUND");
    const foreign = await gql(
      other.owner.client,
      "query($c: ID!) { contactConversations(contactId: $c) { edges { node { id } } } }",
      { c: contactId },
    );
    gqlRefused(foreign, "NOT_FOUND", "contactConversations");
  } finally {
    await ta.close();
  }
});
