/**
 * graphql-ws robustness: per-client limits (operations per socket, sockets per credential, sockets
 * per client address), the connection_init timeout, the keepalive ping, and the credentials of
 * executions shared by every socket of a role (src/graphql/ws.ts, src/live/credentials.ts).
 */
import assert from "node:assert/strict";
import type { Client as WsClient } from "graphql-ws";
import { startTestApp } from "./_helpers/app.ts";
import { addCustomerMessage, seedFeed } from "./_helpers/events.ts";
import { eventually } from "./_helpers/receiver.ts";
import { subscribe, wsClient } from "./_helpers/live.ts";
import { closeSocket, initOnceAccepted, initOutcome, rawUpgrade } from "./_helpers/sockets.ts";

const CONVERSATION_EVENTS = `subscription ($agentId: ID!) {
  conversationEvents(agentId: $agentId) { type message { id content } }
}`;

Deno.test("a socket without connection_init is closed with 4408 after LIVE_CONNECTION_INIT_TIMEOUT_MS", async () => {
  const t = await startTestApp({ PORT: "0", LIVE_CONNECTION_INIT_TIMEOUT_MS: "50" }, { workers: false });
  try {
    const { port } = await t.app.start();
    const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, "graphql-transport-ws");
    const closed = await new Promise<CloseEvent>((resolve) => socket.onclose = resolve);
    assert.equal(closed.code, 4408);
    assert.equal(closed.reason, "Connection initialisation timeout");
  } finally {
    await t.close();
  }
});

Deno.test("the keepalive pings a quiet socket, and a client that takes its bytes is kept though it never answers", async () => {
  const t = await startTestApp({ PORT: "0", LIVE_KEEPALIVE_SECONDS: "1" }, { workers: false });
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner } = await t.seed.workspace();
    const upgrade = await rawUpgrade(port);
    assert.equal(upgrade.status, 101);
    await upgrade.sendJson({
      type: "connection_init",
      payload: { authorization: `Bearer ${owner.token}`, "x-workspace-id": workspaceId },
    });
    // This client reads every frame but answers no ping: behind, or careless, it is not gone.
    const text = async () => {
      const got = await upgrade.frame();
      assert.ok(got, "the connection is still open");
      assert.equal(got[0], 0x1, `a text frame, not ${got[0]}`);
      return JSON.parse(new TextDecoder().decode(got[1]));
    };
    assert.equal((await text()).type, "connection_ack");
    // Four pings, half a second apart: two full keepalive windows without an answer.
    for (let i = 0; i < 4; i++) assert.deepEqual(await text(), { type: "ping" });
    upgrade.close();
  } finally {
    await t.close();
  }
});

Deno.test("at most LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET operations at once: the next is LIVE_LIMIT_REACHED, the socket stays", async () => {
  const t = await startTestApp({ PORT: "0", LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET: "2" }, { workers: false });
  let client: WsClient | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner, agent, seeded } = await seedFeed(t);
    client = wsClient(port, { token: owner.token, workspaceId });
    const feeds = [1, 2].map(() => subscribe(client!, CONVERSATION_EVENTS, { agentId: agent.id }));
    await eventually(() => Promise.resolve(t.app.deps.live.shared.members === 2 || undefined));
    await assert.rejects(
      subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id }).next(),
      (errors: unknown) => {
        const list = errors as Array<{ message: string; extensions?: { code?: string; status?: number } }>;
        assert.equal(list.length, 1);
        assert.equal(list[0].extensions?.code, "LIVE_LIMIT_REACHED");
        assert.equal(list[0].extensions?.status, 429);
        assert.equal(list[0].message, "At most 2 operations at once on one socket.");
        return true;
      },
    );
    assert.equal(t.app.deps.live.shared.members, 2);
    // The two still receive; once one ends, another is accepted.
    const id = await addCustomerMessage(t.app, seeded, "both");
    for (const feed of feeds) assert.equal((await feed.next()).data.conversationEvents.message.id, id);
    await feeds[0].stop();
    await eventually(() => Promise.resolve(t.app.deps.live.shared.members === 1 || undefined));
    const third = subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    await eventually(() => Promise.resolve(t.app.deps.live.shared.members === 2 || undefined));
    const later = await addCustomerMessage(t.app, seeded, "third");
    assert.equal((await third.next()).data.conversationEvents.message.id, later);
  } finally {
    await client?.dispose();
    await t.close();
  }
});

