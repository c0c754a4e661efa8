/**
 * Scale-out (docs/operations.md): three real server processes on one database. First two HTTP-only
 * (PROCESS_ROLE=http) and one workers-only, then all three with both; one is killed with SIGKILL in
 * the middle of a burst of signed WhatsApp posts and restarted. Counted from outside (the receivers
 * and live clients see what the processes really did): every event webhook delivered, every
 * customer message stored once and answered by exactly one model call, every reply sent once,
 * every reminder, auto-close and approval expiry done once, every live event seen by the
 * subscribers of each HTTP process once.
 */
import assert from "node:assert/strict";
import type { Client as WsClient } from "graphql-ws";
import { startTestApp } from "./_helpers/app.ts";
import { type ServerProcess, startServerProcess } from "./_helpers/server_process.ts";
import { type Call, eventually, startReceiver } from "./_helpers/receiver.ts";
import { lastUserMessage, startGraph, startModelServer } from "./_helpers/conversations.ts";
import { APP_SECRET, textMessage, VERIFY_TOKEN } from "./_helpers/whatsapp.ts";
import { type Result, wsClient } from "./_helpers/live.ts";
import { publish } from "./_helpers/events.ts";
import { hubSignature } from "../src/channels/whatsapp/signature.ts";
import { publishApprovalEvent } from "../src/approvals/events.ts";
import { REMINDER_TEXT } from "../src/conversations/timers.ts";

const OWNER = { email: "owner@scale.test", password: "correct horse battery" };
const PHASE1_CONTACTS = 6;
const PHASE2_CONTACTS = 12;
/** Tokens like [p1c3m2] in every customer text: which messages a model call answered. */
const TOKEN = /\[(p\dc\d+m\d)\]/g;

interface Api {
  url: string;
  // deno-lint-ignore no-explicit-any
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; type: string }>;
}

