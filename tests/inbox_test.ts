/**
 * The workspace's inbox over REST and GraphQL: assignment and its roles, takeover and release,
 * members removed or made VIEWER; unread counts per member; the list of every agent's
 * conversations with its filters and keyset pages; search by contact name, address and message
 * text; the live ASSIGNED event; nothing of another workspace, ever.
 */
import assert from "node:assert/strict";
import { type Client, type SeededUser, startTestApp, type TestApp } from "./_helpers/app.ts";
import { assertProblem } from "./_helpers/problem.ts";
import { customerMessage, seedChannel } from "./_helpers/conversations.ts";
import { subscribe, subscribed, wsClient } from "./_helpers/live.ts";

/** An agent with a channel and a conversation of a customer (one message), through the inbound path. */
async function conversationOf(
  t: TestApp,
  workspaceId: string,
  owner: SeededUser,
  contact = { externalId: "5511999990000", name: "Maria Silva" },
  content = "oi",
) {
  const agent = await t.seed.agent(owner.client);
  const channel = await seedChannel(t.app, workspaceId, agent.id, "API");
  const m = await customerMessage(t.app, {
    workspaceId,
    agentId: agent.id,
    channelId: channel.id,
    contact,
    content,
  });
  return { agentId: agent.id as string, channelId: channel.id, conversationId: m.conversationId };
}

const INBOX = `query($first: Int, $after: String, $agentId: ID, $status: ConversationStatus,
  $assignee: InboxAssignee, $search: String) {
  inbox(first: $first, after: $after, agentId: $agentId, status: $status, assignee: $assignee, search: $search) {
    edges { node { id unread assignee { id } } } pageInfo { hasNextPage endCursor } } }`;

