/**
 * graphql-ws robustness: per-client limits (operations per socket, sockets per credential, sockets
 * per client address), the connection_init timeout, the keepalive ping, and credentials checked
 * per event for executions shared by every socket of a role (src/graphql/ws.ts,
 * src/live/credentials.ts).
 */
import assert from "node:assert/strict";
import type { Client as WsClient } from "graphql-ws";
import { startTestApp } from "./_helpers/app.ts";
import { addCustomerMessage, seedConversation } from "./_helpers/events.ts";
import { eventually } from "./_helpers/receiver.ts";
import { subscribe, wsClient } from "./_helpers/live.ts";

const CONVERSATION_EVENTS = `subscription ($agentId: ID!) {
  conversationEvents(agentId: $agentId) { type message { id content } }
}`;

/** A raw socket's outcome of `connection_init`: "ack", or the close code. */
async function initOutcome(port: number, token: string, workspaceId: string): Promise<WebSocket | number> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, "graphql-transport-ws");
  await new Promise((resolve) => socket.onopen = resolve);
  const outcome = new Promise<WebSocket | number>((resolve) => {
    socket.onclose = (e) => resolve(e.code);
    socket.onmessage = (e) => JSON.parse(String(e.data)).type === "connection_ack" && resolve(socket);
  });
  socket.send(JSON.stringify({
    type: "connection_init",
    payload: { authorization: `Bearer ${token}`, "x-workspace-id": workspaceId },
  }));
  return await outcome;
}

/** Closes a raw socket and resolves once the close handshake is over. */
async function closeSocket(socket: WebSocket) {
  const closed = new Promise((resolve) => socket.onclose = resolve);
  socket.close();
  await closed;
}

/** A WebSocket upgrade written by hand over TCP: the response head, and the connection to read on. */
async function rawUpgrade(port: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  await conn.write(new TextEncoder().encode(
    `GET /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
  ));
  let bytes = new Uint8Array(0);
  const read = async (): Promise<boolean> => {
    const chunk = new Uint8Array(4096);
    const n = await conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(bytes.length + n);
    next.set(bytes);
    next.set(chunk.subarray(0, n), bytes.length);
    bytes = next;
    return true;
  };
  const text = () => new TextDecoder().decode(bytes);
  while (!text().includes("\r\n\r\n")) if (!(await read())) break;
  const headEnd = text().indexOf("\r\n\r\n") + 4;
  const head = text().slice(0, headEnd);
  const status = Number(head.split(" ")[1]);
  bytes = bytes.slice(headEnd);
  return {
    status,
    head,
    /** The rest of the response: `length` bytes, or until the server closes the connection. */
    async rest(length = Infinity): Promise<Uint8Array> {
      while (bytes.length < length && await read());
      conn.close();
      return bytes;
    },
  };
}

/** Server frames (never masked, short payloads): [opcode, payload]. */
function frames(bytes: Uint8Array): Array<[number, Uint8Array]> {
  const out: Array<[number, Uint8Array]> = [];
  for (let i = 0; i + 2 <= bytes.length;) {
    const opcode = bytes[i] & 0x0f;
    const length = bytes[i + 1] & 0x7f;
    out.push([opcode, bytes.slice(i + 2, i + 2 + length)]);
    i += 2 + length;
  }
  return out;
}

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

Deno.test("a socket that does not answer the keepalive ping is closed with 1001", async () => {
  const t = await startTestApp({
    PORT: "0",
    LIVE_KEEPALIVE_SECONDS: "1",
    LIVE_CONNECTION_INIT_TIMEOUT_MS: "60000",
  }, { workers: false });
  try {
    const { port } = await t.app.start();
    const upgrade = await rawUpgrade(port);
    assert.equal(upgrade.status, 101);
    // This client never reads its pings: a ping frame, then the server's close frame.
    const got = frames(await upgrade.rest());
    assert.deepEqual(got.map(([opcode]) => opcode), [0x9, 0x8]);
    const close = got[1][1];
    assert.equal((close[0] << 8) | close[1], 1001);
    assert.equal(new TextDecoder().decode(close.slice(2)), "No response from ping frame.");
  } finally {
    await t.close();
  }
});

Deno.test("at most LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET operations at once: the next is LIVE_LIMIT_REACHED, the socket stays", async () => {
  const t = await startTestApp({ PORT: "0", LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET: "2" }, { workers: false });
  let client: WsClient | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const seeded = await seedConversation(t.app, workspaceId, agent.id);
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
    const again = await eventually(async () => {
      const outcome = await initOutcome(port, owner.token, workspaceId);
      return outcome instanceof WebSocket ? outcome : undefined;
    });
    open.push(again);
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
    const again = await eventually(async () => {
      const outcome = await initOutcome(port, owner.token, workspaceId);
      return outcome instanceof WebSocket ? outcome : undefined;
    });
    open.push(again);
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
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const seeded = await seedConversation(t.app, workspaceId, agent.id);
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
    assert.equal(live.credentials.size, 3, "three credentials checked per event");

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
