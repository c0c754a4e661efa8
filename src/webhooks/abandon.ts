/**
 * Deliveries that can no longer make progress end as FAILED, with the reason in the webhook's
 * `lastError`, so that no delivery stays PENDING forever. Two ways in:
 * pg-boss gave up on a delivery job (its crash retries are exhausted, see the dead-letter worker),
 * and a periodic sweep for deliveries without any change for a long time (their job was lost, or a
 * hanging receiver's deferred backlog kept them waiting that long).
 */
import type { Db, Tx } from "../db/client.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { cyclePosition, type DeliveryJob, type WebhookLastError } from "./delivery.ts";

/** A PENDING delivery without any change for this long is given up (see sweepStaleDeliveries). */
export const STALE_AFTER_MS = 60 * 60 * 1000;

interface Abandoned {
  id: string;
  webhookId: string;
  attemptCount: number;
  eventType: string;
}

/**
 * Ends the delivery of a job pg-boss gave up on as FAILED, unless it moved on meanwhile (the
 * attempt was recorded after all, or another job finished it). Returns whether it did.
 */
export async function abandonDelivery(db: Db, now: Date, job: DeliveryJob, reason: string): Promise<boolean> {
  return await db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Abandoned[]>`
      UPDATE "WebhookDelivery" d
         SET status = 'FAILED', "updatedAt" = ${now}, "claimedBy" = NULL
        FROM "DomainEvent" e
       WHERE d.id = ${job.deliveryId} AND d.status = 'PENDING' AND d."attemptCount" = ${job.attempt - 1}
         AND e.id = d."eventId"
      RETURNING d.id, d."webhookId", d."attemptCount", e.type AS "eventType"`;
    await setLastErrors(tx, now, rows, reason);
    return rows.length === 1;
  });
}

/**
 * Ends as FAILED the PENDING deliveries whose last change is older than `staleAfterMs` before
 * `now`, `batchSize` at a time (each batch its own transaction; rows another sweep holds are
 * skipped). Returns how many it ended.
 */
export async function sweepStaleDeliveries(
  db: Db,
  now: Date,
  { staleAfterMs = STALE_AFTER_MS, batchSize = 500 } = {},
): Promise<number> {
  const cutoff = new Date(now.getTime() - staleAfterMs);
  const reason = `abandoned: no attempt recorded for ${Math.round(staleAfterMs / 60_000)} minutes`;
  let total = 0;
  for (;;) {
    const ended = await db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<Abandoned[]>`
        WITH stale AS (
          SELECT id FROM "WebhookDelivery"
           WHERE status = 'PENDING' AND "updatedAt" < ${cutoff}
           ORDER BY "updatedAt" LIMIT ${batchSize}
             FOR UPDATE SKIP LOCKED
        )
        UPDATE "WebhookDelivery" d
           SET status = 'FAILED', "updatedAt" = ${now}, "claimedBy" = NULL
          FROM stale, "DomainEvent" e
         WHERE d.id = stale.id AND e.id = d."eventId"
        RETURNING d.id, d."webhookId", d."attemptCount", e.type AS "eventType"`;
      await setLastErrors(tx, now, rows, reason);
      return rows.length;
    });
    total += ended;
    if (ended < batchSize) return total;
  }
}

/** One `lastError` per webhook (the last of its abandoned deliveries), as an exhausted cycle does. */
async function setLastErrors(tx: Tx, now: Date, rows: Abandoned[], reason: string): Promise<void> {
  const byWebhook = new Map(rows.map((r) => [r.webhookId, r]));
  for (const r of byWebhook.values()) {
    const lastError: WebhookLastError = {
      status: null,
      error: reason,
      at: now.toISOString(),
      // Attempts made in the delivery's current cycle before it was abandoned.
      attempts: cyclePosition(r.attemptCount + 1) - 1,
      deliveryId: r.id,
      event: r.eventType,
    };
    await tx.eventWebhook.updateMany({
      where: { id: r.webhookId },
      data: { lastError: lastError as unknown as Prisma.InputJsonValue },
    });
  }
}
