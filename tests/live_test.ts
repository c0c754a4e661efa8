/**
 * Live feeds: GraphQL subscriptions over graphql-ws and SSE on /graphql, fed
 * by LISTEN/NOTIFY so an event committed through one server process reaches the subscribers of
 * another. Events are published with the bus directly, after inserting the rows they name.
 *
 * One app serves the cases, each in a workspace of its own; a case ends with its clients closed and
 * the app's live state empty again (no subscriber, shared member or tracked credential), so the
 * counts a case reads are its own. Stopping the app is a test apart.
 */
import assert from "node:assert/strict";
import type { Client as WsClient } from "graphql-ws";
import { createPrisma } from "../src/db/client.ts";
import { authenticateActor } from "../src/auth/authenticate.ts";
import type { App } from "../src/app.ts";
import { type SeededUser, startTestApp, type TestApp } from "./_helpers/app.ts";
import { publish, seedConversation, seedFeed, storeCustomerMessage } from "./_helpers/events.ts";
import { eventually } from "./_helpers/receiver.ts";
import {
  members,
  secondApp,
  sseEvents,
  sseSubscribe,
  subscribe,
  subscribed,
  unsubscribed,
  wsClient,
} from "./_helpers/live.ts";

const CONVERSATION_EVENTS = `subscription ($agentId: ID!) {
  conversationEvents(agentId: $agentId) { type conversation { id status } message { id content sender } }
}`;

/** The close event of a raw graphql-ws socket after `connection_init` with `payload`. */
async function closeCodeAfterInit(port: number, payload: unknown): Promise<number> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, "graphql-transport-ws");
  const closed = new Promise<number>((resolve) => socket.onclose = (e) => resolve(e.code));
  await new Promise((resolve) => socket.onopen = resolve);
  socket.send(JSON.stringify({ type: "connection_init", payload }));
  return await closed;
}

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

/** Waits until `app` serves no subscription, shares no execution and tracks no credential. */
async function quiet(app: App): Promise<void> {
  const live = app.deps.live;
  const busy = () =>
    [["subscribers", live.subscribers], ["shared members", live.shared.members], [
      "credentials",
      live.credentials.size,
    ]].filter(([, n]) => n !== 0);
  await eventually(() => Promise.resolve(busy().length === 0 || undefined)).catch(() => {
    throw new Error(`the app is still busy: ${JSON.stringify(busy())}`);
  });
}

/**
 * What ends a credential's standing, each tried on a feed of its own beside one that stays: the
 * answer its feed ends with.
 */
const CREDENTIAL_CHANGES: Array<{
  what: string;
  role: "AGENT" | "VIEWER";
  change: (t: TestApp, who: SeededUser, workspaceId: string) => Promise<unknown>;
  refused: { code: string } | { message: string };
}> = [
  {
    what: "a logout",
    role: "AGENT",
    change: async (_t, who) => assert.equal((await who.client.post("/api/auth/logout")).status, 204),
    refused: { code: "UNAUTHENTICATED" },
  },
  {
    what: "a removed membership",
    role: "VIEWER",
    change: (t, who, workspaceId) =>
      t.app.deps.db.membership.deleteMany({ where: { userId: who.userId, workspaceId } }),
    refused: { code: "FORBIDDEN" },
  },
  {
    what: "a changed role",
    role: "VIEWER",
    change: (t, who, workspaceId) =>
      t.app.deps.db.membership.updateMany({
        where: { userId: who.userId, workspaceId },
        data: { role: "MANAGER" },
      }),
    refused: { message: "Your role in this workspace changed; subscribe again." },
  },
  {
    // The session row now ends 300 ms from now (its JWT would still pass for hours).
    what: "an expired session",
    role: "VIEWER",
    change: (t, who) =>
      t.app.deps.db.$executeRaw`
        UPDATE "Session" SET "expiresAt" = now() + interval '300 milliseconds'
         WHERE "userId" = ${who.userId}`,
    refused: { code: "UNAUTHENTICATED" },
  },
];

