/**
 * Live feeds: GraphQL subscriptions over graphql-ws and SSE on /graphql, fed
 * by LISTEN/NOTIFY so an event committed through one server process reaches the subscribers of
 * another. Events are published with the bus directly, after inserting the rows they name.
 */
import assert from "node:assert/strict";
import type { Client as WsClient } from "graphql-ws";
import { createPrisma } from "../src/db/client.ts";
import { authenticateActor } from "../src/auth/authenticate.ts";
import { startTestApp } from "./_helpers/app.ts";
import { publish, seedConversation, seedFeed, storeCustomerMessage } from "./_helpers/events.ts";
import { eventually } from "./_helpers/receiver.ts";
import {
  members,
  secondApp,
  sseEvents,
  subscribe,
  subscribed,
  unsubscribed,
  wsClient,
} from "./_helpers/live.ts";

const CONVERSATION_EVENTS = `subscription ($agentId: ID!) {
  conversationEvents(agentId: $agentId) { type conversation { id status } message { id content sender } }
}`;

Deno.test("a subscriber on one process receives an event committed through another, and nothing of a rollback", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  const b = await secondApp(t);
  let client: WsClient | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, agent, seeded } = await seedFeed(t);
    const viewer = await t.seed.member(workspaceId, "VIEWER");

    client = wsClient(port, { token: viewer.token, workspaceId });
    const sub = subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    await subscribed(t.app, 1);

    // Rolled back on instance B: its NOTIFY is never delivered.
    const lost = await storeCustomerMessage(b, seeded, "never committed");
    await assert.rejects(
      b.deps.db.$transaction(async (tx) => {
        await b.deps.events.publish(tx, lost.event);
        throw new Error("rollback");
      }),
      /rollback/,
    );
    // Committed on instance B.
    const kept = await storeCustomerMessage(b, seeded, "Olá!");
    await publish(b, kept.event);

    const first = await sub.next();
    assert.deepEqual(first, {
      data: {
        conversationEvents: {
          type: "MESSAGE_ADDED",
          conversation: { id: seeded.conversation.id, status: "OPEN" },
          message: { id: kept.id, content: "Olá!", sender: "CUSTOMER" },
        },
      },
    });

    // A status change, then a close, in the order committed.
    await t.app.deps.db.conversation.update({
      where: { id: seeded.conversation.id },
      data: { status: "HUMAN" },
    });
    await publish(b, {
      type: "human.transferred",
      workspaceId,
      agentId: agent.id,
      conversationId: seeded.conversation.id,
      data: { transferSummary: "wants a person", reason: "MANUAL" },
    });
    await publish(b, {
      type: "conversation.closed",
      workspaceId,
      agentId: agent.id,
      conversationId: seeded.conversation.id,
      data: { reason: "MANUAL" },
    });
    const changed = await sub.next();
    assert.deepEqual(changed.data.conversationEvents, {
      type: "STATUS_CHANGED",
      conversation: { id: seeded.conversation.id, status: "HUMAN" },
      message: null,
    });
    assert.equal((await sub.next()).data.conversationEvents.type, "CLOSED");
    await sub.stop();
    await unsubscribed(t.app);
  } finally {
    await client?.dispose();
    await b.stop();
    await t.close();
  }
});

/** The close event of a raw graphql-ws socket after `connection_init` with `payload`. */
async function closeCodeAfterInit(port: number, payload: unknown): Promise<number> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, "graphql-transport-ws");
  const closed = new Promise<number>((resolve) => socket.onclose = (e) => resolve(e.code));
  await new Promise((resolve) => socket.onopen = resolve);
  socket.send(JSON.stringify({ type: "connection_init", payload }));
  return await closed;
}

