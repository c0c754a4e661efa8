/**
 * Event webhook delivery (docs/behaviour.md "Event webhooks and outbound calls"): payload and headers, routing by
 * event type, transactional enqueue, isolation of slow receivers, the delivery log's permissions,
 * two instances on one database, and fireIntent's ordering. Retries: webhook_retries_test.ts.
 */
import assert from "node:assert/strict";
import { buildApp } from "../src/app.ts";
import { createPrisma } from "../src/db/client.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { fireIntent } from "../src/intents/mod.ts";
import { runDeliveryAttempt } from "../src/webhooks/delivery.ts";
import { WEBHOOK_CONCURRENCY } from "../src/jobs/workers/webhook_delivery.ts";
import { startTestApp, type TestApp, testConfig } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { assertProblem } from "./_helpers/problem.ts";
import { publish, seedConversation } from "./_helpers/events.ts";
import { eventually, sha256HexOf, startReceiver, verifyStandardWebhook } from "./_helpers/receiver.ts";

async function delivered(t: TestApp, deliveryId: string) {
  return await eventually(async () => {
    const d = await t.app.deps.db.webhookDelivery.findUnique({
      where: { id: deliveryId },
      include: { attempts: true },
    });
    return d && d.status !== "PENDING" ? d : undefined;
  });
}

async function jobsInQueue(t: TestApp): Promise<number> {
  const [row] = await t.app.deps.db.$queryRawUnsafe<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook-delivery'`,
  );
  return row.n;
}

