/**
 * Human handoff over REST: take over (HUMAN, human.transferred
 * MANUAL, assigned to the caller), a person's reply (HUMAN only, else 409; sent through the channel,
 * message.sent with sender HUMAN), release (HUMAN → OPEN) and close (CLOSED, conversation.closed
 * MANUAL); each 200 with the conversation; VIEWER 403; another workspace's id 404.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { assertProblem } from "./_helpers/problem.ts";
import {
  customerMessage,
  eventsOf,
  messagesOf,
  seedChannel,
  startGraph,
  startModelServer,
  waitUntil,
} from "./_helpers/conversations.ts";

Deno.test("take over, reply, release and close a conversation, with their events, states and 409s", async () => {
  const graph = startGraph();
  // No model key: nothing answers on its own, so only the people act here. A long window keeps
  // the pipeline out of the way.
  const t = await startTestApp({ WHATSAPP_GRAPH_URL: graph.url(""), GROUPING_MEDIUM_MS: "600000" });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const attendant = await t.seed.member(workspaceId, "AGENT");
    const viewer = await t.seed.member(workspaceId, "VIEWER");
    const agent = await t.seed.agent(owner.client);
    const channel = await seedChannel(t.app, workspaceId, agent.id);
    const m = await customerMessage(t.app, {
      workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content: "oi",
    });
    const path = `/api/conversations/${m.conversationId}`;

    // A reply before the takeover: 409, nothing stored.
    assertProblem(
      await attendant.client.post(`${path}/messages`, { content: "Olá" }),
      409,
      "CONVERSATION_NOT_HUMAN",
    );
    assertProblem(await attendant.client.post(`${path}/release`), 409, "CONVERSATION_NOT_HUMAN");
    // VIEWER may read but not attend.
    assertProblem(await viewer.client.post(`${path}/takeover`), 403, "FORBIDDEN");
    // Bad input: 400 before anything is written.
    assertProblem(
      await attendant.client.post(`${path}/messages`, { content: "   " }),
      400,
      "VALIDATION_FAILED",
    );
    assertProblem(
      await attendant.client.post(`${path}/messages`, { content: "x".repeat(4097) }),
      400,
      "VALIDATION_FAILED",
    );

    const taken = await attendant.client.post(`${path}/takeover`);
    assert.equal(taken.status, 200);
    assert.equal(taken.body.id, m.conversationId);
    assert.equal(taken.body.status, "HUMAN");
    assert.equal(taken.body.humanReason, "MANUAL");
    assert.equal(taken.body.assignedUserId, attendant.userId);
    assert.equal(taken.body.contact.name, "Maria Silva");

    const replied = await attendant.client.post(`${path}/messages`, { content: "Oi Maria, aqui é o João." });
    assert.equal(replied.status, 200);
    assert.equal(replied.body.status, "HUMAN");
    const human = await waitUntil(
      async () => (await messagesOf(t.app, m.conversationId)).filter((r) => r.senderKind === "HUMAN"),
      (rows) => rows.length === 1 && rows[0].status === "SENT",
    );
    assert.equal(human[0].content, "Oi Maria, aqui é o João.");
    assert.equal(human[0].senderUserId, attendant.userId);
    assert.equal(human[0].externalId, "wamid.TEST0");
    assert.deepEqual(JSON.parse(graph.calls[0].body).text, { body: "Oi Maria, aqui é o João." });

    const released = await attendant.client.post(`${path}/release`);
    assert.equal(released.status, 200);
    assert.equal(released.body.status, "OPEN");
    assert.equal(released.body.assignedUserId, null);

    // GraphQL: the same operation, with the conversation's nested objects.
    const gqlTaken = await attendant.client.graphql(
      `mutation($id: ID!) { takeoverConversation(id: $id) {
         id status humanReason assignedUserId contact { name } channel { type label }
         messages(first: 5) { edges { node { sender content } } } } }`,
      { id: m.conversationId },
    );
    assert.equal(gqlTaken.body.errors, undefined, JSON.stringify(gqlTaken.body.errors));
    assert.deepEqual(gqlTaken.body.data.takeoverConversation, {
      id: m.conversationId,
      status: "HUMAN",
      humanReason: "MANUAL",
      assignedUserId: attendant.userId,
      contact: { name: "Maria Silva" },
      channel: { type: "WHATSAPP", label: "WHATSAPP line" },
      messages: {
        edges: [
          { node: { sender: "CUSTOMER", content: "oi" } },
          { node: { sender: "HUMAN", content: "Oi Maria, aqui é o João." } },
        ],
      },
    });
    const gqlReleased = await attendant.client.graphql(
      "mutation($id: ID!) { releaseConversation(id: $id) { status } }",
      { id: m.conversationId },
    );
    assert.deepEqual(gqlReleased.body.data, { releaseConversation: { status: "OPEN" } });

    const closed = await owner.client.post(`${path}/close`);
    assert.equal(closed.status, 200);
    assert.equal(closed.body.status, "CLOSED");
    assert.equal(closed.body.closeReason, "MANUAL");
    assertProblem(await owner.client.post(`${path}/close`), 409, "CONVERSATION_CLOSED");
    assertProblem(await owner.client.post(`${path}/takeover`), 409, "CONVERSATION_CLOSED");
    assertProblem(await owner.client.post(`${path}/messages`, { content: "x" }), 409, "CONVERSATION_CLOSED");

    const events = (await eventsOf(t.app, m.conversationId)).filter((e) => e.type !== "message.received");
    assert.deepEqual(events.map((e) => [e.type, e.data.reason ?? e.data.sender]), [
      ["conversation.opened", undefined],
      ["human.transferred", "MANUAL"],
      ["message.sent", "HUMAN"],
      ["human.transferred", "MANUAL"],
      ["conversation.closed", "MANUAL"],
    ]);

    // Another workspace's conversation: 404 as an unknown id.
    const other = await t.seed.workspace("Other");
    assertProblem(await other.owner.client.post(`${path}/takeover`), 404, "NOT_FOUND");
    assertProblem(
      await other.owner.client.post(`/api/conversations/c${"0".repeat(24)}/takeover`),
      404,
      "NOT_FOUND",
    );
  } finally {
    await t.close();
    await graph.close();
  }
});

Deno.test("a takeover while the model is thinking: the reply is dropped, the person has the conversation", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  const model = startModelServer(async () => {
    await held;
    return { content: "resposta tardia" };
  });
  const graph = startGraph();
  const t = await startTestApp({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: "20",
  });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { messageGroupingTime: "FAST" });
    const channel = await seedChannel(t.app, workspaceId, agent.id);
    const m = await customerMessage(t.app, {
      workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content: "oi",
    });
    await model.waitForCalls(1);
    assert.equal((await owner.client.post(`/api/conversations/${m.conversationId}/takeover`)).status, 200);
    release();
    await waitUntil(
      () => t.app.deps.db.message.findUnique({ where: { id: m.messageId } }),
      (row) => row?.answeredAt !== null,
    );
    const ai = (await messagesOf(t.app, m.conversationId)).filter((r) => r.senderKind === "AI");
    assert.equal(ai.length, 0);
    assert.equal(graph.calls.length, 0);
  } finally {
    await t.close();
    await model.close();
    await graph.close();
  }
});
