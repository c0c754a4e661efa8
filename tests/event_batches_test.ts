/**
 * Event batches (src/shared/events.ts): one transaction publishing several events sends the webhook
 * and live listeners' writes as ONE statement (the delivery jobs' insert and pg-boss's NOTIFY
 * included); every event is stored with its deliveries and their jobs and notified, in the batch's
 * order; and a failing check rolls the whole batch back, jobs and NOTIFY included.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { createPrisma } from "../src/db/client.ts";
import { sqlTransaction } from "../src/db/transaction.ts";
import type { DomainEvent } from "../src/shared/events.ts";
import { idempotencyKeyOf } from "../src/webhooks/listener.ts";
import { LIVE_CHANNEL } from "../src/live/hub.ts";
import { startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { seedConversation } from "./_helpers/events.ts";
import { startReceiver } from "./_helpers/receiver.ts";

/**
 * The notifications of the live channel (JSON payloads, parsed), or of `other` channel with `other`
 * payload, in arrival order; `until(n)` resolves once n have come.
 */
async function listen(url: string, other?: { channel: string; payload: string }) {
  const client = new pg.Client({ connectionString: url });
  const channel = other?.channel ?? LIVE_CHANNEL;
  const seen: Array<Record<string, unknown>> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  client.on("notification", (n) => {
    if (n.channel !== channel || !n.payload) return;
    if (other && n.payload !== other.payload) return;
    seen.push(other ? { payload: n.payload } : JSON.parse(n.payload));
    for (const w of waiters.filter((w) => seen.length >= w.n)) w.resolve();
  });
  await client.connect();
  await client.query(`LISTEN ${channel}`);
  return {
    seen,
    until: (n: number) =>
      seen.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
    close: () => client.end(),
  };
}

