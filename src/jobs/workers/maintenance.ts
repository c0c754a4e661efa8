/**
 * Periodic upkeep on pg-boss schedules (cron, one-minute resolution; the instance runs with
 * `schedule: true`), three jobs: retention removes events and their deliveries older than
 * RETENTION_DAYS, and image bytes kept for a reply that never handled them
 * (MEDIA_BYTES_MAX_AGE_MS); the stale sweep ends deliveries whose job was lost
 * (webhooks/abandon.ts); the stale-send sweep queues outgoing messages left claimed by a sender
 * that did not settle them (conversations/outbound.ts). pg-boss files each occurrence under a
 * singleton slot, so several processes make one job per slot; each job is idempotent besides (a
 * second run finds nothing to do), and batched with SKIP LOCKED so that two runs at once neither
 * wait on each other nor hold many row locks.
 */
import type { Db } from "../../db/client.ts";
import type { Logger } from "../../shared/logger.ts";
import { sweepStaleDeliveries } from "../../webhooks/abandon.ts";
import type { Clock } from "../../shared/clock.ts";
import type { JobQueue } from "../../shared/jobs.ts";
import type { Jobs, QueueSpec } from "../boss.ts";
import { sweepStaleSends } from "../../conversations/outbound.ts";

export const RETENTION_QUEUE = "retention";
export const STALE_SWEEP_QUEUE = "webhook-delivery-sweep";
/** Hourly, off the full hour. */
export const RETENTION_CRON = "17 * * * *";
export const STALE_SWEEP_CRON = "*/5 * * * *";
export const STALE_SENDS_QUEUE = "message-send-sweep";
/** Every minute: a message whose sender died goes out at most about two minutes late. */
export const STALE_SENDS_CRON = "* * * * *";

export const maintenanceQueues: QueueSpec[] = [
  // A missed run is made up by the next one: no retries piling up, and a short life.
  {
    name: RETENTION_QUEUE,
    retryLimit: 1,
    retryDelay: 60,
    expireInSeconds: 15 * 60,
    deleteAfterSeconds: 24 * 3600,
  },
  {
    name: STALE_SWEEP_QUEUE,
    retryLimit: 1,
    retryDelay: 30,
    expireInSeconds: 5 * 60,
    deleteAfterSeconds: 3600,
  },
  {
    name: STALE_SENDS_QUEUE,
    retryLimit: 1,
    retryDelay: 30,
    expireInSeconds: 60,
    deleteAfterSeconds: 3600,
  },
];

export interface Removed {
  events: number;
  deliveries: number;
}

/**
 * Removes the events created before `now` - `days` and their deliveries (their attempts follow by
 * cascade), `batchSize` events per statement, oldest first. Rows another run holds are skipped.
 */
export async function removeExpired(db: Db, now: Date, days: number, batchSize = 1000): Promise<Removed> {
  const cutoff = new Date(now.getTime() - days * 24 * 3600 * 1000);
  const removed: Removed = { events: 0, deliveries: 0 };
  for (;;) {
    // Deliveries are deleted in the statement to count them; the event's cascade finds none left.
    const [batch] = await db.$queryRaw<Removed[]>`
      WITH doomed AS (
        SELECT id FROM "DomainEvent" WHERE "createdAt" < ${cutoff}
         ORDER BY "createdAt" LIMIT ${batchSize}
           FOR UPDATE SKIP LOCKED
      ), deliveries AS (
        DELETE FROM "WebhookDelivery" d USING doomed WHERE d."eventId" = doomed.id RETURNING d.id
      ), events AS (
        DELETE FROM "DomainEvent" e USING doomed WHERE e.id = doomed.id RETURNING e.id
      )
      SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM deliveries)::int AS deliveries`;
    removed.events += batch.events;
    removed.deliveries += batch.deliveries;
    if (batch.events < batchSize) return removed;
  }
}

/**
 * How long an image's bytes, kept by its media job for the vision reply (src/media/job.ts), may
 * outlive that reply's never coming: one day. The reply deletes them when it handles the message,
 * normally seconds after they were stored (its window plus at most MEDIA_WAIT_MS); rows left over
 * are of messages no reply will show (vision switched off meanwhile, the conversation closed, or
 * held by a person). A day is far beyond any wait of a reply under way (a model outage, a stale
 * claim taken over); a conversation a person gives back after it is answered from the caption.
 */
export const MEDIA_BYTES_MAX_AGE_MS = 24 * 3600 * 1000;

/**
 * Removes the kept image bytes stored before `now` - MEDIA_BYTES_MAX_AGE_MS, `batchSize` rows per
 * statement (each may hold megabytes); rows another run holds are skipped. Returns how many went.
 * The table holds only images waiting for their reply, so it is scanned without an index.
 */
export async function removeStaleMediaBytes(db: Db, now: Date, batchSize = 100): Promise<number> {
  const cutoff = new Date(now.getTime() - MEDIA_BYTES_MAX_AGE_MS);
  let removed = 0;
  for (;;) {
    const count = await db.$executeRaw`
      WITH doomed AS (
        SELECT "messageId" FROM "MessageMediaBytes" WHERE "createdAt" < ${cutoff}
         LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
      )
      DELETE FROM "MessageMediaBytes" b USING doomed WHERE b."messageId" = doomed."messageId"`;
    removed += count;
    if (count < batchSize) return removed;
  }
}

export interface MaintenanceDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  jobs: JobQueue;
}

/** Registers the schedules (an upsert: every start may do it) and the workers of the jobs. */
export async function startMaintenanceWorkers(
  jobs: Jobs,
  deps: MaintenanceDeps,
  options: { retentionDays: number },
): Promise<void> {
  await jobs.boss.schedule(RETENTION_QUEUE, RETENTION_CRON);
  await jobs.boss.schedule(STALE_SWEEP_QUEUE, STALE_SWEEP_CRON);
  await jobs.boss.schedule(STALE_SENDS_QUEUE, STALE_SENDS_CRON);
  await jobs.work(RETENTION_QUEUE, { pollingIntervalSeconds: 30 }, async () => {
    const now = deps.clock.now();
    const removed = await removeExpired(deps.db, now, options.retentionDays);
    if (removed.events) deps.logger.info("retention removed old events", { ...removed });
    const images = await removeStaleMediaBytes(deps.db, now);
    if (images) deps.logger.info("retention removed image bytes no reply used", { images });
  });
  await jobs.work(STALE_SWEEP_QUEUE, { pollingIntervalSeconds: 30 }, async () => {
    const ended = await sweepStaleDeliveries(deps.db, deps.clock.now());
    if (ended) deps.logger.warn("stale webhook deliveries ended as failed", { ended });
  });
  await jobs.work(STALE_SENDS_QUEUE, { pollingIntervalSeconds: 30 }, async () => {
    const queued = await sweepStaleSends(deps, deps.clock.now());
    if (queued) deps.logger.warn("messages left claimed by a sender that died queued again", { queued });
  });
}
