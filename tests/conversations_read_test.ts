/**
 * The API channel and the conversation read API (docs/behaviour.md "Channels and
 * conversations"): a customer message posted to an API channel is stored like a WhatsApp one and answered
 * 201 with the Message view; conversations newest first with a status filter and cursor pages;
 * one conversation with its contact and channel; its messages oldest first; GraphQL's
 * `conversations(status:)`, `conversation(id)`, `Agent.conversations` and `Conversation.messages`;
 * roles and another workspace's ids.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus } from "./_helpers/problem.ts";

const MESSAGE_KEYS = [
  "content",
  "conversationId",
  "createdAt",
  "error",
  "errorMessage",
  "id",
  "inputTokens",
  "media",
  "mediaId",
  "mediaMimeType",
  "mediaSignedUrl",
  "outputTokens",
  "payload",
  "pricing",
  "resentFromId",
  "sender",
  "senderUserId",
  "status",
  "template",
  "text",
  "transcript",
  "type",
];

Deno.test("API channel messages and conversation reads", async (t) => {
  const ta = await startTestApp();
  const db = ta.app.deps.db;
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    const c = owner.client;
    const agent = await ta.seed.agent(c);
    const channel = (await c.post(`/api/agents/${agent.id}/channels`, { type: "API", label: "App" })).body;
    const wa = (await c.post(`/api/agents/${agent.id}/channels`, {
      type: "WHATSAPP",
      label: "WA",
      config: { phoneNumberId: "777000", accessToken: "a", appSecret: "b", verifyToken: "c" },
    })).body;
    const post = (body: unknown, client = c, id = channel.id) =>
      client.post(`/api/channels/${id}/messages`, body);

    const ids: Record<string, string> = {};
    await t.step(
      "POST a message: 201 with the Message view; contact, conversation, events stored",
      async () => {
        const res = await post({
          contact: { externalId: "user-1", name: "Ana" },
          type: "TEXT",
          content: "Olá",
        });
        assertStatus(res, 201);
        assert.deepEqual(Object.keys(res.body).sort(), MESSAGE_KEYS);
        assert.equal(res.body.sender, "CUSTOMER");
        assert.equal(res.body.status, "RECEIVED");
        assert.equal(res.body.type, "TEXT");
        assert.equal(res.body.content, "Olá");
        const conversation = await db.conversation.findUniqueOrThrow({
          where: { id: res.body.conversationId },
        });
        assert.equal(conversation.channelId, channel.id);
        assert.equal(conversation.status, "OPEN");
        const events = await db.domainEvent.findMany({
          where: { conversationId: conversation.id },
          orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        });
        assert.deepEqual(events.map((e) => e.type), ["conversation.opened", "message.received"]);
        assert.deepEqual((events[1].payload as { data: unknown }).data, {
          message: { id: res.body.id, type: "TEXT", content: "Olá", createdAt: res.body.createdAt },
        });
        ids.first = conversation.id;
        const again = await post({ contact: { externalId: "user-1" }, type: "TEXT", content: "Tudo bem?" });
        assertStatus(again, 201);
        assert.equal(again.body.conversationId, ids.first, "the OPEN conversation continues");
        assert.equal((await db.contact.findFirstOrThrow({ where: { externalId: "user-1" } })).name, "Ana");
      },
    );

    await t.step("bad input and wrong channels: 400/404, nothing stored", async () => {
      const before = await db.message.count();
      assertProblem(
        await post({ contact: { externalId: "u" }, type: "AUDIO", content: "x" }),
        400,
        "VALIDATION_FAILED",
        [
          "type",
        ],
      );
      assertProblem(await post({ contact: {}, type: "TEXT", content: "x" }), 400, "VALIDATION_FAILED", [
        "contact.externalId",
      ]);
      assertProblem(
        await post({ contact: { externalId: "u" }, type: "TEXT", content: "" }),
        400,
        "VALIDATION_FAILED",
        [
          "content",
        ],
      );
      assertProblem(
        await post({ contact: { externalId: "u" }, type: "TEXT", content: "x".repeat(10_001) }),
        400,
        "VALIDATION_FAILED",
        ["content"],
      );
      const ok = { contact: { externalId: "u" }, type: "TEXT", content: "x" };
      assertProblem(await post(ok, c, wa.id), 404, "NOT_FOUND");
      assertProblem(await post(ok, c, "no-such-channel"), 404, "NOT_FOUND");
      const other = await ta.seed.workspace("Other");
      assertProblem(await post(ok, other.owner.client), 404, "NOT_FOUND");
      assert.equal(await db.message.count(), before);
    });

    await t.step("roles: MANAGER posts; AGENT and VIEWER get 403", async () => {
      const manager = await ta.seed.member(workspaceId, "MANAGER");
      assertStatus(
        await post({ contact: { externalId: "user-2" }, type: "TEXT", content: "m" }, manager.client),
        201,
      );
      for (const role of ["AGENT", "VIEWER"] as const) {
        const m = await ta.seed.member(workspaceId, role);
        assertProblem(
          await post({ contact: { externalId: "u" }, type: "TEXT", content: "x" }, m.client),
          403,
          "FORBIDDEN",
        );
      }
    });

    await t.step("conversations: newest first, status filter, cursor pages", async () => {
      // Contacts 3..6 each open a conversation; user-2's is then CLOSED, user-4's HUMAN.
      for (const n of [3, 4, 5, 6]) {
        assertStatus(
          await post({ contact: { externalId: `user-${n}` }, type: "TEXT", content: `hi ${n}` }),
          201,
        );
      }
      const conv = async (externalId: string) =>
        (await db.conversation.findFirstOrThrow({ where: { contact: { externalId } } })).id;
      await db.conversation.update({ where: { id: await conv("user-2") }, data: { status: "CLOSED" } });
      await db.conversation.update({ where: { id: await conv("user-4") }, data: { status: "HUMAN" } });
      const base = `/api/agents/${agent.id}/conversations`;
      const all = await c.get(base);
      assertStatus(all, 200);
      const names = (res: { body: { data: Array<{ contact: { externalId: string } }> } }) =>
        res.body.data.map((r) => r.contact.externalId);
      assert.deepEqual(names(all), ["user-6", "user-5", "user-4", "user-3", "user-2", "user-1"]);
      assert.equal(all.body.nextCursor, null);
      assert.deepEqual(all.body.data[0].channel.id, channel.id);
      assert.deepEqual(names(await c.get(`${base}?status=OPEN`)), ["user-6", "user-5", "user-3", "user-1"]);
      assert.deepEqual(names(await c.get(`${base}?status=HUMAN`)), ["user-4"]);
      assert.deepEqual(names(await c.get(`${base}?status=CLOSED`)), ["user-2"]);
      const page1 = await c.get(`${base}?status=OPEN&limit=3`);
      assert.deepEqual(names(page1), ["user-6", "user-5", "user-3"]);
      assert.equal(typeof page1.body.nextCursor, "string");
      const page2 = await c.get(`${base}?status=OPEN&limit=3&cursor=${page1.body.nextCursor}`);
      assert.deepEqual(names(page2), ["user-1"]);
      assert.equal(page2.body.nextCursor, null);
      assertProblem(await c.get(`${base}?status=LOST`), 400, "VALIDATION_FAILED", ["status"]);
      const viewer = await ta.seed.member(workspaceId, "VIEWER");
      assert.deepEqual(names(await viewer.client.get(`${base}?status=HUMAN`)), ["user-4"]);
    });

    await t.step("one conversation with contact and channel; its messages oldest first, paged", async () => {
      const res = await c.get(`/api/conversations/${ids.first}`);
      assertStatus(res, 200);
      assert.equal(res.body.id, ids.first);
      assert.equal(res.body.agentId, agent.id);
      assert.equal(res.body.status, "OPEN");
      assert.equal(res.body.contact.externalId, "user-1");
      // contactId is the address on the channel (what an intent or a receiver can reach), not a row id.
      assert.equal(res.body.contactId, "user-1");
      assert.notEqual(res.body.contact.id, "user-1");
      const gql = await c.graphql(
        `{ conversation(id: "${ids.first}") { contactId contact { id externalId } } }`,
      );
      assert.deepEqual(gql.body.data.conversation, {
        contactId: "user-1",
        contact: { id: res.body.contact.id, externalId: "user-1" },
      });
      assert.equal(res.body.contactName, "Ana");
      assert.equal(res.body.channel.id, channel.id);
      assert.equal(
        res.body.channel.inboundUrl,
        `http://switchboard.test/api/channels/${channel.id}/messages`,
      );
      assert.equal(typeof res.body.lastMessageAt, "string");
      const messages = await c.get(`/api/conversations/${ids.first}/messages?limit=1`);
      assertStatus(messages, 200);
      assert.deepEqual(messages.body.data.map((m: { content: string }) => m.content), ["Olá"]);
      const rest = await c.get(`/api/conversations/${ids.first}/messages?cursor=${messages.body.nextCursor}`);
      assert.deepEqual(rest.body.data.map((m: { content: string }) => m.content), ["Tudo bem?"]);
      assert.deepEqual(Object.keys(rest.body.data[0]).sort(), MESSAGE_KEYS);
      const other = await ta.seed.workspace("Elsewhere");
      assertProblem(await other.owner.client.get(`/api/conversations/${ids.first}`), 404, "NOT_FOUND");
      assertProblem(
        await other.owner.client.get(`/api/conversations/${ids.first}/messages`),
        404,
        "NOT_FOUND",
      );
      assertProblem(await other.owner.client.get(`/api/agents/${agent.id}/conversations`), 404, "NOT_FOUND");
    });

    await t.step("GraphQL: conversations(status:), conversation(id), nested connections", async () => {
      const res = await c.graphql(
        `query($a: ID!, $id: ID!) {
          conversations(agentId: $a, status: HUMAN) { edges { node { status contact { externalId } } } }
          conversation(id: $id) { id contact { name } channel { type } messages(first: 5) { edges { node { sender content } } } }
          agent(id: $a) { conversations(first: 2) { edges { node { contact { externalId } } } } }
        }`,
        { a: agent.id, id: ids.first },
      );
      assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
      assert.deepEqual(res.body.data.conversations.edges, [{
        node: { status: "HUMAN", contact: { externalId: "user-4" } },
      }]);
      assert.deepEqual(res.body.data.conversation.contact, { name: "Ana" });
      assert.deepEqual(res.body.data.conversation.channel, { type: "API" });
      assert.deepEqual(res.body.data.conversation.messages.edges.map((e: { node: unknown }) => e.node), [
        { sender: "CUSTOMER", content: "Olá" },
        { sender: "CUSTOMER", content: "Tudo bem?" },
      ]);
      assert.deepEqual(
        res.body.data.agent.conversations.edges.map((e: { node: { contact: { externalId: string } } }) =>
          e.node.contact.externalId
        ),
        ["user-6", "user-5"],
      );
      const posted = await c.graphql(
        `mutation($ch: ID!) { postChannelMessage(channelId: $ch, input: { contact: { externalId: "gql-1" }, type: "TEXT", content: "via gql" }) { sender content status } }`,
        { ch: channel.id },
      );
      assert.equal(posted.body.errors, undefined, JSON.stringify(posted.body.errors));
      assert.deepEqual(posted.body.data.postChannelMessage, {
        sender: "CUSTOMER",
        content: "via gql",
        status: "RECEIVED",
      });
    });
  } finally {
    await ta.close();
  }
});
