/**
 * The webhook listener of the event bus: turns each published event into one WebhookDelivery per
 * matching webhook of the agent, inside the publisher's transaction (so nothing is lost between
 * commit and enqueue, nothing sent for a rolled-back change). Their first attempts are made by
 * this process right after the commit when it can, the deliveries claimed by it (their claim is
 * what hands them to a job if it dies: webhooks/recovery.ts), or else enqueued as jobs for the
 * workers. What it writes, those jobs included, is its share of the batch's one statement
 * (src/shared/events.ts): publishing costs no statement of its own.
 */
import type { Db } from "../db/client.ts";
import { Prisma } from "../generated/prisma/client.ts";
import type { EventListener, PublishedEvent, SettledCheck, StatementShare } from "../shared/events.ts";
import type { JobQueue, LocalRun } from "../shared/jobs.ts";
import type { Instance } from "../db/instance.ts";
import { sha256Hex } from "../shared/crypto.ts";
import { type DeliveryJob, WEBHOOK_DELIVERY_QUEUE } from "./delivery.ts";
import { WEBHOOK_EVENTS } from "./schemas.ts";

/** What webhooks deliver: the subscribable events and the test event; internal events are not stored. */
const DELIVERED: ReadonlySet<string> = new Set([...WEBHOOK_EVENTS, "webhook.test"]);

/** X-Idempotency-Key of every delivery of an event: hex SHA-256 of the event's id. */
export function idempotencyKeyOf(eventId: string): string {
  return sha256Hex(eventId);
}

/**
 * The listener: stores each event of a batch with its payload as the receivers will get it (so
 * every attempt sends the same body), one delivery per webhook of the agent registered for its type
 * (for `webhook.test`, only the webhook it names), and for attempt 1 of each delivery either its
 * claim by this process (`instance`; without one, never) or a job.
 */