Deno.test("at most LIVE_MAX_SOCKETS_PER_CREDENTIAL sockets per credential: the next closes with 4429", async () => {
  const t = await startTestApp({ PORT: "0", LIVE_MAX_SOCKETS_PER_CREDENTIAL: "2" }, { workers: false });
  const open: WebSocket[] = [];
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner } = await t.seed.workspace();
    const other = await t.seed.member(workspaceId, "VIEWER");
    for (const _ of [1, 2]) {
      const socket = await initOutcome(port, owner.token, workspaceId);
      assert.ok(socket instanceof WebSocket, `acknowledged, not closed with ${socket}`);
      open.push(socket);
    }
    assert.equal(await initOutcome(port, owner.token, workspaceId), 4429);
    // Another credential is counted apart.
    const theirs = await initOutcome(port, other.token, workspaceId);
    assert.ok(theirs instanceof WebSocket);
    open.push(theirs);
    // One of the two closes: the credential may open one again.
    await closeSocket(open.shift()!);
    open.push(await initOnceAccepted(port, owner.token, workspaceId));
  } finally {
    for (const socket of open) await closeSocket(socket);
    await t.close();
  }
});

Deno.test("at most LIVE_MAX_SOCKETS_PER_ADDRESS sockets from one address: the next upgrade is 429 LIVE_LIMIT_REACHED", async () => {
  const t = await startTestApp({ PORT: "0", LIVE_MAX_SOCKETS_PER_ADDRESS: "2" }, { workers: false });
  const open: WebSocket[] = [];
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner } = await t.seed.workspace();
    for (const _ of [1, 2]) {
      const socket = await initOutcome(port, owner.token, workspaceId);
      assert.ok(socket instanceof WebSocket);
      open.push(socket);
    }
    const refused = await rawUpgrade(port);
    assert.equal(refused.status, 429);
    assert.match(refused.head, /content-type: application\/problem\+json/i);
    const length = Number(/content-length: (\d+)/i.exec(refused.head)?.[1]);
    const problem = JSON.parse(new TextDecoder().decode(await refused.rest(length)));
    assert.equal(problem.code, "LIVE_LIMIT_REACHED");
    assert.equal(problem.status, 429);
    await closeSocket(open.shift()!);
    open.push(await initOnceAccepted(port, owner.token, workspaceId));
  } finally {
    for (const socket of open) await closeSocket(socket);
    await t.close();
  }
});

Deno.test("sockets of one role share one execution; a revoked API token or a changed role ends only that member", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  const clients: WsClient[] = [];
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner, agent, seeded } = await seedFeed(t);
    const created = await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "live" });
    assert.equal(created.status, 201);
    const manager = await t.seed.member(workspaceId, "MANAGER");
    const promoted = await t.seed.member(workspaceId, "MANAGER");
    // An API token acts as MANAGER: the three sockets share one execution.
    const feeds = [created.body.token as string, manager.token, promoted.token].map((token) => {
      const client = wsClient(port, { token, workspaceId });
      clients.push(client);
      return subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    });
    const live = t.app.deps.live;
    await eventually(() => Promise.resolve(live.shared.members === 3 || undefined));
    assert.equal(live.subscribers, 1, "one execution for the three");
    assert.equal(live.credentials.size, 3, "three credentials tracked");

    const first = await addCustomerMessage(t.app, seeded, "to all");
    for (const feed of feeds) assert.equal((await feed.next()).data.conversationEvents.message.id, first);

    const tokenId = created.body.id ?? created.body.apiToken?.id;
    const revoked = await owner.client.delete(`/api/workspaces/${workspaceId}/api-tokens/${tokenId}`);
    assert.equal(revoked.status, 204);
    await t.app.deps.db.membership.updateMany({
      where: { userId: promoted.userId, workspaceId },
      data: { role: "OWNER" },
    });
    const second = await addCustomerMessage(t.app, seeded, "after");
    const [tokenFeed, managerFeed, promotedFeed] = await Promise.all(feeds.map((f) => f.next()));
    assert.equal(tokenFeed.errors?.[0].extensions.code, "UNAUTHENTICATED");
    assert.deepEqual(tokenFeed.errors?.[0].path, ["conversationEvents"]);
    assert.equal(promotedFeed.errors?.[0].extensions.code, "FORBIDDEN");
    assert.equal(promotedFeed.errors?.[0].message, "Your role in this workspace changed; subscribe again.");
    assert.equal(managerFeed.data.conversationEvents.message.id, second);
    await feeds[0].ended();
    await feeds[2].ended();
    assert.equal(live.shared.members, 1);

    // Every socket closed: nothing is tracked any more.
    for (const client of clients.splice(0)) await client.dispose();
    await eventually(() =>
      Promise.resolve(live.credentials.size === 0 && live.subscribers === 0 || undefined)
    );
  } finally {
    for (const client of clients) await client.dispose();
    await t.close();
  }
});

Deno.test("a graphql-ws ping from the client is answered with a pong carrying its payload", async () => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  let socket: WebSocket | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner } = await t.seed.workspace();
    const acked = await initOutcome(port, owner.token, workspaceId);
    assert.ok(acked instanceof WebSocket);
    socket = acked;
    const pong = new Promise<string>((resolve) => acked.onmessage = (e) => resolve(String(e.data)));
    acked.send(JSON.stringify({ type: "ping", payload: { at: 1 } }));
    assert.deepEqual(JSON.parse(await pong), { type: "pong", payload: { at: 1 } });
  } finally {
    if (socket) await closeSocket(socket);
    await t.close();
  }
});