Deno.test("connection_init refuses bad credentials with 4401 and a foreign workspace with 4403", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  try {
    const { port } = await t.app.start();
    const w1 = await t.seed.workspace("One");
    const w2 = await t.seed.workspace("Two");
    assert.equal(await closeCodeAfterInit(port, {}), 4401);
    assert.equal(
      await closeCodeAfterInit(port, {
        authorization: "Bearer not-a-token",
        "x-workspace-id": w1.workspaceId,
      }),
      4401,
    );
    assert.equal(
      await closeCodeAfterInit(port, {
        authorization: `Bearer ${w2.owner.token}`,
        "x-workspace-id": w1.workspaceId,
      }),
      4403,
    );
    assert.equal(await closeCodeAfterInit(port, { authorization: `Bearer ${w1.owner.token}` }), 4400);

    // Logged out: the session's JWT is refused at connect.
    const member = await t.seed.member(w1.workspaceId, "VIEWER");
    assert.equal((await member.client.post("/api/auth/logout")).status, 204);
    assert.equal(
      await closeCodeAfterInit(port, {
        authorization: `Bearer ${member.token}`,
        "x-workspace-id": w1.workspaceId,
      }),
      4401,
    );
  } finally {
    await t.close();
  }
});

Deno.test("a subscriber of another workspace gets nothing, and a foreign agent or conversation is NOT_FOUND", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  let client: WsClient | undefined;
  try {
    const { port } = await t.app.start();
    const w1 = await t.seed.workspace("One");
    const w2 = await t.seed.workspace("Two");
    const agent1 = await t.seed.agent(w1.owner.client);
    const agent2 = await t.seed.agent(w2.owner.client);
    const conv1 = await seedConversation(t.app, w1.workspaceId, agent1.id);
    const conv2 = await seedConversation(t.app, w2.workspaceId, agent2.id);
    const viewer2 = await t.seed.member(w2.workspaceId, "VIEWER");
    client = wsClient(port, { token: viewer2.token, workspaceId: w2.workspaceId });

    // Foreign ids are refused at subscribe, as unknown ones are.
    for (
      const [query, variables] of [
        [CONVERSATION_EVENTS, { agentId: agent1.id }],
        [`subscription ($id: ID!) { messageAdded(conversationId: $id) { id } }`, {
          id: conv1.conversation.id,
        }],
        [CONVERSATION_EVENTS, { agentId: "no-such-agent" }],
      ] as const
    ) {
      const refused = await subscribe(client, query, variables).next();
      assert.equal(refused.errors?.length, 1);
      assert.equal(refused.errors![0].extensions.code, "NOT_FOUND");
    }

    const feed = subscribe(client, CONVERSATION_EVENTS, { agentId: agent2.id });
    const messages = subscribe(
      client,
      `subscription ($id: ID!) { messageAdded(conversationId: $id) { id content } }`,
      { id: conv2.conversation.id },
    );
    await subscribed(t.app, 2);
    // W1's event first, then W2's: W2's subscribers see only their own.
    await publish(t.app, (await storeCustomerMessage(t.app, conv1, "for W1 only")).event);
    const mine = await storeCustomerMessage(t.app, conv2, "for W2");
    await publish(t.app, mine.event);
    assert.equal((await feed.next()).data.conversationEvents.message.content, "for W2");
    assert.deepEqual((await messages.next()).data, { messageAdded: { id: mine.id, content: "for W2" } });
  } finally {
    await client?.dispose();
    await t.close();
  }
});

Deno.test("a subscription answers exactly its selection, read for each subscriber", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  let client: WsClient | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, agent, seeded } = await seedFeed(t);
    const member = await t.seed.member(workspaceId, "AGENT");
    client = wsClient(port, { token: member.token, workspaceId });
    const sub = subscribe(
      client,
      `subscription ($agentId: ID!) {
        conversationEvents(agentId: $agentId) {
          kind: type
          conversation { status who: contact { name } channel { label } __typename }
        }
      }`,
      { agentId: agent.id },
    );
    await subscribed(t.app, 1);
    await publish(t.app, {
      type: "conversation.opened",
      workspaceId,
      agentId: agent.id,
      conversationId: seeded.conversation.id,
      data: {},
    });
    assert.deepEqual((await sub.next()).data, {
      conversationEvents: {
        kind: "OPENED",
        conversation: {
          status: "OPEN",
          who: { name: "Maria Silva" },
          channel: { label: "Sales line" },
          __typename: "Conversation",
        },
      },
    });
  } finally {
    await client?.dispose();
    await t.close();
  }
});

