/**
 * The dead letter of the delivery queue: pg-boss moves a delivery job here once it has failed
 * retryLimit + 1 times (worker crashes or database errors; HTTP failures never fail a job), and this
 * worker ends its delivery as FAILED with the reason in `lastError` instead of leaving it PENDING.
 */
import type { Job } from "pg-boss";
import { abandonDelivery } from "../../webhooks/abandon.ts";
import type { DeliveryDeps, DeliveryJob } from "../../webhooks/delivery.ts";
import type { Jobs, QueueSpec } from "../boss.ts";

export const WEBHOOK_DEAD_LETTER_QUEUE = "webhook-delivery-dead";

/** Created before the delivery queue, which names it as its `deadLetter`. */
export const webhookDeadLetterQueue: QueueSpec = {
  name: WEBHOOK_DEAD_LETTER_QUEUE,
  retryLimit: 20,
  retryDelay: 5,
  deleteAfterSeconds: 7 * 24 * 3600,
};

/** The `lastError.error` of a delivery whose job pg-boss gave up on after `runs` runs. */
export function deadLetterReason(runs: number): string {
  return `abandoned: the delivery job failed ${runs} times (worker crash or database error)`;
}

export async function startWebhookDeadLetterWorker(
  jobs: Jobs,
  deps: Pick<DeliveryDeps, "db" | "clock" | "logger">,
): Promise<void> {
  await jobs.work<DeliveryJob>(
    WEBHOOK_DEAD_LETTER_QUEUE,
    { batchSize: 16, includeMetadata: true, pollingIntervalSeconds: 2 },
    async (batch) => {
      for (const job of batch as Array<Job<DeliveryJob> & { sourceRetryCount?: number | null }>) {
        const runs = (job.sourceRetryCount ?? 0) + 1;
        const ended = await abandonDelivery(deps.db, deps.clock.now(), job.data, deadLetterReason(runs));
        if (ended) {
          deps.logger.warn("webhook delivery abandoned", { deliveryId: job.data.deliveryId, runs });
        }
      }
    },
  );
}
