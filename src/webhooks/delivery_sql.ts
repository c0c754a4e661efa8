/**
 * The SQL of the delivery attempts (declared statements: src/db/statement.ts): outside a
 * transaction they take the pool's fast path, which a worker's batch pays once for its load and
 * once for its successes.
 */
import { type DeliveryAttempt, Prisma } from "../generated/prisma/client.ts";
import type { DeliveryStatus } from "../generated/prisma/enums.ts";
import { col, command, query } from "../db/statement.ts";
import { LIVE_INSTANCES } from "../db/instance.ts";
import type { WebhookPayload } from "./sender.ts";

const at0 = new Date(0);

/** The deliveries of a batch of jobs, with their webhook and their event's payload. */
export const loadDeliveries = query(
  {
    id: col.text,
    status: col.enum<DeliveryStatus>("DeliveryStatus"),
    attemptCount: col.integer,
    idempotencyKey: col.text,
    webhookId: col.text,
    url: col.text,
    method: col.text,
    headers: col.jsonb<Record<string, string>>(),
    signingSecret: col.text,
    previousSigningSecret: col.text.null,
    previousSecretExpiresAt: col.timestamptz.null,
    eventId: col.text,
    eventType: col.text,
    payload: col.jsonb<WebhookPayload>(),
  },
  ({ ids }: { ids: string[] }) =>
    Prisma.sql`
    SELECT d.id, d.status, d."attemptCount", d."idempotencyKey",
           w.id AS "webhookId", w.url, w.method, w.headers, w."signingSecret",
           w."previousSigningSecret", w."previousSecretExpiresAt",
           e.id AS "eventId", e.type AS "eventType", e.payload
      FROM "WebhookDelivery" d
      JOIN "EventWebhook" w ON w.id = d."webhookId"
      JOIN "DomainEvent" e ON e.id = d."eventId"
     WHERE d.id = ANY(${ids}::text[])`,
  [{ ids: [] }],
);

/** One made attempt, as recordAttempts stores it: its whole row. */
export type AttemptRow = DeliveryAttempt;

/**
 * Inserts the attempts and moves their deliveries to `status`, in one statement; a delivery's
 * claim (its first attempt's, by the process making it) ends with it.
 */
export const recordAttempts = command(
  ({ attempts, status, now }: { attempts: AttemptRow[]; status: DeliveryStatus; now: Date }) => {
    const col = <T>(f: (a: AttemptRow) => T) => attempts.map(f);
    return Prisma.sql`
    WITH made AS (
      SELECT * FROM unnest(
        ${col((a) => a.id)}::text[], ${col((a) => a.deliveryId)}::text[], ${col((a) => a.number)}::int[],
        ${col((a) => a.startedAt.toISOString())}::timestamptz[], ${col((a) => a.durationMs)}::int[],
        ${col((a) => a.httpStatus)}::int[], ${col((a) => a.error)}::text[]
      ) AS m(id, "deliveryId", number, "startedAt", "durationMs", "httpStatus", error)
    ), attempts AS (
      INSERT INTO "DeliveryAttempt" (id, "deliveryId", number, "startedAt", "durationMs", "httpStatus", error)
      SELECT * FROM made
    )
    UPDATE "WebhookDelivery" d
       SET "attemptCount" = made.number, status = ${status}::"DeliveryStatus", "updatedAt" = ${now},
           "claimedBy" = NULL
      FROM made
     WHERE d.id = made."deliveryId"`;
  },
  [{ attempts: [], status: "SUCCEEDED", now: at0 }],
);

/**
 * Ends up to `limit` claims of deliveries whose process is gone, returning each with whether its
 * first attempt is still to be made (PENDING, no attempt recorded).
 */
export const releaseDeadDeliveryClaims = query(
  { id: col.text, webhookId: col.text, due: col.boolean },
  ({ limit }: { limit: number }) =>
    Prisma.sql`
    UPDATE "WebhookDelivery" d SET "claimedBy" = NULL
      FROM (SELECT id FROM "WebhookDelivery"
             WHERE "claimedBy" IS NOT NULL AND "claimedBy" NOT IN (${Prisma.raw(LIVE_INSTANCES)})
             LIMIT ${limit} FOR UPDATE SKIP LOCKED) dead
     WHERE d.id = dead.id
    RETURNING d.id, d."webhookId", d.status = 'PENDING' AND d."attemptCount" = 0 AS due`,
  [{ limit: 1 }],
);