Deno.test("subscription documents obey the document limits", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  let client: WsClient | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    client = wsClient(port, { token: owner.token, workspaceId });
    const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(" ");
    const query = `subscription ($agentId: ID!) { conversationEvents(agentId: $agentId) { ${aliases} } }`;
    await assert.rejects(
      subscribe(client, query, { agentId: agent.id }).next(),
      // graphql-ws rejects the iterator with the error messages the server sent.
      (errors: unknown) => {
        const list = errors as Array<{ extensions?: { code?: string } }>;
        assert.equal(list[0].extensions?.code, "QUERY_TOO_COMPLEX");
        return true;
      },
    );
    assert.equal(t.app.deps.live.subscribers, 0);
  } finally {
    await client?.dispose();
    await t.close();
  }
});

Deno.test("SSE (graphql-sse distinct connections) delivers the same event", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  const b = await secondApp(t);
  let events: ReturnType<typeof sseEvents> | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, seeded } = await seedFeed(t);
    const viewer = await t.seed.member(workspaceId, "VIEWER");
    const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: "POST",
      headers: {
        accept: "text/event-stream",
        "content-type": "application/json",
        authorization: `Bearer ${viewer.token}`,
        "x-workspace-id": workspaceId,
      },
      body: JSON.stringify({
        query: `subscription ($id: ID!) { messageAdded(conversationId: $id) { id content sender } }`,
        variables: { id: seeded.conversation.id },
      }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    events = sseEvents(res.body!);
    await subscribed(t.app, 1);
    const added = await storeCustomerMessage(b, seeded, "via SSE");
    await publish(b, added.event);
    const next = await events.next();
    assert.equal(next.event, "next");
    assert.deepEqual(JSON.parse(next.data), {
      data: { messageAdded: { id: added.id, content: "via SSE", sender: "CUSTOMER" } },
    });

    // Refused at subscribe: one `next` with the error, then `complete`.
    const refused = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: "POST",
      headers: {
        accept: "text/event-stream",
        "content-type": "application/json",
        authorization: `Bearer ${viewer.token}`,
        "x-workspace-id": workspaceId,
      },
      body: JSON.stringify({ query: `subscription { messageAdded(conversationId: "nope") { id } }` }),
    });
    const refusedEvents = sseEvents(refused.body!);
    const error = await refusedEvents.next();
    assert.equal(error.event, "next");
    assert.equal(JSON.parse(error.data).errors[0].extensions.code, "NOT_FOUND");
    assert.equal((await refusedEvents.next()).event, "complete");
  } finally {
    await events?.cancel();
    await unsubscribed(t.app);
    await b.stop();
    await t.close();
  }
});

Deno.test("a logout or a removed membership ends the feed with its error at the next event", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  const clients: WsClient[] = [];
  try {
    const { port } = await t.app.start();
    const { workspaceId, agent, seeded } = await seedFeed(t);
    const leaving = await t.seed.member(workspaceId, "AGENT");
    const removed = await t.seed.member(workspaceId, "VIEWER");
    const staying = await t.seed.member(workspaceId, "VIEWER");
    const feeds = [leaving, removed, staying].map((who) => {
      const client = wsClient(port, { token: who.token, workspaceId });
      clients.push(client);
      return subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    });
    await members(t.app, 3);
    assert.equal(t.app.deps.live.subscribers, 2, "one execution per role: AGENT, VIEWER");
    assert.equal((await leaving.client.post("/api/auth/logout")).status, 204);
    await t.app.deps.db.membership.deleteMany({ where: { userId: removed.userId, workspaceId } });

    await publish(t.app, (await storeCustomerMessage(t.app, seeded, "after")).event);
    const [loggedOut, gone, kept] = await Promise.all(feeds.map((f) => f.next()));
    assert.equal(loggedOut.errors?.[0].extensions.code, "UNAUTHENTICATED");
    assert.equal(gone.errors?.[0].extensions.code, "FORBIDDEN");
    assert.equal(kept.data.conversationEvents.message.content, "after");
    await feeds[0].ended();
    await feeds[1].ended();
    await eventually(() => Promise.resolve(t.app.deps.live.subscribers === 1 || undefined));
  } finally {
    for (const client of clients) await client.dispose();
    await t.close();
  }
});

