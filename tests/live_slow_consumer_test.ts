/**
 * Slow consumers: a live client that stops reading is closed once what the server holds for it
 * passes its bound (graphql-ws: bytes queued on the socket, LIVE_MAX_BUFFERED_BYTES, close 1013,
 * then its TCP connection reset after LIVE_SLOW_CONSUMER_GRACE_MS; SSE: events waiting for the
 * response, LIVE_MAX_QUEUED_EVENTS), its subscriptions end, and the other subscribers keep getting
 * every event (src/graphql/ws.ts, src/live/hub.ts).
 */
import assert from "node:assert/strict";
import type { Client as WsClient } from "graphql-ws";
import { startTestApp } from "./_helpers/app.ts";
import { addCustomerMessage, seedFeed } from "./_helpers/events.ts";
import type { App } from "../src/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import { subscribe, wsClient } from "./_helpers/live.ts";
import { rawUpgrade } from "./_helpers/sockets.ts";
import { logSink } from "./_helpers/logs.ts";
import { addressKey, readTable } from "../src/shared/tcp_peers.ts";

const CONVERSATION_EVENTS = `subscription ($agentId: ID!) {
  conversationEvents(agentId: $agentId) { type message { id content } }
}`;

/** Large enough that the kernel's socket buffers fill after a few dozen events. */
const BIG = "x".repeat(64 * 1024);
/** Events published before giving up on the server closing the slow client. */
const MAX_EVENTS = 400;

/**
 * A graphql-ws client written by hand over TCP, so that it can stop reading: the kernel's buffers
 * then fill and the server's writes queue up.
 */
async function rawGraphqlWs(port: number) {
  const socket = await rawUpgrade(port);
  assert.match(socket.head, /^HTTP\/1\.1 101/);
  return {
    sendJson: socket.sendJson,
    /** The next graphql-ws message. */
    async message() {
      const got = await socket.frame();
      assert.ok(got && got[0] === 0x1, `a text frame, not ${got?.[0]}`);
      return JSON.parse(new TextDecoder().decode(got[1]));
    },
    /**
     * Reads on until the connection ends: the `next` messages received, and the server's close
     * frame if it came before the end.
     */
    async untilEnd() {
      let nexts = 0;
      let closeFrame: { code: number; reason: string } | undefined;
      for (let got = await socket.frame(); got; got = await socket.frame()) {
        const [opcode, payload] = got;
        if (opcode === 0x1 && JSON.parse(new TextDecoder().decode(payload)).type === "next") nexts++;
        if (opcode === 0x8) {
          closeFrame = {
            code: (payload[0] << 8) | payload[1],
            reason: new TextDecoder().decode(payload.slice(2)),
          };
        }
      }
      return { nexts, closeFrame };
    },
    localAddr: socket.localAddr,
    close: socket.close,
  };
}

/** `who`'s subscription to the agent's events over a hand-written graphql-ws client (rawGraphqlWs). */
async function slowSubscriber(port: number, who: { token: string; workspaceId: string }, agentId: string) {
  const slow = await rawGraphqlWs(port);
  await slow.sendJson({
    type: "connection_init",
    payload: { authorization: `Bearer ${who.token}`, "x-workspace-id": who.workspaceId },
  });
  assert.equal((await slow.message()).type, "connection_ack");
  await slow.sendJson({
    id: "1",
    type: "subscribe",
    payload: { query: CONVERSATION_EVENTS, variables: { agentId } },
  });
  return slow;
}

type Feed = ReturnType<typeof subscribe>;
type Seeded = Awaited<ReturnType<typeof seedFeed>>["seeded"];

/**
 * Publishes BIG messages while `held()` (the slow client is still served), each received whole by
 * the reading subscriber's `feed`, up to MAX_EVENTS; how many it published.
 */
async function publishWhile(held: () => boolean, app: App, seeded: Seeded, feed: Feed): Promise<number> {
  let published = 0;
  while (held()) {
    assert.ok(published < MAX_EVENTS, `the slow client was still subscribed after ${published} events`);
    const id = await addCustomerMessage(app, seeded, BIG);
    published++;
    const got = await feed.next();
    assert.equal(got.data.conversationEvents.message.id, id);
    assert.equal(got.data.conversationEvents.message.content.length, BIG.length);
  }
  return published;
}

/** Publishes two small messages, each received by `feed`; how many it published. */
async function publishAfter(app: App, seeded: Seeded, feed: Feed): Promise<number> {
  for (const content of ["after 1", "after 2"]) {
    const id = await addCustomerMessage(app, seeded, content);
    assert.deepEqual((await feed.next()).data.conversationEvents.message, { id, content });
  }
  return 2;
}