Deno.test("POST .../test sends a signed webhook.test with the exact payload and headers, and logs it", async () => {
  // Whole seconds plus 123 ms: the payload's timestamp and webhook-timestamp are both exact.
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000 + 123));
  const t = await startTestApp({}, { clock });
  const receiver = startReceiver();
  try {
    const { owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { name: "Ana" });
    const created = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.sent",
      url: receiver.url("/events?src=sb"),
      method: "PUT",
      headers: { "X-Api-Key": "k-123", "X-Tenant": "acme" },
    });
    assert.equal(created.status, 201);
    const { id: webhookId, signingSecret } = created.body;
    assert.match(signingSecret, /^whsec_[A-Za-z0-9+/]+=*$/);

    const res = await owner.client.post(`/api/agents/${agent.id}/webhooks/${webhookId}/test`);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.event, "webhook.test");
    assert.equal(res.body.status, "PENDING");
    assert.equal(res.body.attemptCount, 0);
    assert.deepEqual(res.body.attempts, []);

    const [call] = await receiver.waitForCalls(1);
    assert.equal(call.method, "PUT");
    assert.equal(call.path, "/events");
    assert.equal(
      call.body,
      JSON.stringify({
        event: "webhook.test",
        timestamp: clock.now().toISOString(),
        agent: { id: agent.id, name: "Ana" },
        conversation: null,
        data: {
          message: "Test event sent from Switchboard.",
          webhook: { id: webhookId, event: "message.sent" },
        },
      }),
    );
    assert.match(JSON.parse(call.body).timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const h = call.headers;
    assert.equal(h.get("content-type"), "application/json");
    assert.equal(h.get("x-api-key"), "k-123");
    assert.equal(h.get("x-tenant"), "acme");
    assert.equal(h.get("webhook-id"), res.body.eventId);
    assert.equal(h.get("x-idempotency-key"), await sha256HexOf(res.body.eventId));
    assert.equal(h.get("x-idempotency-key"), res.body.idempotencyKey);
    assert.equal(h.get("webhook-timestamp"), String(Math.floor(clock.now().getTime() / 1000)));
    assert.match(h.get("webhook-signature") ?? "", /^v1,[A-Za-z0-9+/]+=*$/);
    assert.ok(await verifyStandardWebhook(signingSecret, h, call.body), "signature verifies");
    assert.equal(
      await verifyStandardWebhook(signingSecret, h, call.body + " "),
      false,
      "a changed body does not",
    );

    await delivered(t, res.body.id);
    const log = await owner.client.get(`/api/agents/${agent.id}/webhooks/${webhookId}/deliveries`);
    assert.equal(log.status, 200);
    assert.equal(log.body.nextCursor, null);
    assert.equal(log.body.data.length, 1);
    const [entry] = log.body.data;
    assert.equal(entry.id, res.body.id);
    assert.equal(entry.event, "webhook.test");
    assert.equal(entry.status, "SUCCEEDED");
    assert.equal(entry.attemptCount, 1);
    assert.equal(entry.idempotencyKey, await sha256HexOf(res.body.eventId));
    assert.equal(entry.attempts.length, 1);
    const [attempt] = entry.attempts;
    assert.deepEqual({ ...attempt, durationMs: 0 }, {
      number: 1,
      startedAt: clock.now().toISOString(),
      durationMs: 0,
      httpStatus: 200,
      error: null,
    });
    assert.ok(Number.isInteger(attempt.durationMs) && attempt.durationMs >= 0);
    const webhook = await owner.client.get(`/api/agents/${agent.id}/webhooks/${webhookId}`);
    assert.equal(webhook.body.lastError, null);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("a published event goes to the agent's webhooks for its type only, with its conversation", async () => {
  const t = await startTestApp();
  const receiver = startReceiver();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { name: "Ana" });
    const other = await t.seed.agent(owner.client, { name: "Bia" });
    const hook = (agentId: string, event: string, path: string) =>
      owner.client.post(`/api/agents/${agentId}/webhooks`, { event, url: receiver.url(path) });
    const sent = (await hook(agent.id, "message.sent", "/sent")).body;
    const sent2 = (await hook(agent.id, "message.sent", "/sent-too")).body;
    const received = (await hook(agent.id, "message.received", "/received")).body;
    const otherSent = (await hook(other.id, "message.sent", "/other")).body;
    const { contact, conversation } = await seedConversation(t.app, workspaceId, agent.id);

    const data = {
      message: { id: "m1", type: "TEXT", content: "Olá!", createdAt: "2026-01-01T00:00:00.000Z" },
      sender: "AI",
    };
    const eventId = await publish(t.app, {
      type: "message.sent",
      workspaceId,
      agentId: agent.id,
      conversationId: conversation.id,
      data,
    });
    const calls = await receiver.waitForCalls(2);
    assert.deepEqual(calls.map((c) => c.path).sort(), ["/sent", "/sent-too"]);
    for (const call of calls) {
      const body = JSON.parse(call.body);
      assert.deepEqual(Object.keys(body), ["event", "timestamp", "agent", "conversation", "data"]);
      assert.equal(body.event, "message.sent");
      assert.deepEqual(body.agent, { id: agent.id, name: "Ana" });
      assert.deepEqual(body.conversation, {
        id: conversation.id,
        contactName: "Maria Silva",
        contactId: contact.externalId,
        channel: { type: "WHATSAPP", label: "Sales line" },
      });
      assert.deepEqual(body.data, data);
      assert.equal(call.headers.get("webhook-id"), eventId);
      // One key per event, the same for each of its webhooks.
      assert.equal(call.headers.get("x-idempotency-key"), await sha256HexOf(eventId));
    }
    assert.ok(
      await verifyStandardWebhook(
        sent.signingSecret,
        calls.find((c) => c.path === "/sent")!.headers,
        calls.find((c) => c.path === "/sent")!.body,
      ),
    );
    assert.ok(
      await verifyStandardWebhook(
        sent2.signingSecret,
        calls.find((c) => c.path === "/sent-too")!.headers,
        calls.find((c) => c.path === "/sent-too")!.body,
      ),
    );

    const db = t.app.deps.db;
    const deliveries = await db.webhookDelivery.findMany({ where: { eventId } });
    assert.deepEqual(deliveries.map((d) => d.webhookId).sort(), [sent.id, sent2.id].sort());
    assert.equal(
      await db.webhookDelivery.count({ where: { webhookId: { in: [received.id, otherSent.id] } } }),
      0,
    );
    const stored = await db.domainEvent.findUniqueOrThrow({ where: { id: eventId } });
    assert.equal(stored.type, "message.sent");
    assert.equal(stored.conversationId, conversation.id);
    for (const d of deliveries) await delivered(t, d.id);
    assert.equal(receiver.calls.length, 2);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("an event published in a transaction that rolls back sends nothing", async () => {
  const t = await startTestApp();
  const receiver = startReceiver();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "conversation.closed",
      url: receiver.url(),
    });
    const { conversation } = await seedConversation(t.app, workspaceId, agent.id);
    const db = t.app.deps.db;
    const event = {
      type: "conversation.closed" as const,
      workspaceId,
      agentId: agent.id,
      conversationId: conversation.id,
      data: { reason: "MANUAL" },
    };

    await assert.rejects(
      db.$transaction(async (tx) => {
        await tx.conversation.update({ where: { id: conversation.id }, data: { status: "CLOSED" } });
        await t.app.deps.events.publish(tx, event);
        throw new Error("the change fails after publishing");
      }),
      /the change fails/,
    );
    assert.equal(await db.domainEvent.count(), 0);
    assert.equal(await db.webhookDelivery.count(), 0);
    assert.equal(await jobsInQueue(t), 0, "no job was left in pg-boss");

    const committed = await publish(t.app, event);
    const [call] = await receiver.waitForCalls(1);
    assert.equal(call.headers.get("webhook-id"), committed);
    const [d] = await db.webhookDelivery.findMany();
    await delivered(t, d.id);
    assert.equal(receiver.calls.length, 1);
    assert.equal(await db.domainEvent.count(), 1);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("a receiver that hangs does not hold up deliveries to another receiver", async () => {
  const t = await startTestApp();
  const slow = startReceiver(() => "hang");
  const fast = startReceiver();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.received",
      url: slow.url(),
    });
    await owner.client.post(`/api/agents/${agent.id}/webhooks`, { event: "message.sent", url: fast.url() });
    // More hanging calls than the workers' batches hold at once (2 x 16), and than the webhook's
    // cap of attempts in flight: the ones beyond it wait (deferred) until a slot frees.
    const hanging = WEBHOOK_CONCURRENCY + 8;
    await Promise.all(
      Array.from(
        { length: hanging },
        (_, i) =>
          publish(t.app, { type: "message.received", workspaceId, agentId: agent.id, data: { n: i } }),
      ),
    );
    await slow.waitForCalls(WEBHOOK_CONCURRENCY, 4000);
    const t0 = performance.now();
    await publish(t.app, { type: "message.sent", workspaceId, agentId: agent.id, data: {} });
    const [call] = await fast.waitForCalls(1);
    assert.ok(call.at - t0 < 1000, `the fast receiver waited ${Math.round(call.at - t0)} ms`);
    assert.equal(slow.calls.length, WEBHOOK_CONCURRENCY);
    slow.release();
    await eventually(async () =>
      (await t.app.deps.db.webhookDelivery.count({ where: { status: "SUCCEEDED" } })) === hanging + 1 ||
      undefined
    );
    assert.equal(
      await t.app.deps.db.deliveryAttempt.count(),
      hanging + 1,
      "the hanging calls were answered, not retried",
    );
  } finally {
    await slow.close();
    await fast.close();
    await t.close();
  }
});