/** `promise`, or a failure after 15 s (a backstop: the tests wait on what the server sends). */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      timer = setTimeout(() => reject(new Error(`${what}: nothing in 15 s`)), 15_000)
    ),
  ]).finally(() => clearTimeout(timer));
}

Deno.test("a logout, a removed membership and a changed role end graphql-ws feeds of another process at once, without an event", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  // The feeds are served by a second process: only PostgreSQL's announcement tells it.
  const b = await secondApp(t);
  const clients: WsClient[] = [];
  try {
    const { port } = await b.start();
    const { workspaceId, agent, seeded } = await seedFeed(t);
    const leaving = await t.seed.member(workspaceId, "AGENT");
    const removed = await t.seed.member(workspaceId, "VIEWER");
    const promoted = await t.seed.member(workspaceId, "VIEWER");
    const staying = await t.seed.member(workspaceId, "VIEWER");
    const feeds = [leaving, removed, promoted, staying].map((who) => {
      const client = wsClient(port, { token: who.token, workspaceId });
      clients.push(client);
      return subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    });
    await members(b, 4);
    assert.equal((await leaving.client.post("/api/auth/logout")).status, 204);
    await t.app.deps.db.membership.deleteMany({ where: { userId: removed.userId, workspaceId } });
    await t.app.deps.db.membership.updateMany({
      where: { userId: promoted.userId, workspaceId },
      data: { role: "MANAGER" },
    });
    const [loggedOut, gone, changed] = await within(
      Promise.all(feeds.slice(0, 3).map((f) => f.next())),
      "refusals",
    );
    assert.equal(loggedOut.errors?.[0].extensions.code, "UNAUTHENTICATED");
    assert.equal(gone.errors?.[0].extensions.code, "FORBIDDEN");
    assert.equal(changed.errors?.[0].message, "Your role in this workspace changed; subscribe again.");
    for (const feed of feeds.slice(0, 3)) await feed.ended();
    assert.equal(b.deps.live.shared.members, 1);
    // The clients close their sockets once nothing is subscribed: their credentials are let go.
    await eventually(() => Promise.resolve(b.deps.live.credentials.size === 1 || undefined));
    const added = await storeCustomerMessage(t.app, seeded, "after");
    await publish(t.app, added.event);
    assert.equal((await feeds[3].next()).data.conversationEvents.message.id, added.id);
  } finally {
    for (const client of clients) await client.dispose();
    await b.stop();
    await t.close();
  }
});

Deno.test("a session's feed ends when the session expires, without an event", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  const clients: WsClient[] = [];
  try {
    const { port } = await t.app.start();
    const { workspaceId, agent, seeded } = await seedFeed(t);
    const [ending, staying] = [
      await t.seed.member(workspaceId, "VIEWER"),
      await t.seed.member(workspaceId, "VIEWER"),
    ];
    const feeds = [ending, staying].map((who) => {
      const client = wsClient(port, { token: who.token, workspaceId });
      clients.push(client);
      return subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    });
    await members(t.app, 2);
    // The session row now ends 300 ms from now (its JWT would still pass for hours).
    await t.app.deps.db.$executeRaw`
      UPDATE "Session" SET "expiresAt" = now() + interval '300 milliseconds'
       WHERE "userId" = ${ending.userId}`;
    const expired = await within(feeds[0].next(), "the expiry");
    assert.equal(expired.errors?.[0].extensions.code, "UNAUTHENTICATED");
    await feeds[0].ended();
    const added = await storeCustomerMessage(t.app, seeded, "after");
    await publish(t.app, added.event);
    assert.equal((await feeds[1].next()).data.conversationEvents.message.id, added.id);
  } finally {
    for (const client of clients) await client.dispose();
    await t.close();
  }
});