Deno.test("live feeds", async (t) => {
  const ta = await startTestApp({ PORT: "0" }, { workers: false });
  const clients: WsClient[] = [];
  const { port } = await ta.app.start();
  const connect = (who: { token: string }, workspaceId: string, at = port) => {
    const client = wsClient(at, { token: who.token, workspaceId });
    clients.push(client);
    return client;
  };
  /** One feed of CONVERSATION_EVENTS for each of `who`. */
  const feedsOf = (who: Array<{ token: string }>, workspaceId: string, agentId: string, at = port) =>
    who.map((w) => subscribe(connect(w, workspaceId, at), CONVERSATION_EVENTS, { agentId }));
  /**
   * A case: its clients are closed at its end, and the app is quiet before the next. After one that
   * left the app busy, the others fail at once (their counts would not be their own).
   */
  let busy: unknown;
  const step = (name: string, fn: () => Promise<void>) =>
    t.step(name, async () => {
      if (busy) throw new Error(`not run: an earlier case left the app busy (${busy})`);
      try {
        await fn();
      } finally {
        for (const client of clients.splice(0)) await client.dispose();
        await quiet(ta.app).catch((e) => {
          busy = e;
          throw e;
        });
      }
    });
  try {
    await step(
      "a subscriber on one process receives an event committed through another, and nothing of a rollback",
      async () => {
        const b = await secondApp(ta);
        try {
          const { workspaceId, agent, seeded } = await seedFeed(ta);
          const viewer = await ta.seed.member(workspaceId, "VIEWER");
          const [sub] = feedsOf([viewer], workspaceId, agent.id);
          await subscribed(ta.app, 1);

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
          await ta.app.deps.db.conversation.update({
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
          await unsubscribed(ta.app);
        } finally {
          await b.stop();
        }
      },
    );

    await step(
      "connection_init refuses bad credentials with 4401 and a foreign workspace with 4403",
      async () => {
        const w1 = await ta.seed.workspace("One");
        const w2 = await ta.seed.workspace("Two");
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
        const member = await ta.seed.member(w1.workspaceId, "VIEWER");
        assert.equal((await member.client.post("/api/auth/logout")).status, 204);
        assert.equal(
          await closeCodeAfterInit(port, {
            authorization: `Bearer ${member.token}`,
            "x-workspace-id": w1.workspaceId,
          }),
          4401,
        );
      },
    );

    await step(
      "a subscriber of another workspace gets nothing, and a foreign agent or conversation is NOT_FOUND",
      async () => {
        const w1 = await ta.seed.workspace("One");
        const w2 = await ta.seed.workspace("Two");
        const agent1 = await ta.seed.agent(w1.owner.client);
        const agent2 = await ta.seed.agent(w2.owner.client);
        const conv1 = await seedConversation(ta.app, w1.workspaceId, agent1.id);
        const conv2 = await seedConversation(ta.app, w2.workspaceId, agent2.id);
        const viewer2 = await ta.seed.member(w2.workspaceId, "VIEWER");
        const client = connect(viewer2, w2.workspaceId);

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
        await subscribed(ta.app, 2);
        // W1's event first, then W2's: W2's subscribers see only their own.
        await publish(ta.app, (await storeCustomerMessage(ta.app, conv1, "for W1 only")).event);
        const mine = await storeCustomerMessage(ta.app, conv2, "for W2");
        await publish(ta.app, mine.event);
        assert.equal((await feed.next()).data.conversationEvents.message.content, "for W2");
        assert.deepEqual((await messages.next()).data, { messageAdded: { id: mine.id, content: "for W2" } });
      },
    );

    await step("a subscription answers exactly its selection, read for each subscriber", async () => {
      const { workspaceId, agent, seeded } = await seedFeed(ta);
      const member = await ta.seed.member(workspaceId, "AGENT");
      const sub = subscribe(
        connect(member, workspaceId),
        `subscription ($agentId: ID!) {
          conversationEvents(agentId: $agentId) {
            kind: type
            conversation { status who: contact { name } channel { label } __typename }
          }
        }`,
        { agentId: agent.id },
      );
      await subscribed(ta.app, 1);
      await publish(ta.app, {
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
    });

    await step("subscription documents obey the document limits", async () => {
      const { workspaceId, owner } = await ta.seed.workspace();
      const agent = await ta.seed.agent(owner.client);
      const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(" ");
      const query = `subscription ($agentId: ID!) { conversationEvents(agentId: $agentId) { ${aliases} } }`;
      await assert.rejects(
        subscribe(connect(owner, workspaceId), query, { agentId: agent.id }).next(),
        // graphql-ws rejects the iterator with the error messages the server sent.
        (errors: unknown) => {
          const list = errors as Array<{ extensions?: { code?: string } }>;
          assert.equal(list[0].extensions?.code, "QUERY_TOO_COMPLEX");
          return true;
        },
      );
      assert.equal(ta.app.deps.live.subscribers, 0);
    });

    await step("SSE (graphql-sse distinct connections) delivers the same event", async () => {
      const b = await secondApp(ta);
      let events: ReturnType<typeof sseEvents> | undefined;
      try {
        const { workspaceId, seeded } = await seedFeed(ta);
        const viewer = { token: (await ta.seed.member(workspaceId, "VIEWER")).token, workspaceId };
        const res = await sseSubscribe(
          port,
          viewer,
          `subscription ($id: ID!) { messageAdded(conversationId: $id) { id content sender } }`,
          { id: seeded.conversation.id },
        );
        assert.equal(res.status, 200);
        assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
        events = sseEvents(res.body!);
        await subscribed(ta.app, 1);
        const added = await storeCustomerMessage(b, seeded, "via SSE");
        await publish(b, added.event);
        const next = await events.next();
        assert.equal(next.event, "next");
        assert.deepEqual(JSON.parse(next.data), {
          data: { messageAdded: { id: added.id, content: "via SSE", sender: "CUSTOMER" } },
        });

        // Refused at subscribe: one `next` with the error, then `complete`.
        const refused = await sseSubscribe(
          port,
          viewer,
          `subscription { messageAdded(conversationId: "nope") { id } }`,
        );
        const refusedEvents = sseEvents(refused.body!);
        const error = await refusedEvents.next();
        assert.equal(error.event, "next");
        assert.equal(JSON.parse(error.data).errors[0].extensions.code, "NOT_FOUND");
        assert.equal((await refusedEvents.next()).event, "complete");
      } finally {
        await events?.cancel();
        await unsubscribed(ta.app);
        await b.stop();
      }
    });

    // Each change on a feed of its own, all at once, beside a feed that stays; on the process that
    // serves the feeds, and on another one where only PostgreSQL's announcement tells it.
    for (const where of ["this process", "another process"] as const) {
      const whats = CREDENTIAL_CHANGES.map((c) => c.what).join(", ");
      await step(`${whats} end graphql-ws feeds served by ${where} at once, without an event`, async () => {
        const b = where === "another process" ? await secondApp(ta) : undefined;
        try {
          const server = b ?? ta.app;
          const at = b ? (await b.start()).port : port;
          const { workspaceId, agent, seeded } = await seedFeed(ta);
          const changed = [];
          for (const c of CREDENTIAL_CHANGES) changed.push(await ta.seed.member(workspaceId, c.role));
          const staying = await ta.seed.member(workspaceId, "VIEWER");
          const feeds = feedsOf([...changed, staying], workspaceId, agent.id, at);
          await members(server, feeds.length);
          assert.equal(server.deps.live.subscribers, 2, "one execution per role: AGENT, VIEWER");
          for (const [i, c] of CREDENTIAL_CHANGES.entries()) await c.change(ta, changed[i], workspaceId);

          const refusals = await within(Promise.all(changed.map((_, i) => feeds[i].next())), "refusals");
          for (const [i, c] of CREDENTIAL_CHANGES.entries()) {
            const error = refusals[i].errors?.[0];
            if ("code" in c.refused) assert.equal(error?.extensions.code, c.refused.code, c.what);
            else assert.equal(error?.message, c.refused.message, c.what);
            await feeds[i].ended();
          }
          assert.equal(server.deps.live.shared.members, 1);
          // The clients close their sockets once nothing is subscribed: their credentials are let go.
          await eventually(() =>
            Promise.resolve(
              server.deps.live.credentials.size === 1 && server.deps.live.subscribers === 1 || undefined,
            )
          );
          const added = await storeCustomerMessage(ta.app, seeded, "after");
          await publish(ta.app, added.event);
          assert.equal((await feeds.at(-1)!.next()).data.conversationEvents.message.id, added.id);
        } finally {
          for (const client of clients.splice(0)) await client.dispose();
          await b?.stop();
        }
      });
    }

    await step(
      "a credential revoked before it was tracked is refused by the read that follows, before the next event",
      async () => {
        const { workspaceId } = await ta.seed.workspace();
        const member = await ta.seed.member(workspaceId, "VIEWER");
        const deps = ta.app.deps;
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
      },
    );

    await step(
      "subscribers with one role and one selection share one read per event, and no credential is read per event",
      async () => {
        const statements: string[] = [];
        const b = await secondApp(ta, {
          db: createPrisma(ta.db.url, { onQuery: (sql) => statements.push(sql) }),
        });
        try {
          const { port: at } = await b.start();
          const { workspaceId, agent, seeded } = await seedFeed(ta);
          const viewers = await Promise.all([1, 2, 3].map(() => ta.seed.member(workspaceId, "VIEWER")));
          const feeds = feedsOf(viewers, workspaceId, agent.id, at);
          await members(b, 3);
          assert.equal(b.deps.live.subscribers, 1, "one execution for the three viewers");
          // The three credentials were read once more when they were tracked; events wait for that.
          const first = await storeCustomerMessage(ta.app, seeded, "first");
          await publish(ta.app, first.event);
          for (const feed of feeds) {
            assert.equal((await feed.next()).data.conversationEvents.message.id, first.id);
          }
          statements.length = 0;
          for (const content of ["shared 1", "shared 2"]) {
            const added = await storeCustomerMessage(ta.app, seeded, content);
            await publish(ta.app, added.event);
            for (const feed of feeds) {
              assert.equal((await feed.next()).data.conversationEvents.message.id, added.id);
            }
          }
          // One read per row (conversation, message) and event; no credential is read again.
          assert.equal(statements.length, 4, statements.join("\n"));
          assert.deepEqual(statements.filter((sql) => /"Session"|"ApiToken"|"Membership"/.test(sql)), []);
        } finally {
          for (const client of clients.splice(0)) await client.dispose();
          await b.stop();
        }
      },
    );

    await step("the LISTEN connection is reopened after it is lost, and later events arrive", async () => {
      const listeners = async () =>
        (await ta.app.deps.db.$queryRaw<Array<{ pid: number }>>`
          SELECT pid FROM pg_stat_activity
           WHERE datname = current_database() AND query = 'LISTEN switchboard_live'`).map((r) => r.pid);
      const { workspaceId, owner, agent, seeded } = await seedFeed(ta);
      const [feed] = feedsOf([owner], workspaceId, agent.id);
      await subscribed(ta.app, 1);

      const [before] = await listeners();
      assert.ok(before, "one LISTEN connection");
      await ta.app.deps.db.$queryRaw`SELECT pg_terminate_backend(${before}::int)`;
      await eventually(async () => {
        const now = await listeners();
        return now.length === 1 && now[0] !== before || undefined;
      });
      const added = await storeCustomerMessage(ta.app, seeded, "after the reconnect");
      await publish(ta.app, added.event);
      assert.equal((await feed.next()).data.conversationEvents.message.id, added.id);
    });

    await step(
      "conversation.released is a STATUS_CHANGED for subscribers and nothing for webhooks",
      async () => {
        const { workspaceId, owner, agent, seeded } = await seedFeed(ta);
        const [feed] = feedsOf([owner], workspaceId, agent.id);
        await subscribed(ta.app, 1);
        const id = await publish(ta.app, {
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
        assert.equal(await ta.app.deps.db.domainEvent.count({ where: { id } }), 0, "not stored for webhooks");
      },
    );

    await step(
      "identical subscriptions of one credential share one execution, until the last one leaves",
      async () => {
        const { workspaceId, owner, agent, seeded } = await seedFeed(ta);
        const feeds = feedsOf([owner, owner, owner], workspaceId, agent.id);
        const live = ta.app.deps.live;
        await eventually(() => Promise.resolve(live.shared.members === 3 || undefined));
        assert.equal(live.subscribers, 1, "one execution, one live stream");

        const first = await storeCustomerMessage(ta.app, seeded, "to all three");
        await publish(ta.app, first.event);
        for (const feed of feeds) {
          assert.equal((await feed.next()).data.conversationEvents.message.id, first.id);
        }

        // One leaves: the others keep the shared execution.
        await feeds[0].stop();
        await eventually(() => Promise.resolve(live.shared.members === 2 || undefined));
        const second = await storeCustomerMessage(ta.app, seeded, "to two");
        await publish(ta.app, second.event);
        for (const feed of feeds.slice(1)) {
          assert.equal((await feed.next()).data.conversationEvents.message.id, second.id);
        }
        await feeds[1].stop();
        await feeds[2].stop();
        await unsubscribed(ta.app);
        assert.equal(live.shared.members, 0);
      },
    );

    await t.step(
      "queries also run over graphql-ws; a subscription over plain JSON HTTP is a 4xx",
      async () => {
        if (busy) throw new Error(`not run: an earlier case left the app busy (${busy})`);
        const { workspaceId, owner } = await ta.seed.workspace();
        const agent = await ta.seed.agent(owner.client);
        const read = await subscribe(
          connect(owner, workspaceId),
          `query ($id: ID!) { agent(id: $id) { id name } }`,
          { id: agent.id },
        ).next();
        assert.deepEqual(read, { data: { agent: { id: agent.id, name: "Ana" } } });

        const res = await owner.client.post(
          "/graphql",
          { query: CONVERSATION_EVENTS, variables: { agentId: agent.id } },
          { accept: "application/json" },
        );
        assert.equal(res.status, 406, JSON.stringify(res.body));
        // Its live stream, opened by the execution, is closed with the refusal: nothing stays.
        await unsubscribed(ta.app);
        assert.equal(ta.app.deps.live.credentials.size, 0);
      },
    );
  } finally {
    for (const client of clients) await client.dispose();
    await ta.close();
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
    const res = await sseSubscribe(port, { token: owner.token, workspaceId }, CONVERSATION_EVENTS, {
      agentId: agent.id,
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
