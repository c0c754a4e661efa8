/**
 * Retention: events and their deliveries older than RETENTION_DAYS, and image bytes kept for a
 * reply that never used them older than MEDIA_BYTES_MAX_AGE_MS, are removed by an hourly pg-boss
 * schedule; an agent's events go with the agent.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { publish } from "./_helpers/events.ts";
import { customerMessage, seedChannel } from "./_helpers/conversations.ts";
import type { Jobs } from "../src/jobs/boss.ts";
import {
  MEDIA_BYTES_MAX_AGE_MS,
  removeExpired,
  removeStaleMediaBytes,
  RETENTION_CRON,
  RETENTION_QUEUE,
  STALE_SENDS_CRON,
  STALE_SENDS_QUEUE,
  STALE_SWEEP_CRON,
  STALE_SWEEP_QUEUE,
} from "../src/jobs/workers/maintenance.ts";
import { loadConfig } from "../src/config.ts";

const DAY = 24 * 3600 * 1000;

Deno.test("RETENTION_DAYS defaults to 30 and must be a positive whole number", () => {
  assert.equal(loadConfig({}).retentionDays, 30);
  assert.equal(loadConfig({ RETENTION_DAYS: "7" }).retentionDays, 7);
  assert.throws(() => loadConfig({ RETENTION_DAYS: "0" }), /RETENTION_DAYS/);
  assert.throws(() => loadConfig({ RETENTION_DAYS: "two" }), /RETENTION_DAYS/);
});

Deno.test("retention removes the events older than the cut-off with their deliveries and attempts, and keeps the rest", async () => {
  const t0 = new Date("2026-01-01T00:00:00.000Z");
  const clock = new ManualClock(t0);
  const t = await startTestApp({}, { workers: false, clock });
  try {
    const db = t.app.deps.db;
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.received",
      url: "http://127.0.0.1:9/hook",
    });
    const at = async (offsetMs: number) => {
      clock.set(new Date(t0.getTime() + offsetMs));
      return await publish(t.app, { type: "message.received", workspaceId, agentId: agent.id, data: {} });
    };
    const old1 = await at(0);
    await at(DAY);
    const edge = await at(10 * DAY);
    const fresh = await at(35 * DAY);
    const oldDelivery = await db.webhookDelivery.findFirstOrThrow({ where: { eventId: old1 } });
    await db.deliveryAttempt.create({
      data: { deliveryId: oldDelivery.id, number: 1, startedAt: t0, durationMs: 5, httpStatus: 500 },
    });

    // 30 days before now is exactly `edge`: older rows go, `edge` stays. Two runs at once (two
    // processes), one event per statement, remove each row once between them.
    const now = new Date(t0.getTime() + 40 * DAY);
    const runs = await Promise.all([removeExpired(db, now, 30, 1), removeExpired(db, now, 30, 1)]);
    assert.equal(runs[0].events + runs[1].events, 2);
    assert.equal(runs[0].deliveries + runs[1].deliveries, 2);
    assert.deepEqual(await removeExpired(db, now, 30), { events: 0, deliveries: 0 });

    const events = await db.domainEvent.findMany({ select: { id: true }, orderBy: { createdAt: "asc" } });
    assert.deepEqual(events.map((e) => e.id), [edge, fresh]);
    const deliveries = await db.webhookDelivery.findMany({ select: { eventId: true } });
    assert.deepEqual(deliveries.map((d) => d.eventId).sort(), [edge, fresh].sort());
    assert.equal(await db.deliveryAttempt.count(), 0);
  } finally {
    await t.close();
  }
});

Deno.test("retention removes image bytes kept for a reply once a day old, and keeps younger ones and their messages", async () => {
  const t0 = new Date("2026-01-01T00:00:00.000Z");
  const clock = new ManualClock(t0);
  const t = await startTestApp({}, { workers: false, clock });
  try {
    const db = t.app.deps.db;
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { enabledVision: true });
    const channel = await seedChannel(t.app, workspaceId, agent.id);
    assert.equal(MEDIA_BYTES_MAX_AGE_MS, DAY);
    /** An image from its own customer, stored `offsetMs` after t0 with its bytes kept for the reply. */
    const image = async (offsetMs: number, n: number) => {
      clock.set(new Date(t0.getTime() + offsetMs));
      const { messageId } = await customerMessage(t.app, {
        workspaceId,
        agentId: agent.id,
        channelId: channel.id,
        contact: { externalId: `551190000000${n}`, name: `Customer ${n}` },
        type: "IMAGE",
        content: "[image]",
      });
      await db.messageMediaBytes.create({
        data: { messageId, bytes: new Uint8Array([n]), createdAt: clock.now() },
      });
      return messageId;
    };
    const old1 = await image(0, 1);
    const old2 = await image(3600 * 1000, 2);
    const edge = await image(2 * 3600 * 1000, 3);
    const fresh = await image(25 * 3600 * 1000, 4);

    // A day before now is exactly `edge`: older rows go, `edge` stays. Two runs at once, one row
    // per statement, remove each row once between them.
    const now = new Date(t0.getTime() + 2 * 3600 * 1000 + DAY);
    const runs = await Promise.all([removeStaleMediaBytes(db, now, 1), removeStaleMediaBytes(db, now, 1)]);
    assert.equal(runs[0] + runs[1], 2);
    assert.equal(await removeStaleMediaBytes(db, now), 0);
    const kept = await db.messageMediaBytes.findMany({
      select: { messageId: true },
      orderBy: { createdAt: "asc" },
    });
    assert.deepEqual(kept.map((r) => r.messageId), [edge, fresh]);
    // The messages stay: only the bytes no reply used go.
    assert.equal(await db.message.count({ where: { id: { in: [old1, old2, edge, fresh] } } }), 4);
  } finally {
    await t.close();
  }
});

Deno.test("the retention, stale-sweep and stale-send schedules are registered when the workers start", async () => {
  const t = await startTestApp();
  try {
    const schedules = await (t.app.deps.jobs as Jobs).boss.getSchedules();
    const byName = Object.fromEntries(schedules.map((s) => [s.name, s.cron]));
    assert.equal(byName[RETENTION_QUEUE], RETENTION_CRON);
    assert.equal(byName[STALE_SWEEP_QUEUE], STALE_SWEEP_CRON);
    assert.equal(byName[STALE_SENDS_QUEUE], STALE_SENDS_CRON);
    assert.equal(RETENTION_CRON, "17 * * * *");
    assert.equal(STALE_SENDS_CRON, "* * * * *");
  } finally {
    await t.close();
  }
});

Deno.test("deleting an agent deletes its events and their deliveries", async () => {
  const t = await startTestApp({}, { workers: false });
  try {
    const db = t.app.deps.db;
    const { workspaceId, owner } = await t.seed.workspace();
    const gone = await t.seed.agent(owner.client);
    const kept = await t.seed.agent(owner.client, { name: "Bia" });
    for (const agent of [gone, kept]) {
      await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
        event: "message.received",
        url: "http://127.0.0.1:9/hook",
      });
      for (let n = 0; n < 2; n++) {
        await publish(t.app, { type: "message.received", workspaceId, agentId: agent.id, data: { n } });
      }
    }
    assert.equal((await owner.client.delete(`/api/agents/${gone.id}`)).status, 204);
    assert.equal(await db.domainEvent.count({ where: { agentId: gone.id } }), 0);
    assert.equal(await db.domainEvent.count({ where: { agentId: kept.id } }), 2);
    assert.equal(await db.webhookDelivery.count(), 2);
  } finally {
    await t.close();
  }
});
