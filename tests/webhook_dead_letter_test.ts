/**
 * No delivery stays PENDING forever: a delivery job that pg-boss gives
 * up on goes to the dead letter, whose worker ends the delivery as FAILED with the reason in
 * `lastError`; a delivery whose job was lost is ended by the stale sweep.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { publish } from "./_helpers/events.ts";
import { eventually, startReceiver } from "./_helpers/receiver.ts";
import type { Jobs } from "../src/jobs/boss.ts";
import { webhookWorkOptions } from "../src/jobs/workers/webhook_delivery.ts";
import {
  deadLetterReason,
  startWebhookDeadLetterWorker,
  WEBHOOK_DEAD_LETTER_QUEUE,
} from "../src/jobs/workers/webhook_dead_letter.ts";
import { WEBHOOK_DELIVERY_QUEUE } from "../src/webhooks/delivery.ts";
import { STALE_AFTER_MS, sweepStaleDeliveries } from "../src/webhooks/abandon.ts";

Deno.test("a delivery job that fails every run ends in the dead letter: the delivery is FAILED and lastError says why", async () => {
  // No delivery worker: this test runs its own, whose handler always throws (as a crash would).
  const t = await startTestApp({}, { workers: false });
  const receiver = startReceiver();
  try {
    const jobs = t.app.deps.jobs as Jobs;
    const queue = await jobs.boss.getQueue(WEBHOOK_DELIVERY_QUEUE);
    assert.equal(queue?.deadLetter, WEBHOOK_DEAD_LETTER_QUEUE);
    assert.equal(queue?.retryLimit, 10);
    assert.equal(
      deadLetterReason(11),
      "abandoned: the delivery job failed 11 times (worker crash or database error)",
    );
    // Two retries instead of ten keep the test short; the dead-letter path is the same.
    await jobs.boss.updateQueue(WEBHOOK_DELIVERY_QUEUE, { retryLimit: 2 });
    let runs = 0;
    await jobs.work(WEBHOOK_DELIVERY_QUEUE, webhookWorkOptions, () => {
      runs++;
      return Promise.reject(new Error("forced: the worker fails"));
    });
    await startWebhookDeadLetterWorker(jobs, t.app.deps);

    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const hook = (await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.received",
      url: receiver.url(),
    })).body;
    await publish(t.app, { type: "message.received", workspaceId, agentId: agent.id, data: { n: 1 } });

    const delivery = await eventually(
      async () =>
        (await t.app.deps.db.webhookDelivery.findFirst({
          where: { webhookId: hook.id, status: "FAILED" },
        })) ??
          undefined,
      30_000,
    );
    assert.equal(runs, 3);
    assert.equal(delivery.attemptCount, 0);
    assert.equal(await t.app.deps.db.deliveryAttempt.count(), 0);
    assert.equal(receiver.calls.length, 0);
    const webhook = await owner.client.get(`/api/agents/${agent.id}/webhooks/${hook.id}`);
    const { at, ...lastError } = webhook.body.lastError;
    assert.deepEqual(lastError, {
      status: null,
      error: "abandoned: the delivery job failed 3 times (worker crash or database error)",
      attempts: 0,
      deliveryId: delivery.id,
      event: "message.received",
    });
    assert.ok(!Number.isNaN(Date.parse(at)));
    const log = await owner.client.get(
      `/api/agents/${agent.id}/webhooks/${hook.id}/deliveries/${delivery.id}`,
    );
    assert.equal(log.status, 200);
    assert.equal(log.body.status, "FAILED");
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("the stale sweep ends PENDING deliveries without a change for an hour, and only those", async () => {
  // No workers: the jobs of these deliveries never run (as if lost).
  const t = await startTestApp({}, { workers: false });
  try {
    const db = t.app.deps.db;
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const hook = (await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.received",
      url: "http://127.0.0.1:9/hook",
    })).body;
    for (let n = 0; n < 3; n++) {
      await publish(t.app, { type: "message.received", workspaceId, agentId: agent.id, data: { n } });
    }
    const [stale, recent, done] = await db.webhookDelivery.findMany({ orderBy: { createdAt: "asc" } });
    const t0 = new Date();
    await db.webhookDelivery.update({
      where: { id: recent.id },
      data: { updatedAt: new Date(t0.getTime() + 30 * 60_000) },
    });
    await db.webhookDelivery.update({ where: { id: done.id }, data: { status: "SUCCEEDED" } });

    assert.equal(await sweepStaleDeliveries(db, new Date(t0.getTime() + STALE_AFTER_MS - 60_000)), 0);
    const now = new Date(t0.getTime() + STALE_AFTER_MS + 60_000);
    // Two sweeps at once (two processes) end it once between them.
    const ended = await Promise.all([
      sweepStaleDeliveries(db, now, { batchSize: 1 }),
      sweepStaleDeliveries(db, now, { batchSize: 1 }),
    ]);
    assert.equal(ended[0] + ended[1], 1);
    assert.equal(await sweepStaleDeliveries(db, now), 0);

    const rows = await db.webhookDelivery.findMany({ select: { id: true, status: true } });
    const status = Object.fromEntries(rows.map((r) => [r.id, r.status]));
    assert.deepEqual(status, { [stale.id]: "FAILED", [recent.id]: "PENDING", [done.id]: "SUCCEEDED" });
    const webhook = await owner.client.get(`/api/agents/${agent.id}/webhooks/${hook.id}`);
    assert.deepEqual(webhook.body.lastError, {
      status: null,
      error: "abandoned: no attempt recorded for 60 minutes",
      at: now.toISOString(),
      attempts: 0,
      deliveryId: stale.id,
      event: "message.received",
    });
  } finally {
    await t.close();
  }
});