function api(url: string, token?: string, workspaceId?: string): Api {
  return {
    url,
    async call(method, path, body) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (token) headers.authorization = `Bearer ${token}`;
      if (workspaceId) headers["x-workspace-id"] = workspaceId;
      const res = await fetch(`${url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return {
        status: res.status,
        type: res.headers.get("content-type") ?? "",
        body: text ? JSON.parse(text) : null,
      };
    },
  };
}

/** A live feed of one graphql-ws subscription, collected in the background. */
function collect(client: WsClient, query: string, variables: Record<string, unknown>) {
  const results: Result[] = [];
  const iterator = client.iterate({ query, variables })[Symbol.asyncIterator]();
  const done = (async () => {
    for (;;) {
      const r = await iterator.next().catch((error) => ({ done: true, value: { errors: [String(error)] } }));
      if (r.done) return;
      results.push(r.value as Result);
    }
  })();
  return { results, stop: async () => (await iterator.return?.(), await done) };
}

const CONVERSATION_EVENTS = `subscription($agentId: ID!) {
  conversationEvents(agentId: $agentId) { type conversation { id } message { id sender content } } }`;
const APPROVAL_EVENTS = `subscription { approvalEvents { type approval { id status } } }`;

type Feed = ReturnType<typeof collect>;

/** One process' live clients: conversation events of both agents, approval events. */
function liveOn(port: number, who: { token: string; workspaceId: string }, agents: string[]) {
  const client = wsClient(port, who);
  const feeds = {
    approvals: collect(client, APPROVAL_EVENTS, {}),
    ...Object.fromEntries(agents.map((a) => [a, collect(client, CONVERSATION_EVENTS, { agentId: a })])),
  } as Record<string, Feed>;
  return {
    feeds,
    async close() {
      for (const f of Object.values(feeds)) await f.stop();
      await client.dispose();
    },
  };
}

Deno.test("three processes on one database, roles switched and one killed mid-burst: every webhook, reply, timer and live event exactly once", async () => {
  const startedAt = performance.now();
  // This process only seeds, reads the database and publishes the live probes; it runs no workers.
  const t = await startTestApp({}, { workers: false });
  const model = startModelServer((call, index) => {
    const answered = [...lastUserMessage(call).matchAll(TOKEN)].map((m) => m[1]);
    return { content: `Answer ${index} to ${answered.join(" ")}` };
  });
  const graph = startGraph();
  const hooks = startReceiver();
  const servers = new Set<ServerProcess>();
  const lives: Array<{ close(): Promise<void> }> = [];
  const env = (role: string) => ({
    PROCESS_ROLE: role,
    OPENAI_API_KEY: "scale-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    // Longer than the burst before the kill: no reply is under way when the process dies.
    GROUPING_FAST_MS: "3000",
    LLM_TIMEOUT_MS: "20000",
    DATABASE_POOL_SIZE: "8",
    BOOTSTRAP_OWNER_EMAIL: OWNER.email,
    BOOTSTRAP_OWNER_PASSWORD: OWNER.password,
  });
  const start = async (role: string) => {
    // Generous: three processes start at once on two loaded cores.
    const s = await startServerProcess(t.db.url, env(role), { readyTimeoutMs: 180_000 });
    servers.add(s);
    return s;
  };
  const stderr = () => [...servers].map((s) => `--- ${s.url}\n${s.stderr()}`).join("\n");
  const db = t.app.deps.db;
  try {
    // Started together on a database without users: each applies migrations and bootstraps, one owner results.
    const [a, b, c] = await Promise.all([start("http"), start("http"), start("workers")]);
    assert.equal(await db.user.count(), 1);
    const boot = Math.round(performance.now() - startedAt);

    // The workers-only process answers its health probe and nothing else.
    const health = await api(c.url).call("GET", "/healthz");
    assert.deepEqual([health.status, health.body], [200, { status: "ok", role: "workers" }]);
    for (
      const [method, path] of [["GET", "/api/agents"], ["POST", "/graphql"], ["POST", "/webhooks/whatsapp/x"]]
    ) {
      const res = await api(c.url).call(method, path, method === "POST" ? {} : undefined);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.type, "application/problem+json");
      assert.equal(res.body.code, "NOT_FOUND");
    }

    const login = await api(a.url).call("POST", "/api/auth/login", OWNER);
    assert.equal(login.status, 200);
    const who = { token: login.body.token as string, workspaceId: login.body.workspaces[0].id as string };
    const onA = api(a.url, who.token, who.workspaceId);
    const created = async (res: Promise<{ status: number; body: { id: string } }>) => {
      const r = await res;
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body;
    };
    const flags = {
      messageGroupingTime: "FAST",
      splitMessages: false,
      signMessages: false,
      enabledEmoji: false,
    };
    // Agent 1: timers due within the test (reminder 30 s after a reply, auto-close 60 s after it).
    const agent1 = await created(onA.call("POST", "/api/agents", {
      name: "Ana",
      jobName: "Acme",
      ...flags,
      autoCloseMinutes: 1,
      enabledReminder: true,
    }));
    // Agent 2 (the burst): no timer comes due during the test.
    const agent2 = await created(onA.call("POST", "/api/agents", {
      name: "Bruno",
      jobName: "Acme",
      ...flags,
      autoCloseMinutes: 600,
      enabledReminder: false,
    }));
    const channels: Record<string, { id: string; phoneNumberId: string }> = {};
    for (const [n, agent] of [[1, agent1], [2, agent2]] as const) {
      const phoneNumberId = `77${n}${Date.now()}`.slice(0, 15);
      const channel = await created(onA.call("POST", `/api/agents/${agent.id}/channels`, {
        type: "WHATSAPP",
        label: `Line ${n}`,
        config: {
          phoneNumberId,
          accessToken: "scale-token",
          appSecret: APP_SECRET,
          verifyToken: VERIFY_TOKEN,
        },
      }));
      channels[agent.id] = { id: channel.id, phoneNumberId };
      for (
        const event of ["message.received", "message.sent", "conversation.opened", "conversation.closed"]
      ) {
        await created(onA.call("POST", `/api/agents/${agent.id}/webhooks`, { event, url: hooks.url() }));
      }
    }

    // Live clients on each HTTP process; a probe conversation and approval prove them subscribed.
    const contact = await db.contact.create({
      data: { workspaceId: who.workspaceId, externalId: "probe", name: "Probe" },
    });
    const probeConversation = await db.conversation.create({
      data: {
        workspaceId: who.workspaceId,
        agentId: agent1.id,
        channelId: channels[agent1.id].id,
        contactId: contact.id,
      },
    });
    const probeApproval = await db.pendingApproval.create({
      data: {
        workspaceId: who.workspaceId,
        tool: "update_agent_prompt",
        targetType: "AGENT",
        rationale: "probe",
        expiresAt: new Date(Date.now() + 86_400_000),
      },
    });
    const subscribeOn = async (servers: ServerProcess[]) => {
      const live = servers.map((s) => liveOn(s.port, who, [agent1.id, agent2.id]));
      lives.push(...live);
      const feeds = live.flatMap((l) => Object.entries(l.feeds));
      await eventually(async () => {
        await publish(t.app, {
          type: "conversation.released",
          workspaceId: who.workspaceId,
          agentId: agent1.id,
          conversationId: probeConversation.id,
          data: {},
        });
        await db.$transaction((tx) =>
          publishApprovalEvent(t.app.deps, tx, "approval.created", {
            id: probeApproval.id,
            workspaceId: who.workspaceId,
            agentId: null,
          })
        );
        await new Promise((r) => setTimeout(r, 200));
        // Agent 2's feed is proven by agent 1's on the same socket, subscribed just before it.
        return feeds.every(([key, f]) => key === agent2.id || f.results.length > 0) || undefined;
      }, 30_000);
      // Every event that happens from now on must reach each of these subscribers.
      return { live, confirmedAt: new Date() };
    };
    const { live: phase1Live } = await subscribeOn([a, b]);

    // Signed posts, as Meta sends them; a post refused or cut off is sent again to the next process.
    const wamid = (token: string) => `wamid.${token}`;
    const accepted = new Map<string, string>();
    const post = async (
      targets: () => ServerProcess[],
      start: number,
      agentId: string,
      from: string,
      token: string,
    ) => {
      const raw = JSON.stringify(
        textMessage(channels[agentId].phoneNumberId, wamid(token), `hi [${token}]`, from),
      );
      for (let attempt = start;; attempt++) {
        const alive = targets();
        const target = alive[attempt % alive.length];
        try {
          const res = await fetch(`${target.url}/webhooks/whatsapp/${channels[agentId].id}`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "x-hub-signature-256": hubSignature(raw, APP_SECRET),
            },
            body: raw,
          });
          await res.body?.cancel();
          if (res.status === 200) {
            accepted.set(token, target.url);
            return;
          }
          assert.fail(`post ${token}: ${res.status}`);
        } catch (error) {
          if (error instanceof assert.AssertionError) throw error;
          // The process is gone: Meta retries later, here at once on another one.
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const phone = (phase: number, n: number) => `55119${phase}${String(n).padStart(6, "0")}`;

    // Phase 1: HTTP-only a and b accept; c's workers store, answer and deliver.
    const phase1: Array<Promise<void>> = [];
    for (let n = 0; n < PHASE1_CONTACTS; n++) {
      for (let m = 1; m <= 2; m++) {
        phase1.push(post(() => [a, b], n + m, agent1.id, phone(1, n), `p1c${n}m${m}`));
      }
    }
    await Promise.all(phase1);
    const answeredAll = (prefix: string, count: number) =>
      eventually(async () => {
        const left = await db.message.count({
          where: { senderKind: "CUSTOMER", externalId: { startsWith: `wamid.${prefix}` }, answeredAt: null },
        });
        const stored = await db.message.count({
          where: { senderKind: "CUSTOMER", externalId: { startsWith: `wamid.${prefix}` } },
        });
        const unsent = await db.message.count({
          where: { senderKind: "AI", status: { notIn: ["SENT", "DELIVERED", "READ"] } },
        });
        return (stored === count && left === 0 && unsent === 0) || undefined;
      }, 90_000).catch((e) => {
        throw new Error(`${e.message}\n${stderr()}`);
      });
    await answeredAll("p1", PHASE1_CONTACTS * 2);
    const phase1Done = Math.round(performance.now() - startedAt);
    console.log("phase 1 answered after", phase1Done, "ms; booted after", boot);
    // What a and b's subscribers saw by now: every event of phase 1's conversations.
    const phase1Conversations = await db.conversation.findMany({
      where: { agentId: agent1.id, id: { not: probeConversation.id } },
    });
    assert.equal(phase1Conversations.length, PHASE1_CONTACTS);
    /** The live events of the agent's conversations, each with when it happened (stored). */
    const eventsAt = async (agentId: string): Promise<Array<[string, Date]>> => {
      const convs = await db.conversation.findMany({
        where: { agentId, id: { not: probeConversation.id } },
        include: { messages: true },
      });
      return convs.flatMap((conv): Array<[string, Date]> => [
        [`OPENED ${conv.id}`, conv.openedAt],
        ...conv.messages.map((m): [string, Date] => [`MESSAGE_ADDED ${conv.id} ${m.id}`, m.createdAt]),
        // A reply or reminder, PENDING until its send's outcome (SENT, or UNCONFIRMED after a kill).
        ...conv.messages.filter((m) => m.direction === "OUTBOUND" && m.status !== "PENDING").map((
          m,
        ): [string, Date] => [`MESSAGE_UPDATED ${conv.id} ${m.id}`, m.updatedAt]),
        ...(conv.status === "CLOSED" ? [[`CLOSED ${conv.id}`, conv.closedAt!] as [string, Date]] : []),
      ]);
    };
    const expectedEvents = async (agentId: string) => (await eventsAt(agentId)).map(([e]) => e).sort();
    const seen = (feed: Feed) =>
      feed.results.flatMap((r) => {
        const e = r.data?.conversationEvents;
        if (!e) return [`ERROR ${JSON.stringify(r.errors)}`];
        if (e.conversation.id === probeConversation.id) return [];
        return [[e.type, e.conversation.id, e.message?.id].filter(Boolean).join(" ")];
      }).sort();
    const phase1Expected = await expectedEvents(agent1.id);
    assert.equal(
      phase1Expected.length,
      PHASE1_CONTACTS * 3 +
        2 * (await db.message.count({ where: { senderKind: "AI", conversation: { agentId: agent1.id } } })),
      "OPENED, two customer messages and each reply's MESSAGE_ADDED and MESSAGE_UPDATED (SENT)",
    );
    for (const live of phase1Live) {
      await eventually(
        () => Promise.resolve(seen(live.feeds[agent1.id]).length >= phase1Expected.length || undefined),
        15_000,
      );
      assert.deepEqual(seen(live.feeds[agent1.id]), phase1Expected);
      assert.deepEqual(seen(live.feeds[agent2.id]), []);
    }

    // Phase 2: all three run workers. a and b are restarted with both (SIGTERM, a clean stop)
    // while phase 1's timers are pending; c keeps running its workers only.
    for (const live of phase1Live) await live.close();
    const stopping = performance.now();
    await Promise.all([a, b].map((s) => s.stop()));
    const stopMs = Math.round(performance.now() - stopping);
    for (const s of [a, b]) servers.delete(s);
    const [a2, b2] = await Promise.all([start("all"), start("all")]);
    const startMs = Math.round(performance.now() - stopping) - stopMs;
    const { live: [liveA2, liveB2], confirmedAt: phase2From } = await subscribeOn([a2, b2]);
    // An approval made old once a2 and b2 have subscribers: expired by the per-minute sweep of
    // whichever process takes its job.
    const oldApproval = await db.pendingApproval.create({
      data: {
        workspaceId: who.workspaceId,
        tool: "update_agent_prompt",
        targetType: "AGENT",
        agentId: agent1.id,
        rationale: "old",
        expiresAt: new Date(Date.now() - 25 * 3600_000),
      },
    });

    const restarted = Math.round(performance.now() - startedAt);

    // The burst: two messages per contact across a2 and b2 (c takes no posts); b2 dies with
    // SIGKILL once it has accepted some, its posts accepted but not yet stored or answered.
    let killedAt = 0;
    const alive = () => killedAt ? [a2] : [a2, b2];
    const burst: Array<Promise<void>> = [];
    for (let n = 0; n < PHASE2_CONTACTS; n++) {
      for (let m = 1; m <= 2; m++) {
        burst.push(post(alive, n + m, agent2.id, phone(2, n), `p2c${n}m${m}`));
      }
    }
    await eventually(
      () => Promise.resolve([...accepted.values()].filter((u) => u === b2.url).length >= 4 || undefined),
      30_000,
    );
    b2.child.kill("SIGKILL");
    killedAt = performance.now();
    const killedAtDate = new Date();
    assert.equal((await b2.child.status).signal, "SIGKILL");
    const acceptedByKilled = [...accepted].filter(([, u]) => u === b2.url).map(([token]) => token);
    await Promise.all(burst);
    servers.delete(b2);
    // Restarted (its posts' backstop jobs are not due yet), with a subscriber again.
    const b3 = await start("all");
    const { live: [liveB3], confirmedAt: b3From } = await subscribeOn([b3]);
    await answeredAll("p2", PHASE2_CONTACTS * 2);
    const phase2Done = Math.round(performance.now() - startedAt);
    console.log("phase 2 answered after", phase2Done, "ms; killed after", Math.round(killedAt - startedAt));

    // Phase 1's timers and the approval's expiry, whichever processes ran them.
    await eventually(
      async () =>
        (await db.conversation.count({ where: { agentId: agent1.id, status: "CLOSED" } })) ===
              PHASE1_CONTACTS &&
          (await db.pendingApproval.findUnique({ where: { id: oldApproval.id } }))?.status === "EXPIRED" ||
        undefined,
      120_000,
    ).catch(async (e) => {
      const closedNow = await db.conversation.count({ where: { agentId: agent1.id, status: "CLOSED" } });
      const approval = await db.pendingApproval.findUnique({ where: { id: oldApproval.id } });
      const jobs = await db.$queryRawUnsafe(
        `SELECT name, state, count(*)::int AS n, min(start_after) AS first, max(start_after) AS last
           FROM pgboss.job WHERE name IN ('conversation-timer', 'approval-expiry') GROUP BY 1, 2`,
      );
      throw new Error(
        `${e.message}: ${closedNow} closed, approval ${approval?.status}, now ${new Date().toISOString()}, ` +
          `jobs ${JSON.stringify(jobs)}\n${stderr()}`,
      );
    });
    const timersDone = Math.round(performance.now() - startedAt);

    // Every customer message stored once, answered by exactly one model call.
    const customer = await db.message.findMany({
      where: { senderKind: "CUSTOMER", externalId: { not: null } },
    });
    const tokens = [...accepted.keys()].sort();
    assert.equal(tokens.length, (PHASE1_CONTACTS + PHASE2_CONTACTS) * 2);
    assert.deepEqual(customer.map((m) => m.externalId!.slice("wamid.".length)).sort(), tokens);
    const answeredBy = new Map<string, number>();
    for (const call of model.calls) {
      for (const [, token] of lastUserMessage(call).matchAll(TOKEN)) {
        answeredBy.set(token, (answeredBy.get(token) ?? 0) + 1);
      }
    }
    assert.deepEqual([...answeredBy.keys()].sort(), tokens);
    assert.deepEqual([...new Set(answeredBy.values())], [1], "a message answered by two model calls");

    // Every reply stored once and sent once; every phase 1 conversation reminded once, closed once.
    const ai = await db.message.findMany({
      where: { senderKind: "AI" },
      include: { conversation: { include: { contact: true } } },
    });
    const replies = ai.filter((m) => m.content !== REMINDER_TEXT);
    const reminders = ai.filter((m) => m.content === REMINDER_TEXT);
    assert.equal(replies.length, model.calls.length);
    assert.deepEqual(
      replies.map((m) => m.content.split(" ")[1]).sort(),
      model.calls.map((_, i) => String(i)).sort(),
    );
    assert.deepEqual(
      reminders.map((m) => m.conversation.contact.externalId).sort(),
      Array.from({ length: PHASE1_CONTACTS }, (_, n) => phone(1, n)).sort(),
    );
    // Sent once each; only a send the killed process had in flight may have gone out twice.
    const sends = new Map<string, Call[]>();
    for (const call of graph.calls) {
      const body = JSON.parse(call.body);
      const key = `${body.to} ${body.text.body}`;
      sends.set(key, [...sends.get(key) ?? [], call]);
    }
    assert.deepEqual(
      [...sends.keys()].sort(),
      ai.map((m) => `${m.conversation.contact.externalId} ${m.content}`).sort(),
      "Graph sends",
    );
    const sentTwice = [...sends].filter(([, calls]) => calls.length > 1);
    for (const [key, calls] of sentTwice) {
      assert.equal(calls.length, 2, `"${key}" sent ${calls.length} times`);
      assert.ok(calls[0].at < killedAt, `"${key}" sent twice without a kill in between`);
    }
    const closed = await db.domainEvent.findMany({ where: { type: "conversation.closed" } });
    assert.deepEqual(closed.map((e) => e.conversationId).sort(), phase1Conversations.map((c) => c.id).sort());

    // Every event delivered to its webhook once (by webhook-id); the killed process may have had
    // attempts in flight: those, and only those, may arrive twice (at least once, same id).
    await eventually(
      async () =>
        (await db.webhookDelivery.count({ where: { status: { not: "SUCCEEDED" } } })) === 0 || undefined,
      30_000,
    );
    const events = await db.domainEvent.findMany({
      where: {
        type: { in: ["message.received", "message.sent", "conversation.opened", "conversation.closed"] },
      },
    });
    const received = new Map<string, Call[]>();
    for (const call of hooks.calls) {
      const id = call.headers.get("webhook-id")!;
      received.set(id, [...received.get(id) ?? [], call]);
    }
    assert.deepEqual([...received.keys()].sort(), events.map((e) => e.id).sort());
    const twice = [...received].filter(([, calls]) => calls.length > 1);
    for (const [id, calls] of twice) {
      assert.equal(calls.length, 2, `event ${id} delivered ${calls.length} times`);
      assert.ok(calls[0].at < killedAt, `event ${id} delivered twice without a kill in between`);
    }

    // Live, phase 2: each subscriber saw every event that happened while it was in place (from its
    // probe on; for b2's, which died with it, until the kill), once; nothing else, nothing twice.
    const timerEvents = (await expectedEvents(agent1.id)).filter((e) => !phase1Expected.includes(e));
    assert.equal(
      timerEvents.length,
      PHASE1_CONTACTS * 3,
      "a reminder (added, then SENT) and a CLOSED per phase 1 conversation",
    );
    const all1 = await eventsAt(agent1.id);
    const all2 = await eventsAt(agent2.id);
    const within = (events: Array<[string, Date]>, from: Date, until?: Date) =>
      events.filter(([, at]) => at >= from && (!until || at < until)).map(([e]) => e).sort();
    // The burst came after a2 and b2 subscribed: a2 saw all of it, its recovery included.
    assert.deepEqual(within(all2, phase2From), all2.map(([e]) => e).sort());
    const seenLive: Record<string, number> = {};
    for (
      const [name, live, from, until] of [
        ["a2", liveA2, phase2From, undefined],
        ["b2", liveB2, phase2From, killedAtDate],
        ["b3", liveB3, b3From, undefined],
      ] as const
    ) {
      const mustSee = [...within(all1, from, until), ...within(all2, from, until)];
      const got = () => [...seen(live.feeds[agent1.id]), ...seen(live.feeds[agent2.id])];
      // b2's subscriber is gone: what it saw is final (events just before the kill may be missing).
      if (name !== "b2") {
        await eventually(() => Promise.resolve(mustSee.every((e) => got().includes(e)) || undefined), 15_000)
          .catch(() => assert.fail(`${name} missed ${mustSee.filter((e) => !got().includes(e))}`));
      }
      assert.deepEqual(got(), [...new Set(got())], `${name}: a live event seen twice`);
      assert.ok(seen(live.feeds[agent1.id]).every((e) => timerEvents.includes(e)), `${name}: not a timer's`);
      assert.ok(seen(live.feeds[agent2.id]).every((e) => all2.some(([k]) => k === e)), `${name}: unknown`);
      seenLive[name] = got().length;
      const approvals = live.feeds.approvals.results.map((r) => r.data?.approvalEvents)
        .filter((e) => e?.approval.id !== probeApproval.id);
      const expired = { type: "EXPIRED", approval: { id: oldApproval.id, status: "EXPIRED" } };
      // The approval expired while a2's subscriber was in place; b3's came later or earlier.
      if (name === "a2") assert.deepEqual(approvals, [expired]);
      else {assert.ok(
          approvals.length <= 1 && approvals.every((e) => JSON.stringify(e) === JSON.stringify(expired)),
        );}
    }

    console.log(JSON.stringify({
      boot,
      phase1Done,
      restarted,
      stopMs,
      startMs,
      killedAfterMs: Math.round(killedAt - startedAt),
      acceptedByKilled: acceptedByKilled.length,
      phase2Done,
      timersDone,
      modelCalls: model.calls.length,
      graphSends: graph.calls.length,
      webhookCalls: hooks.calls.length,
      deliveredTwice: twice.length,
      sentTwice: sentTwice.length,
      seenLive,
      totalMs: Math.round(performance.now() - startedAt),
    }));
  } finally {
    for (const live of lives) await live.close().catch(() => {});
    await Promise.all([...servers].map((s) => s.stop()));
    await hooks.close();
    await graph.close();
    await model.close();
    await t.close();
  }
});