Deno.test("the delivery log, test and redeliver: roles, workspaces, pagination, 409 on a delivery not FAILED", async () => {
  const t = await startTestApp();
  const receiver = startReceiver();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const hook = (await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.sent",
      url: receiver.url(),
    })).body;
    const base = `/api/agents/${agent.id}/webhooks/${hook.id}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await owner.client.post(`${base}/test`)).body.id);
    for (const id of ids) await delivered(t, id);

    const viewer = await t.seed.member(workspaceId, "VIEWER");
    const agentRole = await t.seed.member(workspaceId, "AGENT");
    const page1 = await viewer.client.get(`${base}/deliveries?limit=2`);
    assert.equal(page1.status, 200);
    assert.deepEqual(page1.body.data.map((d: { id: string }) => d.id), [ids[2], ids[1]]);
    assert.ok(page1.body.nextCursor);
    const page2 = await viewer.client.get(`${base}/deliveries?limit=2&cursor=${page1.body.nextCursor}`);
    assert.deepEqual(page2.body.data.map((d: { id: string }) => d.id), [ids[0]]);
    assert.equal(page2.body.nextCursor, null);
    const one = await agentRole.client.get(`${base}/deliveries/${ids[0]}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.status, "SUCCEEDED");

    assertProblem(await viewer.client.post(`${base}/test`), 403, "FORBIDDEN");
    assertProblem(await agentRole.client.post(`${base}/test`), 403, "FORBIDDEN");
    assertProblem(await agentRole.client.post(`${base}/deliveries/${ids[0]}/redeliver`), 403, "FORBIDDEN");
    assertProblem(
      await owner.client.post(`${base}/deliveries/${ids[0]}/redeliver`),
      409,
      "DELIVERY_NOT_FAILED",
    );
    assertProblem(await owner.client.post(`${base}/deliveries/nope/redeliver`), 404, "NOT_FOUND");
    assertProblem(await owner.client.get(`${base}/deliveries/nope`), 404, "NOT_FOUND");

    const stranger = await t.seed.workspace("Other");
    assertProblem(await stranger.owner.client.get(`${base}/deliveries`), 404, "NOT_FOUND");
    assertProblem(await stranger.owner.client.post(`${base}/test`), 404, "NOT_FOUND");
    assertProblem(
      await stranger.owner.client.post(`${base}/deliveries/${ids[0]}/redeliver`),
      404,
      "NOT_FOUND",
    );
    assert.equal(receiver.calls.length, 3);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("two app instances on one database make each attempt once", async () => {
  const t = await startTestApp({}, { workers: false });
  const counts = [0, 0];
  const counting = (i: number) =>
    createPrisma(t.db.url, {
      onQuery: (sql) => sql.includes(`INSERT INTO "DeliveryAttempt"`) && counts[i]++,
    });
  const config = testConfig(t.db.url);
  const instances = [
    await buildApp(config, { logger: silentLogger, bootstrap: false, db: counting(0) }),
    await buildApp(config, { logger: silentLogger, bootstrap: false, db: counting(1) }),
  ];
  // Each call takes a moment, so both instances have work in hand at once.
  const receiver = startReceiver(async () => {
    await new Promise((r) => setTimeout(r, 20));
    return new Response("ok");
  });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.received",
      url: receiver.url(),
    });
    const n = 60;
    const events = await Promise.all(
      Array.from(
        { length: n },
        (_, i) =>
          publish(t.app, { type: "message.received", workspaceId, agentId: agent.id, data: { n: i } }),
      ),
    );
    await receiver.waitForCalls(n);
    await eventually(async () =>
      (await t.app.deps.db.webhookDelivery.count({ where: { status: "SUCCEEDED" } })) === n || undefined
    );
    const ids = receiver.calls.map((c) => c.headers.get("webhook-id"));
    assert.equal(receiver.calls.length, n, "each event was sent once");
    assert.deepEqual([...new Set(ids)].sort(), [...events].sort());
    assert.equal(await t.app.deps.db.deliveryAttempt.count(), n);
    // Statements that record attempts (a batch's successes share one), per instance.
    assert.ok(counts[0] > 0 && counts[1] > 0, `both instances worked: ${counts}`);
  } finally {
    await receiver.close();
    for (const app of instances) await app.stop();
    await t.close();
  }
});