Deno.test("a credential revoked before it was tracked is refused by the read that follows, before the next event", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  try {
    const { workspaceId } = await t.seed.workspace();
    const member = await t.seed.member(workspaceId, "VIEWER");
    const deps = t.app.deps;
    const live = deps.live;
    // The actor as it was read before the logout, whose announcement nobody here was tracking yet.
    const actor = await authenticateActor(deps, `Bearer ${member.token}`, () => workspaceId);
    assert.equal((await member.client.post("/api/auth/logout")).status, 204);
    const handle = await live.credentials.track(deps, `Bearer ${member.token}`, workspaceId, actor);
    const refusal = () => handle.standing.refused?.code;
    assert.equal(refusal(), undefined, "as first read");
    const refusals: string[] = [];
    handle.watch((standing) => refusals.push(standing.refused?.code ?? "ok"));
    await live.credentials.ready();
    assert.equal(refusal(), "UNAUTHENTICATED");
    assert.deepEqual(refusals, ["UNAUTHENTICATED"]);
    handle.release();
    assert.equal(live.credentials.size, 0);
  } finally {
    await t.close();
  }
});

Deno.test("subscribers with one role and one selection share one read per event, and no credential is read per event", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  const statements: string[] = [];
  const b = await secondApp(t, { db: createPrisma(t.db.url, { onQuery: (sql) => statements.push(sql) }) });
  const clients: WsClient[] = [];
  try {
    const { port } = await b.start();
    const { workspaceId, agent, seeded } = await seedFeed(t);
    const viewers = await Promise.all([1, 2, 3].map(() => t.seed.member(workspaceId, "VIEWER")));
    const feeds = viewers.map((who) => {
      const client = wsClient(port, { token: who.token, workspaceId });
      clients.push(client);
      return subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    });
    await members(b, 3);
    assert.equal(b.deps.live.subscribers, 1, "one execution for the three viewers");
    // The three credentials were read once more when they were tracked; events wait for that.
    const first = await storeCustomerMessage(t.app, seeded, "first");
    await publish(t.app, first.event);
    for (const feed of feeds) assert.equal((await feed.next()).data.conversationEvents.message.id, first.id);
    statements.length = 0;
    for (const content of ["shared 1", "shared 2"]) {
      const added = await storeCustomerMessage(t.app, seeded, content);
      await publish(t.app, added.event);
      for (const feed of feeds) {
        assert.equal((await feed.next()).data.conversationEvents.message.id, added.id);
      }
    }
    // One read per row (conversation, message) and event; no credential is read again.
    assert.equal(statements.length, 4, statements.join("\n"));
    assert.deepEqual(statements.filter((sql) => /"Session"|"ApiToken"|"Membership"/.test(sql)), []);
  } finally {
    for (const client of clients) await client.dispose();
    await b.stop();
    await t.close();
  }
});

Deno.test("the LISTEN connection is reopened after it is lost, and later events arrive", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  let client: WsClient | undefined;
  const listeners = async () =>
    (await t.app.deps.db.$queryRaw<Array<{ pid: number }>>`
      SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND query = 'LISTEN switchboard_live'`).map((r) => r.pid);
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner, agent, seeded } = await seedFeed(t);
    client = wsClient(port, { token: owner.token, workspaceId });
    const feed = subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    await subscribed(t.app, 1);

    const [before] = await listeners();
    assert.ok(before, "one LISTEN connection");
    await t.app.deps.db.$queryRaw`SELECT pg_terminate_backend(${before}::int)`;
    await eventually(async () => {
      const now = await listeners();
      return now.length === 1 && now[0] !== before || undefined;
    });
    const added = await storeCustomerMessage(t.app, seeded, "after the reconnect");
    await publish(t.app, added.event);
    assert.equal((await feed.next()).data.conversationEvents.message.id, added.id);
  } finally {
    await client?.dispose();
    await t.close();
  }
});