export function webhookListener(jobs: JobQueue, instance?: Pick<Instance, "id">): EventListener {
  const delivered = (events: readonly PublishedEvent[]) =>
    events.filter((event) => DELIVERED.has(event.type));
  // Attempt 1 of each delivery not claimed here (a DeliveryJob each), inserted by the same statement.
  // Made on first use: the queue's insert is known once the job queue has started.
  let firstAttempts: StatementShare | undefined;
  const firstAttemptsShare = () =>
    firstAttempts ??= jobs.insertShare(WEBHOOK_DELIVERY_QUEUE, {
      name: "webhook_jobs",
      // Each job's id is its delivery's (a fresh uuid).
      jobs: Prisma.sql`(
        SELECT json_agg(json_build_object('id', d.id, 'data',
                 json_build_object('deliveryId', d.id, 'attempt', 1, 'webhookId', d."webhookId")) ORDER BY e.n)
          FROM webhook_deliveries d JOIN webhook_events e ON e.id = d."eventId")`,
    });
  // Per batch of events, the run of their first attempts here, when this process makes them.
  const localRuns = new WeakMap<readonly PublishedEvent[], LocalRun>();
  return {
    // Its share of the batch's one statement (the bus's comment): each payload is assembled from
    // the agent and conversation rows, and the events and their deliveries are inserted together,
    // in the events' order. The payload's keys come back in jsonb's order; the sender puts them in
    // the payload's documented order.
    statement(events, tx) {
      const stored = delivered(events);
      if (!stored.length) return undefined;
      const attempts = firstAttemptsShare();
      // The first attempts are made by this process right after the commit when it can (no job, no
      // fetch, no wake-up), by a worker anywhere otherwise.
      const local = instance ? jobs.runAfterCommit(tx, WEBHOOK_DELIVERY_QUEUE) : null;
      if (local) localRuns.set(events, local);
      // Two statement texts, each prepared once: claimed by this process, or with the jobs' insert
      // (whose executor set-up is a good part of the statement's cost, even inserting nothing).
      const claim = local ? Prisma.sql`${instance!.id}::int` : Prisma.sql`NULL::int`;
      const input = JSON.stringify(stored.map((event, n) => ({
        n,
        id: event.id,
        workspaceId: event.workspaceId,
        agentId: event.agentId,
        conversationId: event.conversationId ?? null,
        type: event.type,
        target: event.type === "webhook.test" ? event.webhookId ?? null : null,
        key: idempotencyKeyOf(event.id),
        at: event.occurredAt.toISOString(),
        data: event.data,
      })));
      return {
        ctes: Prisma.sql`
          webhook_events AS (
            SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS e(n int, id text, "workspaceId" text,
              "agentId" text, "conversationId" text, type text, target text, key text, at text, data jsonb)
          ), webhook_stored AS (
            INSERT INTO "DomainEvent" (id, "workspaceId", "agentId", "conversationId", type, payload, "createdAt")
            SELECT e.id, e."workspaceId", a.id, c.id, e.type,
                   jsonb_build_object(
                     'event', e.type,
                     'timestamp', e.at,
                     'agent', jsonb_build_object('id', a.id, 'name', a.name),
                     'conversation', CASE WHEN c.id IS NULL THEN NULL ELSE jsonb_build_object(
                       'id', c.id, 'contactName', ct.name, 'contactId', ct."externalId",
                       'channel', jsonb_build_object('type', ch.type::text, 'label', ch.label)) END,
                     'data', e.data),
                   e.at::timestamptz
              FROM webhook_events e
              JOIN "Agent" a ON a.id = e."agentId" AND a."workspaceId" = e."workspaceId"
              LEFT JOIN "Conversation" c ON c.id = e."conversationId" AND c."agentId" = a.id
              LEFT JOIN "Contact" ct ON ct.id = c."contactId"
              LEFT JOIN "Channel" ch ON ch.id = c."channelId"
             ORDER BY e.n
            RETURNING id, "conversationId"
          ), webhook_deliveries AS (
            INSERT INTO "WebhookDelivery" (id, "webhookId", "eventId", "idempotencyKey", "createdAt", "updatedAt",
                                           "claimedBy")
            SELECT gen_random_uuid()::text, w.id, e.id, e.key, e.at::timestamptz, e.at::timestamptz, ${claim}
              FROM webhook_events e
              JOIN webhook_stored s ON s.id = e.id
              JOIN "EventWebhook" w ON w."agentId" = e."agentId" AND (w.event = e.type OR w.id = e.target)
             ORDER BY e.n
            RETURNING id, "webhookId", "eventId"
          )${local ? Prisma.empty : Prisma.sql`, ${attempts.ctes}`}`,
        result: Prisma.sql`json_build_object(
          'stored', (SELECT COALESCE(json_object_agg(id, "conversationId"), '{}') FROM webhook_stored),
          'deliveries', (SELECT COALESCE(json_agg(json_build_array(id, "webhookId")), '[]') FROM webhook_deliveries),
          'jobs', ${local ? Prisma.sql`0` : attempts.result})`,
      };
    },
    after(_tx, events, result) {
      const stored = delivered(events);
      if (!stored.length) return Promise.resolve();
      const row = result as {
        stored: Record<string, string | null>;
        deliveries: Array<[string, string]>;
        jobs: number;
      };
      // Throwing rolls the caller's transaction back, the events included.
      for (const event of stored) {
        if (!(event.id in row.stored)) {
          throw new Error(`publish ${event.type}: agent ${event.agentId} not found in its workspace`);
        }
        if (event.conversationId && row.stored[event.id] !== event.conversationId) {
          throw new Error(
            `publish ${event.type}: conversation ${event.conversationId} of agent ${event.agentId} not found`,
          );
        }
      }
      // pg-boss's insert skips a job that conflicts (none can here: fresh ids, no keys); a delivery
      // neither claimed nor with its job would wait for the stale sweep.
      const local = localRuns.get(events);
      if (row.jobs !== (local ? 0 : row.deliveries.length)) {
        throw new Error(
          `publish: ${row.jobs} delivery jobs inserted for ${row.deliveries.length} deliveries`,
        );
      }
      local?.start(row.deliveries.map(([deliveryId, webhookId]) => ({
        id: deliveryId,
        data: { deliveryId, attempt: 1, webhookId, claimed: true } satisfies DeliveryJob,
      })));
      return Promise.resolve();
    },
  };
}

/**
 * The listener's settled check: resolves once every delivery of the event has had its first attempt
 * recorded (or is no longer pending), or after `timeoutMs`. Polls, since the attempt may be made by
 * another process.
 */
export function firstAttemptsMade(db: Db): SettledCheck {
  return async (eventId, timeoutMs) => {
    const deadline = performance.now() + timeoutMs;
    for (let pause = 5;; pause = Math.min(pause * 2, 50)) {
      const waiting = await db.webhookDelivery.count({
        where: { eventId, status: "PENDING", attemptCount: 0 },
      });
      if (waiting === 0 || performance.now() + pause > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  };
}