Deno.test("fireIntent() returns after the first attempt of intent.fired was made", async () => {
  const t = await startTestApp();
  const receiver = startReceiver(async () => {
    await new Promise((r) => setTimeout(r, 200));
    return new Response("ok");
  });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "intent.fired",
      url: receiver.url(),
    });
    const { conversation } = await seedConversation(t.app, workspaceId, agent.id);
    const eventId = await fireIntent(t.app.deps, {
      workspaceId,
      agentId: agent.id,
      conversationId: conversation.id,
      intentName: "agendar-visita",
      fields: { date: "2026-05-01" },
    });
    // Had the caller called the intent's webhook now, the event would already have been answered.
    assert.equal(receiver.calls.length, 1);
    const body = JSON.parse(receiver.calls[0].body);
    assert.equal(body.event, "intent.fired");
    assert.deepEqual(body.data, { intentName: "agendar-visita", fields: { date: "2026-05-01" } });
    const d = await t.app.deps.db.webhookDelivery.findFirstOrThrow({ where: { eventId } });
    assert.equal(d.status, "SUCCEEDED");

    // With no webhook for intent.fired, it returns at once.
    await owner.client.delete(`/api/agents/${agent.id}/webhooks/${d.webhookId}`);
    const t0 = performance.now();
    await fireIntent(t.app.deps, {
      workspaceId,
      agentId: agent.id,
      conversationId: conversation.id,
      intentName: "x",
      fields: {},
    });
    assert.ok(performance.now() - t0 < 1000);
    assert.equal(receiver.calls.length, 1);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("an attempt made twice at once (a job retried while it still ran) is recorded once", async () => {
  const t = await startTestApp({}, { workers: false });
  // Each call is held until both have arrived, or until one run ends without calling: the two
  // attempts overlap however loaded the machine is.
  const receiver = startReceiver((_call, index) => {
    if (index === 1) receiver.release();
    return "hang";
  });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.sent",
      url: receiver.url(),
    });
    await publish(t.app, { type: "message.sent", workspaceId, agentId: agent.id, data: {} });
    const d = await t.app.deps.db.webhookDelivery.findFirstOrThrow();
    const job = { deliveryId: d.id, attempt: 1 };
    const run = () => runDeliveryAttempt(t.app.deps, job).finally(() => receiver.release());
    const results = await Promise.all([run(), run()]);
    assert.deepEqual(results.sort(), ["skipped", "succeeded"]);
    assert.equal(
      receiver.calls.length,
      2,
      "both sent: delivery is at least once, and the key lets the receiver tell",
    );
    assert.equal(await t.app.deps.db.deliveryAttempt.count(), 1);
    assert.equal(await runDeliveryAttempt(t.app.deps, job), "skipped", "a later retry does not send again");
    assert.equal(receiver.calls.length, 2);
  } finally {
    await receiver.close();
    await t.close();
  }
});