/** Every page of the REST list for `query`: the ids in order. */
async function restAll(client: Client, query: string, limit = 50): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: { data: Array<{ id: string }>; nextCursor: string | null } } =
      await client
        .get(`/api/conversations?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ""}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    ids.push(...res.body.data.map((c) => c.id));
    cursor = res.body.nextCursor;
  } while (cursor);
  return ids;
}

/** Every page of GraphQL's inbox for `vars`: the ids in order. */
async function graphqlAll(client: Client, vars: Record<string, unknown>, first = 50): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (;;) {
    const res = await client.graphql(INBOX, { ...vars, first, after });
    assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
    const page = res.body.data.inbox;
    ids.push(...page.edges.map((e: { node: { id: string } }) => e.node.id));
    if (!page.pageInfo.hasNextPage) return ids;
    after = page.pageInfo.endCursor;
  }
}

/**
 * `n` conversations of the agent written set-based, each with a contact "Client <i>" (+5521000<i>)
 * and two messages; the last message of conversation i is i minutes after `base`.
 */
async function manyConversations(
  t: TestApp,
  o: { workspaceId: string; agentId: string; channelId: string; n: number; tag: string; base: Date },
) {
  await t.app.deps.db.$executeRaw`
    WITH contacts AS (
      INSERT INTO "Contact" (id, "workspaceId", "externalId", name)
      SELECT ${o.tag} || '-ct-' || i, ${o.workspaceId}, '+5521000' || lpad(i::text, 4, '0') || ${o.tag},
             'Client ' || i || ' ' || ${o.tag}
        FROM generate_series(1, ${o.n}::int) i RETURNING id),
    conversations AS (
      INSERT INTO "Conversation" (id, "workspaceId", "agentId", "channelId", "contactId", "lastMessageAt",
                                  "createdAt", "updatedAt")
      SELECT ${o.tag} || '-cv-' || i, ${o.workspaceId}, ${o.agentId}, ${o.channelId}, ${o.tag} || '-ct-' || i,
             ${o.base}::timestamptz + i * interval '1 minute', ${o.base}::timestamptz, now()
        FROM generate_series(1, ${o.n}::int) i RETURNING id)
    INSERT INTO "Message" (id, "conversationId", "channelId", direction, "senderKind", content, status, "createdAt")
    SELECT ${o.tag} || '-m-' || i || '-' || k, ${o.tag} || '-cv-' || i, ${o.channelId},
           'INBOUND', 'CUSTOMER', 'message ' || k || ' of ' || i, 'RECEIVED',
           ${o.base}::timestamptz + i * interval '1 minute' - (2 - k) * interval '1 second'
      FROM generate_series(1, ${o.n}::int) i, generate_series(1, 2) k
     WHERE (SELECT count(*) FROM contacts) + (SELECT count(*) FROM conversations) > 0`;
}

Deno.test("assignment: who may assign whom, takeover, release, a removed or VIEWER member holds nothing", async () => {
  const t = await startTestApp({ GROUPING_MEDIUM_MS: "600000" }, { workers: false });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const manager = await t.seed.member(workspaceId, "MANAGER");
    const agentA = await t.seed.member(workspaceId, "AGENT");
    const agentB = await t.seed.member(workspaceId, "AGENT");
    const viewer = await t.seed.member(workspaceId, "VIEWER");
    const { conversationId } = await conversationOf(t, workspaceId, owner);
    const path = `/api/conversations/${conversationId}/assign`;
    const other = await t.seed.workspace("Other");
    const outsider = await conversationOf(t, other.workspaceId, other.owner);

    // OWNER and MANAGER: any member who may attend; the answer shows the assignee.
    const byOwner = await owner.client.post(path, { userId: agentA.userId });
    assert.equal(byOwner.status, 200, JSON.stringify(byOwner.body));
    assert.deepEqual(byOwner.body.assignee, { id: agentA.userId, name: "User 3", email: agentA.email });
    assert.equal(byOwner.body.assignedUserId, agentA.userId);
    assert.equal(byOwner.body.unread, 1);
    assert.equal(
      (await manager.client.post(path, { userId: agentB.userId })).body.assignee.id,
      agentB.userId,
    );
    assert.equal((await manager.client.post(path, { userId: null })).body.assignee, null);

    // AGENT: only themselves, and lets go only of what they hold.
    assertProblem(await agentA.client.post(path, { userId: agentB.userId }), 403, "FORBIDDEN");
    assert.equal((await agentA.client.post(path, { userId: agentA.userId })).body.assignee.id, agentA.userId);
    assertProblem(await agentB.client.post(path, { userId: null }), 403, "FORBIDDEN");
    assert.equal((await agentB.client.post(path, { userId: agentB.userId })).body.assignee.id, agentB.userId);
    assert.equal((await agentB.client.post(path, { userId: null })).body.assignee, null);
    // VIEWER: not at all.
    assertProblem(await viewer.client.post(path, { userId: viewer.userId }), 403, "FORBIDDEN");

    // Whom: a member of this workspace who may attend.
    assertProblem(await owner.client.post(path, { userId: other.owner.userId }), 404, "NOT_FOUND");
    assertProblem(await owner.client.post(path, { userId: "nobody" }), 404, "NOT_FOUND");
    assertProblem(await owner.client.post(path, { userId: viewer.userId }), 400, "VALIDATION_FAILED");
    assertProblem(await owner.client.post(path, {}), 400, "VALIDATION_FAILED");
    // Another workspace's conversation is unknown here.
    assertProblem(
      await owner.client.post(`/api/conversations/${outsider.conversationId}/assign`, {
        userId: owner.userId,
      }),
      404,
      "NOT_FOUND",
    );

    // GraphQL: the same rules and answer.
    const gql = await agentA.client.graphql(
      `mutation($id: ID!, $u: String) { assignConversation(id: $id, input: { userId: $u }) {
         id assignee { id name } unread } }`,
      { id: conversationId, u: agentA.userId },
    );
    assert.deepEqual(gql.body, {
      data: {
        assignConversation: {
          id: conversationId,
          assignee: { id: agentA.userId, name: "User 3" },
          unread: 1,
        },
      },
    });
    const refused = await agentA.client.graphql(
      `mutation($id: ID!, $u: String) { assignConversation(id: $id, input: { userId: $u }) { id } }`,
      { id: conversationId, u: agentB.userId },
    );
    assert.equal(refused.body.errors[0].extensions.code, "FORBIDDEN");

    // Takeover assigns the taker (from HUMAN too); release gives it to nobody.
    const taken = await agentB.client.post(`/api/conversations/${conversationId}/takeover`);
    assert.equal(taken.body.status, "HUMAN");
    assert.equal(taken.body.assignee.id, agentB.userId);
    assert.equal(
      (await agentA.client.post(`/api/conversations/${conversationId}/takeover`)).body.assignee.id,
      agentA.userId,
    );
    const released = await agentA.client.post(`/api/conversations/${conversationId}/release`);
    assert.equal(released.body.status, "OPEN");
    assert.equal(released.body.assignee, null);

    // A member removed, or made VIEWER, holds nothing any more.
    const second = await conversationOf(t, workspaceId, owner, { externalId: "5511888880000", name: "João" });
    await owner.client.post(path, { userId: agentA.userId });
    await owner.client.post(`/api/conversations/${second.conversationId}/assign`, { userId: agentB.userId });
    assert.equal(
      (await owner.client.delete(`/api/workspaces/${workspaceId}/members/${agentA.userId}`)).status,
      204,
    );
    assert.equal((await owner.client.get(`/api/conversations/${conversationId}`)).body.assignee, null);
    const demoted = await owner.client.patch(`/api/workspaces/${workspaceId}/members/${agentB.userId}`, {
      role: "VIEWER",
    });
    assert.equal(demoted.status, 200);
    assert.equal((await owner.client.get(`/api/conversations/${second.conversationId}`)).body.assignee, null);

    // A closed conversation is nobody's to take.
    assert.equal((await owner.client.post(`/api/conversations/${conversationId}/close`)).status, 200);
    assertProblem(await owner.client.post(path, { userId: owner.userId }), 409, "CONVERSATION_CLOSED");
  } finally {
    await t.close();
  }
});

Deno.test("unread: each member's count of customer messages since they last read, in every read of a conversation", async () => {
  const t = await startTestApp({ GROUPING_MEDIUM_MS: "600000" }, { workers: false });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.member(workspaceId, "AGENT");
    const c = await conversationOf(t, workspaceId, owner);
    const more = (content: string) =>
      customerMessage(t.app, { workspaceId, agentId: c.agentId, channelId: c.channelId, content });
    await more("tudo bem?");
    await more("alô");
    // An AI message is not unread.
    await t.app.deps.db.message.create({
      data: {
        conversationId: c.conversationId,
        channelId: c.channelId,
        direction: "OUTBOUND",
        senderKind: "AI",
        content: "Olá!",
        status: "SENT",
      },
    });
    const counts = async (who: SeededUser) => {
      const rest = await who.client.get(`/api/conversations?agentId=${c.agentId}`);
      const one = await who.client.get(`/api/conversations/${c.conversationId}`);
      const perAgent = await who.client.get(`/api/agents/${c.agentId}/conversations`);
      const gql = await who.client.graphql(
        `query($id: ID!, $agentId: ID!) { conversation(id: $id) { unread }
           conversations(agentId: $agentId) { edges { node { unread } } }
           inbox(agentId: $agentId) { edges { node { unread } } } }`,
        { id: c.conversationId, agentId: c.agentId },
      );
      const all = [
        rest.body.data[0].unread,
        one.body.unread,
        perAgent.body.data[0].unread,
        gql.body.data.conversation.unread,
        gql.body.data.conversations.edges[0].node.unread,
        gql.body.data.inbox.edges[0].node.unread,
      ];
      assert.equal(new Set(all).size, 1, JSON.stringify(all));
      return all[0];
    };
    assert.equal(await counts(owner), 3);
    assert.equal(await counts(agent), 3);

    assert.equal((await owner.client.post(`/api/conversations/${c.conversationId}/read`)).status, 204);
    assert.equal(await counts(owner), 0);
    assert.equal(await counts(agent), 3);
    await more("ainda aí?");
    assert.equal(await counts(owner), 1);
    assert.equal(await counts(agent), 4);
    const marked = await agent.client.graphql("mutation($id: ID!) { markConversationRead(id: $id) }", {
      id: c.conversationId,
    });
    assert.deepEqual(marked.body, { data: { markConversationRead: c.conversationId } });
    assert.equal(await counts(agent), 0);
    assert.equal(await counts(owner), 1);

    // A read inside a mutation's document (the other executor) counts the same.
    const mixed = await owner.client.graphql(
      `mutation($id: ID!) { assignConversation(id: $id, input: { userId: null }) { unread } }`,
      { id: c.conversationId },
    );
    assert.equal(mixed.body.data.assignConversation.unread, 1);

    // What waits for a member (the console's title count): HUMAN ones nobody holds, and their own.
    const waiting = async (who: SeededUser) => {
      const rest = await who.client.get("/api/inbox/waiting");
      const gql = await who.client.graphql("{ workspace { waiting { unread conversations } } }");
      assert.deepEqual(gql.body.data.workspace.waiting, rest.body);
      return rest.body;
    };
    assert.deepEqual(
      await waiting(owner),
      { unread: 0, conversations: 0 },
      "an OPEN one nobody holds waits for no one",
    );
    await t.app.deps.db.conversation.update({ where: { id: c.conversationId }, data: { status: "HUMAN" } });
    assert.deepEqual(await waiting(owner), { unread: 1, conversations: 1 });
    assert.deepEqual(await waiting(agent), { unread: 0, conversations: 0 });
    const given = await owner.client.post(`/api/conversations/${c.conversationId}/assign`, {
      userId: agent.userId,
    });
    assert.equal(given.status, 200);
    await more("oi?");
    assert.deepEqual(await waiting(owner), { unread: 0, conversations: 0 }, "someone else holds it");
    assert.deepEqual(await waiting(agent), { unread: 1, conversations: 1 });

    // An API token is no member: no count, no marker.
    const token =
      (await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "bot" })).body.token;
    const bot = new (owner.client.constructor as typeof Client)(t.app, token, workspaceId);
    assert.equal((await bot.get(`/api/conversations/${c.conversationId}`)).body.unread, null);
    assert.equal((await bot.get(`/api/conversations`)).body.data[0].unread, null);
    assertProblem(await bot.post(`/api/conversations/${c.conversationId}/read`), 403, "FORBIDDEN");
    assert.deepEqual((await bot.get("/api/inbox/waiting")).body, { unread: null, conversations: null });
    // Another workspace's conversation cannot be marked.
    const other = await t.seed.workspace("Other");
    assertProblem(
      await other.owner.client.post(`/api/conversations/${c.conversationId}/read`),
      404,
      "NOT_FOUND",
    );
    assert.deepEqual((await other.owner.client.get("/api/inbox/waiting")).body, {
      unread: 0,
      conversations: 0,
    });
  } finally {
    await t.close();
  }
});

Deno.test("the list: every agent's conversations newest first, filtered, paged past 50, and searched", async () => {
  const t = await startTestApp({ GROUPING_MEDIUM_MS: "600000" }, { workers: false });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.member(workspaceId, "AGENT");
    const a1 = await t.seed.agent(owner.client, { name: "Ana" });
    const a2 = await t.seed.agent(owner.client, { name: "Bia" });
    const ch1 = await seedChannel(t.app, workspaceId, a1.id, "API");
    const ch2 = await seedChannel(t.app, workspaceId, a2.id, "API");
    const base = new Date("2026-01-01T00:00:00Z");
    await manyConversations(t, { workspaceId, agentId: a1.id, channelId: ch1.id, n: 70, tag: "a", base });
    await manyConversations(t, {
      workspaceId,
      agentId: a2.id,
      channelId: ch2.id,
      n: 60,
      tag: "b",
      base: new Date(base.getTime() + 30_000),
    });
    // Another workspace's conversations share names, addresses and words: never shown here.
    const other = await t.seed.workspace("Other");
    const oa = await t.seed.agent(other.owner.client);
    const och = await seedChannel(t.app, other.workspaceId, oa.id, "API");
    await manyConversations(t, {
      workspaceId: other.workspaceId,
      agentId: oa.id,
      channelId: och.id,
      n: 20,
      tag: "z",
      base,
    });
    const expected = await t.app.deps.db.conversation.findMany({
      where: { workspaceId },
      orderBy: [{ lastMessageAt: "desc" }, { id: "desc" }],
      select: { id: true, agentId: true },
    });
    assert.equal(expected.length, 130);

    // Every conversation once, newest activity first, in pages of 50 (REST) and 50 / 7 (GraphQL).
    assert.deepEqual(await restAll(owner.client, ""), expected.map((c) => c.id));
    assert.deepEqual(await graphqlAll(owner.client, {}), expected.map((c) => c.id));
    assert.deepEqual(await restAll(owner.client, "", 7), expected.map((c) => c.id));
    const one = await owner.client.get("/api/conversations?limit=1");
    assert.deepEqual(Object.keys(one.body.data[0]).sort(), [
      "agentId",
      "assignedUserId",
      "assignee",
      "channel",
      "closeReason",
      "closedAt",
      "contact",
      "contactId",
      "contactName",
      "createdAt",
      "humanReason",
      "id",
      "lastMessageAt",
      "status",
      "transferSummary",
      "unread",
      "updatedAt",
      "window",
    ]);
    assert.equal(one.body.data[0].unread, 2);

    // By agent.
    const ofA1 = expected.filter((c) => c.agentId === a1.id).map((c) => c.id);
    assert.deepEqual(await restAll(owner.client, `&agentId=${a1.id}`), ofA1);
    assert.deepEqual(await graphqlAll(owner.client, { agentId: a1.id }), ofA1);
    assert.deepEqual(await restAll(owner.client, `&agentId=${oa.id}`), []);

    // By status and by assignee.
    const human = ["a-cv-3", "b-cv-9", "a-cv-60"];
    await t.app.deps.db.conversation.updateMany({ where: { id: { in: human } }, data: { status: "HUMAN" } });
    const byStatus = expected.filter((c) => human.includes(c.id)).map((c) => c.id);
    assert.deepEqual(await restAll(owner.client, "&status=HUMAN"), byStatus);
    assert.deepEqual(await graphqlAll(owner.client, { status: "HUMAN" }), byStatus);
    for (const id of ["a-cv-3", "b-cv-9"]) {
      assert.equal(
        (await agent.client.post(`/api/conversations/${id}/assign`, { userId: agent.userId })).status,
        200,
      );
    }
    assert.equal(
      (await owner.client.post(`/api/conversations/a-cv-5/assign`, { userId: owner.userId })).status,
      200,
    );
    const mine = expected.filter((c) => ["a-cv-3", "b-cv-9"].includes(c.id)).map((c) => c.id);
    assert.deepEqual(await restAll(agent.client, "&assignee=me"), mine);
    assert.deepEqual(await graphqlAll(agent.client, { assignee: "ME" }), mine);
    assert.deepEqual(await restAll(owner.client, "&assignee=ME"), ["a-cv-5"]);
    const nobodys = expected.filter((c) => !["a-cv-3", "b-cv-9", "a-cv-5"].includes(c.id)).map((c) => c.id);
    assert.deepEqual(await restAll(owner.client, "&assignee=none"), nobodys);
    assert.deepEqual(await graphqlAll(owner.client, { assignee: "NONE" }, 9), nobodys);
    assert.deepEqual(await restAll(agent.client, "&assignee=me&status=HUMAN&agentId=" + a2.id), ["b-cv-9"]);
    assertProblem(await owner.client.get("/api/conversations?assignee=them"), 400, "VALIDATION_FAILED");
    assertProblem(await owner.client.get("/api/conversations?status=SHUT"), 400, "VALIDATION_FAILED");

    // Search: a contact's name (any case), an address, a word of a message; paged like the list.
    assert.deepEqual(await restAll(owner.client, "&search=client%2042%20a"), ["a-cv-42"]);
    assert.deepEqual(await graphqlAll(owner.client, { search: "CLIENT 42 A" }), ["a-cv-42"]);
    assert.deepEqual(await restAll(owner.client, "&search=%2B55210000017b"), ["b-cv-17"]);
    // "message k of i" has "of 1" for i = 1 and 10 to 19, of both agents.
    const ofOne = (prefix: string) =>
      expected.filter((c) => new RegExp(`^${prefix}-cv-1\\d?$`).test(c.id)).map((c) => c.id);
    assert.equal(ofOne("[ab]").length, 22);
    assert.deepEqual(await restAll(owner.client, "&search=of%201", 3), ofOne("[ab]"));
    assert.deepEqual(await graphqlAll(owner.client, { search: "of 1" }, 4), ofOne("[ab]"));
    assert.deepEqual(await restAll(owner.client, `&search=of%201&agentId=${a1.id}`, 4), ofOne("a"));
    assert.deepEqual(await restAll(owner.client, "&search=message%202%20of%2055"), ["b-cv-55", "a-cv-55"]);
    // LIKE's own characters are text; too short a search is refused.
    assert.deepEqual(await restAll(owner.client, "&search=%25%25%25"), []);
    assert.deepEqual(await restAll(owner.client, "&search=___"), []);
    assertProblem(await owner.client.get("/api/conversations?search=ab"), 400, "VALIDATION_FAILED");
    const short = await owner.client.graphql(INBOX, { search: " a " });
    assert.equal(short.body.errors[0].extensions.code, "VALIDATION_FAILED");
    // Another workspace's words find only its own conversations.
    assert.deepEqual(await restAll(other.owner.client, "&search=client%2042"), []);
    assert.deepEqual(await restAll(other.owner.client, "&search=client%2012"), ["z-cv-12"]);
    assert.deepEqual(
      (await restAll(other.owner.client, "")).sort(),
      Array.from({ length: 20 }, (_, i) => `z-cv-${i + 1}`).sort(),
    );
  } finally {
    await t.close();
  }
});

Deno.test("inboxEvents: every agent's conversations, ASSIGNED when the assignee changes; conversationEvents too", async () => {
  const t = await startTestApp({ PORT: "0", GROUPING_MEDIUM_MS: "600000" }, { workers: false });
  const { port } = await t.app.start();
  const clients: ReturnType<typeof wsClient>[] = [];
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.member(workspaceId, "AGENT");
    const c = await conversationOf(t, workspaceId, owner);
    const other = await t.seed.workspace("Other");
    const outsider = await conversationOf(t, other.workspaceId, other.owner);
    const connect = () => {
      const client = wsClient(port, { token: owner.token, workspaceId });
      clients.push(client);
      return client;
    };
    const inbox = subscribe(
      connect(),
      "subscription { inboxEvents { type conversation { id assignee { id } } message { content } } }",
    );
    const perAgent = subscribe(
      connect(),
      "subscription($a: ID!) { conversationEvents(agentId: $a) { type conversation { id assignee { id } } } }",
      { a: c.agentId },
    );
    await subscribed(t.app, 2);
    // Another workspace's change first: it never arrives.
    await other.owner.client.post(`/api/conversations/${outsider.conversationId}/assign`, {
      userId: other.owner.userId,
    });
    await agent.client.post(`/api/conversations/${c.conversationId}/assign`, { userId: agent.userId });
    const assigned = {
      type: "ASSIGNED",
      conversation: { id: c.conversationId, assignee: { id: agent.userId } },
    };
    assert.deepEqual((await inbox.next()).data.inboxEvents, { ...assigned, message: null });
    assert.deepEqual((await perAgent.next()).data.conversationEvents, assigned);
    // The same assignee again changes nothing: no event. A customer's message of another agent follows.
    await agent.client.post(`/api/conversations/${c.conversationId}/assign`, { userId: agent.userId });
    const second = await conversationOf(
      t,
      workspaceId,
      owner,
      { externalId: "5511777770000", name: "Rui" },
      "olá",
    );
    assert.deepEqual((await inbox.next()).data.inboxEvents, {
      type: "OPENED",
      conversation: { id: second.conversationId, assignee: null },
      message: null,
    });
    assert.deepEqual((await inbox.next()).data.inboxEvents, {
      type: "MESSAGE_ADDED",
      conversation: { id: second.conversationId, assignee: null },
      message: { content: "olá" },
    });
    // Release: STATUS_CHANGED... only from HUMAN; a takeover by the owner reassigns and transfers.
    await owner.client.post(`/api/conversations/${c.conversationId}/takeover`);
    const after = [(await inbox.next()).data.inboxEvents.type, (await inbox.next()).data.inboxEvents.type];
    assert.deepEqual(after, ["STATUS_CHANGED", "ASSIGNED"]);
    inbox.stop();
    perAgent.stop();
  } finally {
    await Promise.all(clients.map((c) => c.dispose()));
    await t.close();
  }
});
