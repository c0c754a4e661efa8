/**
 * The webhook delivery worker: each job is one attempt of one delivery (src/webhooks/delivery.ts).
 * HTTP failures are not pg-boss failures: the attempt is recorded and the next one enqueued with
 * its own delay. pg-boss retries a job only when its worker crashed or the database failed.
 */
import type { Job, WorkOptions } from "pg-boss";
import {
  type DeliveryDeps,
  type DeliveryJob,
  type DueAttempt,
  dueAttempts,
  type MadeAttempt,
  makeAttempt,
  recordAttempts,
  WEBHOOK_DELIVERY_QUEUE,
} from "../../webhooks/delivery.ts";
import { ATTEMPT_TIMEOUT_MS } from "../../webhooks/sender.ts";
import type { Jobs, QueueSpec } from "../boss.ts";

/** Just above one attempt (5 s, DNS check included) plus recording it. */
const EXPIRE_SECONDS = Math.ceil(ATTEMPT_TIMEOUT_MS / 1000) + 3;

export const webhookDeliveryQueue: QueueSpec = {
  name: WEBHOOK_DELIVERY_QUEUE,
  notify: true,
  // A crashed attempt is retried seconds after it expires, not after pg-boss' default 15 minutes.
  expireInSeconds: EXPIRE_SECONDS,
  // Only for crashes and database errors; an attempt already recorded is skipped.
  retryLimit: 10,
  retryDelay: 1,
  deleteAfterSeconds: 24 * 3600,
};

/** How the delivery workers fetch (exported for the benchmark's baseline, which uses the same). */
export const webhookWorkOptions = {
  localConcurrency: 2,
  batchSize: 16,
  // With NOTIFY and a batch size of 1, a backlog stalls for the notify polling interval after each
  // fetch; a full batch fetches again at once instead (shared/toolchain.md).
  burstWhenBatchFull: true,
  // Backstop polls: deferred retries are woken by a timer (Jobs.enqueue) in the process that
  // scheduled them; these catch the ones another process scheduled, and crash retries.
  notifyPollingIntervalSeconds: 1,
  pollingIntervalSeconds: 1,
} as const satisfies WorkOptions;

export interface WebhookWorkerOptions {
  /** pg-boss workers in this process; each fetches one batch at a time. */
  localConcurrency?: number;
  /** Jobs per fetch, sent concurrently. */
  batchSize?: number;
  /** A batch waits this long for slow attempts before handing them off (see below). */
  detachAfterMs?: number;
  /** At most this many handed-off attempts in flight; beyond it a batch waits for its own. */
  maxDetached?: number;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Starts the delivery workers. A batch's attempts are loaded together, made concurrently and their
 * successes recorded together; pg-boss completes the batch's jobs when the handler returns (a job
 * retried after a crash between the two finds its attempt recorded and does nothing). A pg-boss
 * worker fetches again only when its whole batch is done, so a batch does not wait on a slow
 * receiver for long: attempts still running after `detachAfterMs` carry on in the background, and a
 * guard job for each (the same attempt, due after the job expiry) is committed before the batch
 * returns. The guard finds the attempt recorded and does nothing, unless this process died first;
 * then it makes the attempt.
 */
export async function startWebhookDeliveryWorker(
  jobs: Jobs,
  deps: DeliveryDeps,
  options: WebhookWorkerOptions = {},
): Promise<void> {
  const detachAfterMs = options.detachAfterMs ?? 300;
  const maxDetached = options.maxDetached ?? 500;
  const detached = new Set<Promise<unknown>>();
  // Not job.signal: pg-boss aborts that when the batch returns, and handed-off attempts outlive it.
  const shutdown = new AbortController();

  const handler = async (batch: Job<DeliveryJob>[]) => {
    const due = await dueAttempts(deps, batch.map((job) => job.data));
    const running = due.map((d) => {
      const entry: { due: DueAttempt; made?: MadeAttempt; promise: Promise<void> } = {
        due: d,
        promise: Promise.resolve(),
      };
      // Rejects only when the server stops mid-call: then it is not recorded, and retried later.
      entry.promise = makeAttempt(deps, d, shutdown.signal).then((outcome) =>
        void (entry.made = { due: d, outcome })
      );
      return entry;
    });
    const all = Promise.allSettled(running.map((r) => r.promise));
    if (detached.size < maxDetached) await Promise.race([all, delay(detachAfterMs)]);
    else await all;

    const slow = running.filter((r) => !r.made);
    if (slow.length) {
      await deps.db.$transaction((tx) =>
        jobs.enqueue(tx, WEBHOOK_DELIVERY_QUEUE, slow.map((r) => r.due.job), {
          startAfterMs: EXPIRE_SECONDS * 1000,
        })
      );
      for (const r of slow) {
        const recorded = r.promise
          .then(() => recordAttempts(deps, [r.made!]))
          // The guard job makes the attempt again; this is for the log.
          .catch((error) =>
            shutdown.signal.aborted || deps.logger.error("webhook attempt not recorded", { error })
          );
        detached.add(recorded);
        recorded.finally(() => detached.delete(recorded));
      }
    }
    // Throwing fails the batch's jobs, so pg-boss retries them; those recorded here are then skipped.
    await recordAttempts(deps, running.flatMap((r) => r.made ? [r.made] : []));
  };

  await jobs.work<DeliveryJob>(WEBHOOK_DELIVERY_QUEUE, {
    ...webhookWorkOptions,
    localConcurrency: options.localConcurrency ?? webhookWorkOptions.localConcurrency,
    batchSize: options.batchSize ?? webhookWorkOptions.batchSize,
  }, handler);

  jobs.onStop(async (timeoutMs) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(detached), new Promise((r) => timer = setTimeout(r, timeoutMs))]);
    clearTimeout(timer);
    // Whatever is still running is abandoned unrecorded; its guard job (or pg-boss' expiry) retries it.
    shutdown.abort(new Error("the server is stopping"));
  });
}