Deno.test("stopping the app completes open SSE and graphql-ws subscriptions", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  let client: WsClient | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    client = wsClient(port, { token: owner.token, workspaceId });
    const feed = subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: "POST",
      headers: {
        accept: "text/event-stream",
        "content-type": "application/json",
        authorization: `Bearer ${owner.token}`,
        "x-workspace-id": workspaceId,
      },
      body: JSON.stringify({ query: CONVERSATION_EVENTS, variables: { agentId: agent.id } }),
    });
    const events = sseEvents(res.body!);
    await subscribed(t.app, 2);
    const stopped = t.app.stop();
    assert.equal((await events.next()).event, "complete");
    await feed.ended();
    await stopped;
  } finally {
    await client?.dispose();
    await t.db.drop();
  }
});

Deno.test("queries also run over graphql-ws; a subscription over plain JSON HTTP is a 4xx", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  let client: WsClient | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    client = wsClient(port, { token: owner.token, workspaceId });
    const read = await subscribe(client, `query ($id: ID!) { agent(id: $id) { id name } }`, { id: agent.id })
      .next();
    assert.deepEqual(read, { data: { agent: { id: agent.id, name: "Ana" } } });

    const res = await owner.client.post(
      "/graphql",
      { query: CONVERSATION_EVENTS, variables: { agentId: agent.id } },
      { accept: "application/json" },
    );
    assert.equal(res.status, 406, JSON.stringify(res.body));
  } finally {
    await client?.dispose();
    await t.close();
  }
});

Deno.test("conversation.released is a STATUS_CHANGED for subscribers and nothing for webhooks", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  let client: WsClient | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner, agent, seeded } = await seedFeed(t);
    client = wsClient(port, { token: owner.token, workspaceId });
    const feed = subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    await subscribed(t.app, 1);
    const id = await publish(t.app, {
      type: "conversation.released",
      workspaceId,
      agentId: agent.id,
      conversationId: seeded.conversation.id,
      data: {},
    });
    assert.deepEqual((await feed.next()).data.conversationEvents, {
      type: "STATUS_CHANGED",
      conversation: { id: seeded.conversation.id, status: "OPEN" },
      message: null,
    });
    assert.equal(await t.app.deps.db.domainEvent.count({ where: { id } }), 0, "not stored for webhooks");
  } finally {
    await client?.dispose();
    await t.close();
  }
});

Deno.test("identical subscriptions of one credential share one execution, until the last one leaves", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  const clients: WsClient[] = [];
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner, agent, seeded } = await seedFeed(t);
    const feeds = [1, 2, 3].map(() => {
      const client = wsClient(port, { token: owner.token, workspaceId });
      clients.push(client);
      return subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    });
    const live = t.app.deps.live;
    await eventually(() => Promise.resolve(live.shared.members === 3 || undefined));
    assert.equal(live.subscribers, 1, "one execution, one live stream");

    const first = await storeCustomerMessage(t.app, seeded, "to all three");
    await publish(t.app, first.event);
    for (const feed of feeds) assert.equal((await feed.next()).data.conversationEvents.message.id, first.id);

    // One leaves: the others keep the shared execution.
    await feeds[0].stop();
    await eventually(() => Promise.resolve(live.shared.members === 2 || undefined));
    const second = await storeCustomerMessage(t.app, seeded, "to two");
    await publish(t.app, second.event);
    for (const feed of feeds.slice(1)) {
      assert.equal((await feed.next()).data.conversationEvents.message.id, second.id);
    }
    await feeds[1].stop();
    await feeds[2].stop();
    await unsubscribed(t.app);
    assert.equal(live.shared.members, 0);
  } finally {
    for (const client of clients) await client.dispose();
    await t.close();
  }
});
