/**
 * The webhook listener of the event bus: turns each published event into one WebhookDelivery per
 * matching webhook of the agent and enqueues their first attempts, inside the publisher's
 * transaction (decisions.md "Event delivery": nothing lost between commit and enqueue, nothing sent
 * for a rolled-back change).
 */
import type { Db } from "../db/client.ts";
import type { EventListener, SettledCheck } from "../shared/events.ts";
import type { JobQueue } from "../shared/jobs.ts";
import { sha256Hex } from "../shared/crypto.ts";
import { type DeliveryJob, WEBHOOK_DELIVERY_QUEUE } from "./delivery.ts";
import { WEBHOOK_EVENTS } from "./schemas.ts";

/** What webhooks deliver: the spec's events and the test event; internal events are not stored. */
const DELIVERED: ReadonlySet<string> = new Set([...WEBHOOK_EVENTS, "webhook.test"]);

/** X-Idempotency-Key of every delivery of an event: hex SHA-256 of the event's id. */
export function idempotencyKeyOf(eventId: string): string {
  return sha256Hex(eventId);
}

/**
 * The listener: stores the event with its payload as the receivers will get it (so every attempt
 * sends the same body), one delivery per webhook of the agent registered for its type (for
 * `webhook.test`, only the webhook it names), and one job per delivery for attempt 1.
 */
export function webhookListener(jobs: JobQueue): EventListener {
  return async (tx, event) => {
    if (!DELIVERED.has(event.type)) return;
    const target = event.type === "webhook.test" ? event.webhookId ?? null : null;
    const conversationId = event.conversationId ?? null;
    const key = idempotencyKeyOf(event.id);
    // One statement, since publish runs inside the caller's transaction and often on a hot path
    // (every message): the payload is assembled from the agent and conversation rows, and the
    // event and its deliveries are inserted together. Its keys come back in jsonb's order; the
    // sender puts them in the spec's.
    const [row] = await tx.$queryRaw<
      Array<{ events: number; conversationId: string | null; deliveries: DeliveryJob[] }>
    >`
      WITH ctx AS (
        SELECT a.id AS agent_id, a.name AS agent_name, c.id AS conversation_id, ct.id AS contact_id,
               ct.name AS contact_name, ch.type::text AS channel_type, ch.label AS channel_label
          FROM "Agent" a
          LEFT JOIN "Conversation" c ON c.id = ${conversationId} AND c."agentId" = a.id
          LEFT JOIN "Contact" ct ON ct.id = c."contactId"
          LEFT JOIN "Channel" ch ON ch.id = c."channelId"
         WHERE a.id = ${event.agentId} AND a."workspaceId" = ${event.workspaceId}
      ), inserted_event AS (
        INSERT INTO "DomainEvent" (id, "workspaceId", "agentId", "conversationId", type, payload, "createdAt")
        SELECT ${event.id}, ${event.workspaceId}, agent_id, conversation_id, ${event.type},
               jsonb_build_object(
                 'event', ${event.type}::text,
                 'timestamp', ${event.occurredAt.toISOString()}::text,
                 'agent', jsonb_build_object('id', agent_id, 'name', agent_name),
                 'conversation', CASE WHEN conversation_id IS NULL THEN NULL ELSE jsonb_build_object(
                   'id', conversation_id, 'contactName', contact_name, 'contactId', contact_id,
                   'channel', jsonb_build_object('type', channel_type, 'label', channel_label)) END,
                 'data', ${JSON.stringify(event.data)}::jsonb),
               ${event.occurredAt}
          FROM ctx
        RETURNING id, "conversationId"
      ), deliveries AS (
        INSERT INTO "WebhookDelivery" (id, "webhookId", "eventId", "idempotencyKey", "createdAt", "updatedAt")
        SELECT gen_random_uuid()::text, w.id, e.id, ${key}, ${event.occurredAt}, ${event.occurredAt}
          FROM inserted_event e
          JOIN "EventWebhook" w ON w."agentId" = ${event.agentId} AND (w.event = ${event.type} OR w.id = ${target})
        RETURNING id, "webhookId"
      )
      SELECT (SELECT count(*) FROM inserted_event)::int AS events,
             (SELECT "conversationId" FROM inserted_event) AS "conversationId",
             COALESCE((SELECT json_agg(json_build_object('deliveryId', id, 'attempt', 1, 'webhookId', "webhookId"))
                         FROM deliveries), '[]') AS deliveries`;
    // Throwing rolls the caller's transaction back, event included.
    if (row.events !== 1) {
      throw new Error(`publish ${event.type}: agent ${event.agentId} not found in its workspace`);
    }
    if (conversationId && row.conversationId !== conversationId) {
      throw new Error(
        `publish ${event.type}: conversation ${conversationId} of agent ${event.agentId} not found`,
      );
    }
    // Attempt 1 of each delivery.
    await jobs.enqueue(tx, WEBHOOK_DELIVERY_QUEUE, row.deliveries);
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
