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
import type { JobItem } from "../../shared/jobs.ts";
import { WEBHOOK_DEAD_LETTER_QUEUE } from "./webhook_dead_letter.ts";

/** Just above one attempt (5 s, DNS check included) plus recording it. */
const EXPIRE_SECONDS = Math.ceil(ATTEMPT_TIMEOUT_MS / 1000) + 3;

export const webhookDeliveryQueue: QueueSpec = {
  name: WEBHOOK_DELIVERY_QUEUE,
  notify: true,
  // A crashed attempt is retried seconds after it expires, not after pg-boss' default 15 minutes.
  expireInSeconds: EXPIRE_SECONDS,
  // Only for crashes and database errors; an attempt already recorded is skipped. A job that fails
  // once more goes to the dead letter, whose worker ends its delivery as FAILED.
  retryLimit: 10,
  retryDelay: 1,
  deadLetter: WEBHOOK_DEAD_LETTER_QUEUE,
  deleteAfterSeconds: 24 * 3600,
};

/** How the delivery workers fetch (exported for the benchmark's baseline, which uses the same). */
export const webhookWorkOptions = {
  localConcurrency: 2,
  batchSize: 16,
  // With NOTIFY and a batch size of 1, a backlog stalls for the notify polling interval after each
  // fetch; a full batch fetches again at once instead.
  burstWhenBatchFull: true,
  // Backstop polls: deferred retries are woken by a timer (Jobs.send) in the process that
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
  /** At most this many attempts in flight per webhook in this process (see WEBHOOK_CONCURRENCY). */
  perWebhook?: number;
}

/**
 * The job that carries an attempt on (deferred, or guarding one handed off). A claimed first
 * attempt's takes its delivery's id, as the recovery's would (DeliveryJob.claimed), and is no
 * longer claimed: it has a row.
 */
function carriedOn({ claimed, ...job }: DeliveryJob): Pick<JobItem, "data" | "id"> {
  return { data: job, id: claimed ? job.deliveryId : undefined };
}

/**
 * First attempts made by the process that published their events (see below): one batch at a time
 * (in a burst it takes every attempt that came meanwhile: fuller batches, fewer statements per
 * attempt), and up to this many held here, under way or waiting; beyond, they are jobs for the
 * workers.
 */
const RUN_HERE_LIMIT = 64;

/**
 * Attempts in flight per webhook in one process. One batch of each of the workers (2 x 16), so a
 * receiver that answers promptly is never held back by it, while one that hangs ties up at most
 * this many connections; its further jobs are deferred instead of waiting in a worker.
 */
export const WEBHOOK_CONCURRENCY = webhookWorkOptions.localConcurrency * webhookWorkOptions.batchSize;

/** What this process knows of a webhook's receiver: attempts in flight, how long they take. */
interface ReceiverState {
  inFlight: number;
  /** Moving average of attempt durations (ms). */
  avgMs: number;
  /** performance.now() until which deferred jobs of this webhook are already spread. */
  deferredUntil: number;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs at most `max` tasks at once, the others in arrival order. */
class Limiter {
  #running = 0;
  readonly #waiting: Array<() => void> = [];
  constructor(readonly max: number) {}
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.max) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running++;
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}