/** Waits until the server's end of the connection from `client` to `port` is gone from the kernel's table. */
function connectionGone(port: number, client: Deno.NetAddr): Promise<true> {
  const key = addressKey(client.hostname, client.port)!;
  return eventually(() => {
    const states = new Map<string, string>();
    readTable(Deno.readTextFileSync("/proc/net/tcp"), port, states);
    return Promise.resolve(states.has(key) ? undefined : true);
  });
}

Deno.test("a graphql-ws client that stops reading is closed with 1013 once its queue passes LIVE_MAX_BUFFERED_BYTES, then its connection is reset; the others get every event", async () => {
  const sink = logSink();
  const t = await startTestApp(
    { PORT: "0", LIVE_MAX_BUFFERED_BYTES: "262144", LIVE_SLOW_CONSUMER_GRACE_MS: "50" },
    { workers: false, logger: sink.logger },
  );
  let client: WsClient | undefined;
  let slow: Awaited<ReturnType<typeof rawGraphqlWs>> | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner, agent, seeded } = await seedFeed(t);
    const live = t.app.deps.live;

    // Another owner: both share one execution, and each credential is tracked on its own.
    const other = await t.seed.member(workspaceId, "OWNER");
    slow = await slowSubscriber(port, { token: other.token, workspaceId }, agent.id);
    client = wsClient(port, { token: owner.token, workspaceId });
    const feed = subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    await eventually(() => Promise.resolve(live.shared.members === 2 || undefined));
    assert.equal(live.credentials.size, 2);

    // The slow client reads nothing more. Each event reaches the other subscriber, until the server
    // lets the slow one go.
    let published = await publishWhile(() => live.shared.members === 2, t.app, seeded, feed);
    assert.equal(live.shared.members, 1);
    assert.equal(live.credentials.size, 1, "the slow client's credential is no longer checked");
    assert.deepEqual(
      sink.lines.filter((l) => l.msg === "graphql-ws slow consumer closed").map((l) => l.level),
      ["warn"],
    );
    // The grace over, the server's end of the slow client's connection is gone from the kernel's
    // table (and with it the send buffer the client never emptied).
    await connectionGone(port, slow.localAddr);
    // The other subscriber still gets every event.
    published += await publishAfter(t.app, seeded, feed);
    // Reading again, the slow client finds what had reached it, cut short, and then the end of the
    // connection (the close frame was queued behind what it did not read).
    const ended = await slow.untilEnd();
    assert.equal(ended.closeFrame, undefined);
    assert.ok(ended.nexts > 0 && ended.nexts < published, `${ended.nexts} of ${published} events`);
    assert.deepEqual(sink.lines.filter((l) => l.level === "error"), []);
  } finally {
    slow?.close();
    await client?.dispose();
    await t.close();
  }
});

Deno.test("a graphql-ws client that stops reading and answering is closed by the keepalive with 1001 long before LIVE_MAX_BUFFERED_BYTES, then reset", async () => {
  const sink = logSink();
  const t = await startTestApp(
    {
      PORT: "0",
      LIVE_KEEPALIVE_SECONDS: "1",
      LIVE_MAX_BUFFERED_BYTES: String(256 * 2 ** 20),
      LIVE_SLOW_CONSUMER_GRACE_MS: "50",
    },
    { workers: false, logger: sink.logger },
  );
  let client: WsClient | undefined;
  let gone: Awaited<ReturnType<typeof rawGraphqlWs>> | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner, agent, seeded } = await seedFeed(t);
    const live = t.app.deps.live;
    const other = await t.seed.member(workspaceId, "OWNER");
    gone = await slowSubscriber(port, { token: other.token, workspaceId }, agent.id);
    client = wsClient(port, { token: owner.token, workspaceId });
    const feed = subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    await eventually(() => Promise.resolve(live.shared.members === 2 || undefined));

    // From now on it neither reads nor answers: once the kernel's buffers are full, what is queued
    // for it stops leaving the process, and the next keepalive window ends it.
    const published = await publishWhile(() => live.shared.members === 2, t.app, seeded, feed);
    await connectionGone(port, gone.localAddr);
    const id = await addCustomerMessage(t.app, seeded, "after");
    assert.deepEqual((await feed.next()).data.conversationEvents.message, { id, content: "after" });
    const ended = await gone.untilEnd();
    assert.ok(ended.nexts > 0 && ended.nexts < published, `${ended.nexts} of ${published} events`);
    // Not a slow consumer (far from the bound), and a client gone is no warning.
    assert.deepEqual(sink.lines.filter((l) => l.level === "warn" || l.level === "error"), []);
    assert.ok(
      sink.lines.some((l) => l.msg === "graphql-ws client took nothing and answered nothing: closed"),
    );
  } finally {
    gone?.close();
    await client?.dispose();
    await t.close();
  }
});