Deno.test("a batch of 3 events: one statement for webhooks and live; stored with their deliveries and notified, in order; a failed check rolls it all back", async () => {
  // A clock that stands still: the bus puts the events of a batch 1 ms apart itself.
  const clock = new ManualClock(new Date(Date.UTC(2026, 0, 1, 12)));
  const t = await startTestApp({}, { workers: false, clock });
  // The app's bus and listeners, in transactions of a client that counts what it sends.
  const statements: string[] = [];
  const counted = createPrisma(t.db.url, { onQuery: (sql) => statements.push(sql) });
  const live = await listen(t.db.url);
  const receiver = startReceiver();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { name: "Ana" });
    const { contact, conversation } = await seedConversation(t.app, workspaceId, agent.id);
    const hooks: Record<string, string> = {};
    for (const event of ["conversation.opened", "message.sent", "human.transferred"]) {
      const reply = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
        event,
        url: receiver.url(),
      });
      assert.equal(reply.status, 201);
      hooks[event] = reply.body.id;
    }
    const base = { workspaceId, agentId: agent.id, conversationId: conversation.id };
    const message = { id: "m1", type: "TEXT", content: "Olá!", createdAt: "2026-01-01T00:00:00.000Z" };
    const events: DomainEvent[] = [
      { ...base, type: "conversation.opened", data: {} },
      { ...base, type: "message.sent", data: { message, sender: "AI" } },
      {
        ...base,
        type: "human.transferred",
        data: { transferSummary: "wants a person", reason: "USER_REQUEST" },
      },
    ];

    // Published in one transaction: one statement, the delivery jobs' insert included.
    const made: string[] = [];
    const ids = await counted.$transaction(async (tx) => {
      const before = statements.length;
      const ids = await t.app.deps.events.publishAll(tx, events);
      made.push(...statements.slice(before));
      return ids;
    });
    assert.equal(made.length, 1, made.join("\n---\n"));
    assert.match(made[0], /INSERT INTO "DomainEvent"/);
    assert.match(made[0], /INSERT INTO "WebhookDelivery"/);
    assert.match(made[0], /INSERT INTO pgboss\.job/);
    assert.match(made[0], /pg_notify/);

    // Stored in order, with the payloads receivers get.
    const stored = await t.app.deps.db.domainEvent.findMany({
      where: { conversationId: conversation.id },
      orderBy: { createdAt: "asc" },
      include: { deliveries: true },
    });
    assert.deepEqual(stored.map((e) => e.id), ids);
    for (const [i, e] of stored.entries()) {
      const at = new Date(clock.now().getTime() + i);
      assert.equal(e.createdAt.getTime(), at.getTime());
      assert.deepEqual(e.payload, {
        event: events[i].type,
        timestamp: at.toISOString(),
        agent: { id: agent.id, name: "Ana" },
        conversation: {
          id: conversation.id,
          contactName: "Maria Silva",
          contactId: contact.externalId,
          channel: { type: "WHATSAPP", label: "Sales line" },
        },
        data: events[i].data,
      });
      // One delivery each, to the webhook of its type, keyed by the event.
      assert.equal(e.deliveries.length, 1);
      assert.equal(e.deliveries[0].webhookId, hooks[events[i].type]);
      assert.equal(e.deliveries[0].idempotencyKey, idempotencyKeyOf(e.id));
      assert.equal(e.deliveries[0].status, "PENDING");
    }
    // Attempt 1 of each delivery, enqueued with them.
    const jobs = await t.app.deps.db.$queryRawUnsafe<
      Array<{ data: { deliveryId: string; attempt: number } }>
    >(
      `SELECT data FROM pgboss.job WHERE name = 'webhook-delivery' ORDER BY created_on, id`,
    );
    assert.deepEqual(
      new Set(jobs.map((j) => j.data.deliveryId)),
      new Set(stored.map((e) => e.deliveries[0].id)),
    );
    assert.deepEqual(jobs.map((j) => j.data.attempt), [1, 1, 1]);

    // Notified once each, in order, ids only.
    await live.until(3);
    assert.deepEqual(
      live.seen,
      ids.map((id, i) => ({
        id,
        type: events[i].type,
        ...base,
        messageId: i === 1 ? "m1" : null,
        approvalId: null,
      })),
    );

    // An unknown conversation in the middle of a batch: the whole batch rolls back.
    statements.length = 0;
    const doomed = [
      { ...base, type: "conversation.opened" as const, data: {} },
      { ...base, conversationId: "no-such-conversation", type: "message.sent" as const, data: { message } },
      { ...base, type: "human.transferred" as const, data: {} },
    ];
    await assert.rejects(
      counted.$transaction((tx) => t.app.deps.events.publishAll(tx, doomed)),
      /publish message\.sent: conversation no-such-conversation of agent .* not found/,
    );
    assert.equal(await t.app.deps.db.domainEvent.count(), 3);
    assert.equal(await t.app.deps.db.webhookDelivery.count(), 3);
    const [{ n }] = await t.app.deps.db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook-delivery'`,
    );
    assert.equal(n, 3);
    // Nothing notified: the next committed event is the next notification.
    const [marker] = await counted.$transaction((tx) =>
      t.app.deps.events.publishAll(tx, [{ ...base, type: "conversation.closed", data: { reason: "MANUAL" } }])
    );
    await live.until(4);
    assert.deepEqual(live.seen.map((e) => e.id), [...ids, marker]);
  } finally {
    await receiver.close();
    await live.close();
    await counted.$disconnect();
    await t.close();
  }
});

Deno.test("a batch with no webhook to deliver to costs one statement; an empty batch none", async () => {
  const t = await startTestApp({}, { workers: false });
  const statements: string[] = [];
  const counted = createPrisma(t.db.url, { onQuery: (sql) => statements.push(sql) });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const { conversation } = await seedConversation(t.app, workspaceId, agent.id);
    const base = { workspaceId, agentId: agent.id, conversationId: conversation.id };
    const made: string[][] = [];
    await counted.$transaction(async (tx) => {
      for (const events of [[], [{ ...base, type: "conversation.opened" as const, data: {} }]]) {
        const before = statements.length;
        await t.app.deps.events.publishAll(tx, events);
        made.push(statements.slice(before));
      }
    });
    assert.deepEqual(made.map((m) => m.length), [0, 1]);
    assert.match(made[1][0], /INSERT INTO "DomainEvent"[\s\S]*pg_notify/);
    assert.equal(await t.app.deps.db.domainEvent.count(), 1);
  } finally {
    await counted.$disconnect();
    await t.close();
  }
});