/**
 * Starts the delivery workers. A batch's attempts are loaded together, made concurrently and their
 * successes recorded together; pg-boss completes the batch's jobs when the handler returns (a job
 * retried after a crash between the two finds its attempt recorded and does nothing). A pg-boss
 * worker fetches again only when its whole batch is done, so a batch does not wait on a slow
 * receiver for long: attempts still running after `detachAfterMs` carry on in the background, and a
 * guard job for each (the same attempt, due after the job expiry) is committed before the batch
 * returns. The guard finds the attempt recorded and does nothing, unless this process died first;
 * then it makes the attempt. A first attempt run by the process that published its event has no
 * job: its delivery's claim hands it on if this process dies (webhooks/recovery.ts), and a job
 * that carries it on takes the delivery's id, so that the two never both run it.
 *
 * Fairness: a receiver known to be slow (its attempts take longer than `detachAfterMs` on
 * average) is handed off at once, so no batch waits on it; and a webhook with `perWebhook` attempts
 * in flight gets no more: its further jobs are enqueued again for later, spread at the pace its
 * receiver answers, and the batch moves on.
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

  // Handed-off attempts of a hanging receiver time out together; recording them a few at a time
  // keeps them from taking every database connection the other deliveries need.
  const recordingSlots = new Limiter(2);
  const perWebhook = options.perWebhook ?? WEBHOOK_CONCURRENCY;
  const receivers = new Map<string, ReceiverState>();
  const receiver = (webhookId: string) => {
    let r = receivers.get(webhookId);
    if (!r) {
      // Forget idle receivers now and then (deleted webhooks), so the map stays small.
      if (receivers.size >= 10_000) {
        for (const [id, state] of receivers) if (state.inFlight === 0) receivers.delete(id);
      }
      r = { inFlight: 0, avgMs: 0, deferredUntil: 0 };
      receivers.set(webhookId, r);
    }
    return r;
  };

  const handler = async (batch: Job<DeliveryJob>[]) => {
    const now = performance.now();
    const deferred: JobItem[] = [];
    const defer = (job: DeliveryJob, r: ReceiverState) => {
      // One slot frees every avgMs / perWebhook on average: the deferred jobs follow that pace,
      // so a backlog is fetched about once rather than over and over.
      r.deferredUntil = Math.max(r.deferredUntil, now) + Math.max(r.avgMs, 100) / perWebhook;
      deferred.push({ ...carriedOn(job), startAfterMs: Math.max(50, r.deferredUntil - now) });
    };
    // Jobs that name their webhook are deferred before anything is loaded when it is at its cap.
    const capped = (job: DeliveryJob) => {
      const r = job.webhookId ? receivers.get(job.webhookId) : undefined;
      return r && r.inFlight >= perWebhook ? r : undefined;
    };
    const toLoad: DeliveryJob[] = [];
    for (const { data } of batch) {
      const r = capped(data);
      if (r) defer(data, r);
      else toLoad.push(data);
    }
    const due = await dueAttempts(deps, toLoad);
    const running: Array<
      { due: DueAttempt; receiver: ReceiverState; made?: MadeAttempt; promise: Promise<void>; slow: boolean }
    > = [];
    for (const d of due) {
      const r = receiver(d.webhookId);
      if (r.inFlight >= perWebhook) {
        defer({ ...d.job, webhookId: d.webhookId }, r);
        continue;
      }
      r.inFlight++;
      const entry = {
        due: d,
        receiver: r,
        made: undefined as MadeAttempt | undefined,
        promise: Promise.resolve(),
        slow: r.avgMs > detachAfterMs,
      };
      const started = performance.now();
      // Rejects only when the server stops mid-call: then it is not recorded, and retried later.
      entry.promise = makeAttempt(deps, d, shutdown.signal).then((outcome) =>
        void (entry.made = { due: d, outcome })
      ).finally(() => {
        r.inFlight--;
        r.avgMs = r.avgMs * 0.7 + (performance.now() - started) * 0.3;
      });
      running.push(entry);
    }
    await jobs.send(deps.db, WEBHOOK_DELIVERY_QUEUE, deferred);
    // Attempts to receivers known to be slow are handed off at once; the others get detachAfterMs.
    const quick = Promise.allSettled(running.filter((r) => !r.slow).map((r) => r.promise));
    const all = Promise.allSettled(running.map((r) => r.promise));
    if (detached.size < maxDetached) await Promise.race([quick, delay(detachAfterMs)]);
    else await all;

    const slow = running.filter((r) => !r.made);
    // A receiver that kept a batch waiting counts as slow from now on (until it answers quickly).
    for (const r of slow) r.receiver.avgMs = Math.max(r.receiver.avgMs, 2 * detachAfterMs);
    if (slow.length) {
      // Committed before the batch completes (a statement of its own: nothing to be atomic with).
      await jobs.send(
        deps.db,
        WEBHOOK_DELIVERY_QUEUE,
        slow.map((r) => ({ ...carriedOn(r.due.job), startAfterMs: EXPIRE_SECONDS * 1000 })),
      );
      for (const r of slow) {
        const recorded = r.promise
          .then(() => recordingSlots.run(() => recordAttempts(deps, [r.made!])))
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
    // An event's first attempts are made by the process that published it, without a job
    // (src/webhooks/listener.ts), and retries due within a minute by the one that scheduled them:
    // the first attempt starts ~1 ms after the commit rather than ~10 (RUN_HERE_LIMIT).
    runHere: true,
    runHereLimit: RUN_HERE_LIMIT,
    runHereBatches: 1,
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