/** An SSE subscription over a hand-written HTTP request, so that its client can stop reading. */
async function rawSse(port: number, who: { token: string; workspaceId: string }, body: unknown) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const json = JSON.stringify(body);
  await conn.write(new TextEncoder().encode(
    `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\naccept: text/event-stream\r\n` +
      `content-type: application/json\r\nauthorization: Bearer ${who.token}\r\n` +
      `x-workspace-id: ${who.workspaceId}\r\ncontent-length: ${
        new TextEncoder().encode(json).length
      }\r\n\r\n${json}`,
  ));
  const decoder = new TextDecoder();
  let text = "";
  const read = async (): Promise<boolean> => {
    const chunk = new Uint8Array(64 * 1024);
    const n = await conn.read(chunk).catch(() => null);
    if (n === null) return false;
    text += decoder.decode(chunk.subarray(0, n), { stream: true });
    return true;
  };
  while (!text.includes("\r\n\r\n")) if (!(await read())) throw new Error("no response");
  assert.match(text, /^HTTP\/1\.1 200/);
  assert.match(text, /content-type: text\/event-stream/i);
  return {
    /** Reads on until the response ends; every SSE `data:` line of an `event: next` block, parsed. */
    async untilEnd() {
      while (!text.endsWith("0\r\n\r\n") && await read());
      const body = text.slice(text.indexOf("\r\n\r\n") + 4);
      // Chunked transfer: the chunk-size lines go; the event stream is what is left.
      const stream = body.replace(/(^|\r\n)[0-9a-f]+\r\n/g, "$1").replaceAll("\r\n", "");
      return stream.split("\n\n").filter((block) => block.startsWith("event: next")).map((block) =>
        JSON.parse(block.slice(block.indexOf("data: ") + 6))
      );
    },
    close: () => {
      try {
        conn.close();
      } catch { /* already closed */ }
    },
  };
}

Deno.test("an SSE client that stops reading is let go once LIVE_MAX_QUEUED_EVENTS wait for it; the others get every event", async () => {
  const t = await startTestApp({ PORT: "0", LIVE_MAX_QUEUED_EVENTS: "20" }, { workers: false });
  let client: WsClient | undefined;
  let slow: Awaited<ReturnType<typeof rawSse>> | undefined;
  try {
    const { port } = await t.app.start();
    const { workspaceId, owner, agent, seeded } = await seedFeed(t);
    const live = t.app.deps.live;
    const viewer = await t.seed.member(workspaceId, "VIEWER");
    slow = await rawSse(port, { token: viewer.token, workspaceId }, {
      query: CONVERSATION_EVENTS,
      variables: { agentId: agent.id },
    });
    client = wsClient(port, { token: owner.token, workspaceId });
    const feed = subscribe(client, CONVERSATION_EVENTS, { agentId: agent.id });
    // One live stream for the SSE response, one for the graphql-ws execution.
    await eventually(() => Promise.resolve(live.subscribers === 2 || undefined));
    assert.equal(live.credentials.size, 2);

    let published = await publishWhile(() => live.subscribers === 2, t.app, seeded, feed);
    assert.equal(live.subscribers, 1);
    assert.equal(live.credentials.size, 1, "the slow client's credential is no longer checked");
    published += await publishAfter(t.app, seeded, feed);
    // Reading again, the slow client finds the events it was sent, then why it was let go.
    const results = await slow.untilEnd();
    const last = results.at(-1);
    assert.equal(last.errors?.[0]?.extensions?.code, "LIVE_LIMIT_REACHED");
    assert.equal(
      last.errors[0].message,
      "Slow consumer: more than 20 events waited for this subscription; subscribe again.",
    );
    const delivered = results.slice(0, -1);
    assert.ok(delivered.length > 0 && delivered.length < published, `${delivered.length} of ${published}`);
    for (const result of delivered) assert.equal(result.data.conversationEvents.message.content, BIG);
  } finally {
    slow?.close();
    await client?.dispose();
    await t.close();
  }
});
