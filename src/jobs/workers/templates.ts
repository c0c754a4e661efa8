/**
 * WhatsApp template syncs (src/templates/sync.ts): one job per channel to sync (queued by channel
 * writes, Meta's status webhook and the hourly sweep), and the hourly sweep on a pg-boss schedule
 * (one job per slot however many processes) that queues a sync of every channel with a business
 * account.
 */
import type { Deps } from "../../context.ts";
import type { Jobs, QueueSpec } from "../boss.ts";
import {
  queueTemplateSync,
  syncTemplates,
  TEMPLATE_SYNC_QUEUE,
  type TemplateSyncJob,
} from "../../templates/sync.ts";

export const TEMPLATE_SWEEP_QUEUE = "template-sync-hourly";
/** At minute 17 of every hour (off the hour, when Meta's API is busiest). */
export const TEMPLATE_SWEEP_CRON = "17 * * * *";

export const templateQueues: QueueSpec[] = [
  {
    name: TEMPLATE_SYNC_QUEUE,
    // One waiting sync per channel (its key): asking again while one waits adds nothing.
    policy: "short",
    notify: true,
    // Above a sync of thousands of templates (a Graph call of 10 s at most per page of 100).
    expireInSeconds: 15 * 60,
    // Meta's temporary failures: again after 1, 2, 4 min...; a permanent one is not retried.
    retryLimit: 5,
    retryDelay: 60,
    retryBackoff: true,
    deleteAfterSeconds: 24 * 3600,
  },
  {
    name: TEMPLATE_SWEEP_QUEUE,
    notify: true,
    retryLimit: 0,
    expireInSeconds: 5 * 60,
    deleteAfterSeconds: 24 * 3600,
  },
];

/** Queues a sync of every WhatsApp channel that has a business account. */
export async function queueEveryTemplateSync(deps: Deps): Promise<number> {
  const channels = await deps.db.channel.findMany({
    where: { type: "WHATSAPP", businessAccountId: { not: null } },
    select: { id: true },
  });
  await queueTemplateSync(deps, deps.db, channels.map((c) => c.id));
  return channels.length;
}

export async function startTemplateWorkers(jobs: Jobs, deps: Deps): Promise<void> {
  await jobs.boss.schedule(TEMPLATE_SWEEP_QUEUE, TEMPLATE_SWEEP_CRON);
  await jobs.work(TEMPLATE_SWEEP_QUEUE, { pollingIntervalSeconds: 30 }, async () => {
    const channels = await queueEveryTemplateSync(deps);
    if (channels) deps.logger.info("template syncs queued", { channels });
  });
  await jobs.work<TemplateSyncJob>(
    TEMPLATE_SYNC_QUEUE,
    { localConcurrency: 2, batchSize: 1, pollingIntervalSeconds: 5 },
    async (batch) => {
      for (const job of batch) {
        const outcome = await syncTemplates(deps, job.data.channelId);
        if (outcome.ok) {
          deps.logger.info("templates synced", {
            channelId: job.data.channelId,
            stored: outcome.stored,
            removed: outcome.removed,
            pages: outcome.pages,
          });
        } else if (outcome.reason === "failed") {
          deps.logger.warn("template sync failed", {
            channelId: job.data.channelId,
            status: outcome.error.status,
            error: outcome.error.message,
          });
          // pg-boss retries it (with backoff) when a later try may pass.
          if (outcome.error.retryable) throw new Error(`template sync failed: ${outcome.error.message}`);
        }
      }
    },
  );
}