Deno.test("the first attempts' jobs are inserted by the event's statement: one per delivery, pg-boss's NOTIFY on commit, none of it on rollback", async () => {
  const t = await startTestApp({}, { workers: false });
  const statements: string[] = [];
  const counted = createPrisma(t.db.url, { onQuery: (sql) => statements.push(sql) });
  const [{ channel }] = await t.app.deps.db.$queryRawUnsafe<Array<{ channel: string }>>(
    `SELECT 'pgboss_' || left(encode(sha224('pgboss'::bytea), 'hex'), 24) AS channel`,
  );
  // pg-boss's NOTIFY that wakes the delivery workers.
  const boss = await listen(t.db.url, { channel, payload: "webhook-delivery" });
  const receiver = startReceiver();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const { conversation } = await seedConversation(t.app, workspaceId, agent.id);
    const hooks: string[] = [];
    for (const event of ["message.sent", "message.sent", "conversation.opened"]) {
      const reply = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
        event,
        url: receiver.url(),
      });
      assert.equal(reply.status, 201);
      hooks.push(reply.body.id);
    }
    const base = { workspaceId, agentId: agent.id, conversationId: conversation.id };
    // Sent messages: a received one would also start the reply window (more jobs).
    const message = (id: string) => ({
      ...base,
      type: "message.sent" as const,
      data: {
        message: { id, type: "TEXT", content: "oi", createdAt: "2026-01-01T00:00:00.000Z" },
        sender: "AI",
      },
    });
    const deliveryJobs = () =>
      t.app.deps.db.$queryRawUnsafe<Array<{ data: Record<string, unknown>; state: string; due: boolean }>>(
        `SELECT data, state::text, start_after <= now() AS due FROM pgboss.job WHERE name = 'webhook-delivery'`,
      );

    // On the fast path's transaction: BEGIN goes with the one statement, then COMMIT.
    const publish = async (events: DomainEvent[]) => {
      statements.length = 0;
      await sqlTransaction(counted, (tx) => t.app.deps.events.publishAll(tx, events));
      return [...statements];
    };
    const first = await publish([{ ...base, type: "conversation.opened", data: {} }, message("m1")]);
    assert.equal(first.length, 2, first.join("\n---\n"));
    assert.match(first[0], /^BEGIN;[\s\S]*INSERT INTO "WebhookDelivery"[\s\S]*INSERT INTO pgboss\.job/);
    assert.match(first[1], /^COMMIT/);
    const deliveries = await t.app.deps.db.webhookDelivery.findMany();
    assert.equal(deliveries.length, 3);
    const jobs = await deliveryJobs();
    assert.deepEqual(
      jobs.map((j) => j.data).sort((a, b) => String(a.deliveryId).localeCompare(String(b.deliveryId))),
      deliveries.map((d) => ({ deliveryId: d.id, attempt: 1, webhookId: d.webhookId }))
        .sort((a, b) => a.deliveryId.localeCompare(b.deliveryId)),
    );
    assert.deepEqual(jobs.map((j) => [j.state, j.due]), Array(3).fill(["created", true]));
    await boss.until(1);

    // The same text for the next batch of the same shape (prepared once per connection).
    const second = await publish([{ ...base, type: "conversation.opened", data: {} }, message("m2")]);
    assert.equal(second[0], first[0]);
    assert.equal((await deliveryJobs()).length, 6);
    await boss.until(2);

    // Rolled back after the statement: no event, delivery, job or NOTIFY left of it.
    await assert.rejects(
      sqlTransaction(counted, async (tx) => {
        await t.app.deps.events.publishAll(tx, [message("m3")]);
        throw new Error("the caller fails later");
      }),
      /the caller fails later/,
    );
    assert.equal(await t.app.deps.db.domainEvent.count(), 4);
    assert.equal(await t.app.deps.db.webhookDelivery.count(), 6);
    assert.equal((await deliveryJobs()).length, 6);
    // Notifications arrive in commit order: once the next commit's has come, none came between.
    await publish([message("m4")]);
    await boss.until(3);
    assert.equal(boss.seen.length, 3);
    assert.equal((await deliveryJobs()).length, 8);
  } finally {
    await receiver.close();
    await boss.close();
    await counted.$disconnect();
    await t.close();
  }
});
