/**
 * Attempts of deliveries, as the delivery jobs make them: load, send, record, and on failure
 * schedule the next attempt (3 attempts, the second 1 s and the third 4 s after a failure;
 * `lastError` after the third failure). Attempts are numbered across redeliveries: a redelivery
 * starts a new cycle of 3 at attemptCount + 1. Batch-shaped, because a worker fetches jobs in
 * batches: one query loads a batch, one statement records its successes.
 */
import pg from "pg";
import type { Db, Tx } from "../db/client.ts";
import { Prisma } from "../generated/prisma/client.ts";
import type { Clock } from "../shared/clock.ts";
import type { JobQueue } from "../shared/jobs.ts";
import type { Logger } from "../shared/logger.ts";
import type { OutboundPolicy } from "../shared/outbound.ts";
import { type SecretBox, SecretBoxError } from "../shared/secret_box.ts";
import { openUrlSecrets } from "../shared/url_secrets.ts";
import type { DeliveryStatus } from "../generated/prisma/enums.ts";
import { type AttemptOutcome, sendWebhook, type WebhookCall } from "./sender.ts";
import { loadDeliveries, recordAttempts as recordAttemptsSql } from "./delivery_sql.ts";

export const WEBHOOK_DELIVERY_QUEUE = "webhook-delivery";

/** Attempts per cycle (the first delivery, and each redelivery). */
export const ATTEMPTS_PER_CYCLE = 3;
/** Wait after a failed attempt, by its position in the cycle (1, 2); none after the third. */
export const RETRY_DELAYS_MS = [1000, 4000] as const;

/** The data of a delivery job: which delivery, and which attempt (1-based, across cycles). */
export interface DeliveryJob {
  deliveryId: string;
  attempt: number;
  /** The delivery's webhook, so a worker can apply its per-webhook cap before loading anything. */
  webhookId?: string;
  /**
   * Attempt 1 run by the process that published the event, which claimed the delivery (no job
   * row): any job made to carry it on takes the delivery's id, as the recovery's does
   * (webhooks/recovery.ts), so that the two are never both queued.
   */
  claimed?: true;
}

export interface DeliveryDeps {
  db: Db;
  clock: Clock;
  outbound: OutboundPolicy;
  jobs: JobQueue;
  logger: Logger;
  secrets: SecretBox;
}

/** `lastError` of a webhook once a cycle of attempts is exhausted. */
export interface WebhookLastError {
  status: number | null;
  error: string | null;
  at: string;
  attempts: number;
  deliveryId: string;
  event: string;
}

export type AttemptResult = "succeeded" | "retrying" | "failed" | "skipped";

/**
 * How long after `now` the attempt following a failed one is due: RETRY_DELAYS_MS counted from the
 * failure (the end of the attempt, 5 s after its start for a timeout), not from when it is recorded,
 * which may be later (recording waits for a database connection); 0 when that time has passed.
 */
export function retryDelayMs(position: number, outcome: AttemptOutcome, now: Date): number {
  const failedAt = outcome.startedAt.getTime() + outcome.durationMs;
  return Math.max(0, failedAt + RETRY_DELAYS_MS[position - 1] - now.getTime());
}

/** The attempt's position in its cycle: 1, 2 or 3. */
export function cyclePosition(attempt: number): number {
  return ((attempt - 1) % ATTEMPTS_PER_CYCLE) + 1;
}

/**
 * A unique violation, from a model query (P2002), a raw one (P2010 carrying SQLSTATE 23505) or a
 * declared statement on the pool's fast path (pg's error, SQLSTATE 23505).
 */
function isUniqueViolation(e: unknown): boolean {
  if (e instanceof pg.DatabaseError) return e.code === "23505";
  if (!(e instanceof Prisma.PrismaClientKnownRequestError)) return false;
  return e.code === "P2002" || (e.code === "P2010" && JSON.stringify(e.meta ?? {}).includes("23505"));
}

/** An attempt that is due: its job, and what the call needs. */
export interface DueAttempt {
  job: DeliveryJob;
  webhookId: string;
  eventType: string;
  call: WebhookCall;
  /** Set when the webhook's stored secrets cannot be opened (unknown key id): the attempt fails with it. */
  sealError?: string;
}

/**
 * Loads the deliveries of `jobs` in one query and returns the attempts still due, in job order. A
 * job is dropped when its delivery is gone (webhook deleted) or has moved on: the attempt is already
 * recorded (a job retried after a crash) or the delivery is no longer PENDING.
 */
export async function dueAttempts(
  { db, secrets }: Pick<DeliveryDeps, "db" | "secrets">,
  jobs: DeliveryJob[],
): Promise<DueAttempt[]> {
  if (!jobs.length) return [];
  const rows = await loadDeliveries.rows(db, { ids: jobs.map((j) => j.deliveryId) });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return jobs.flatMap((job) => {
    const d = byId.get(job.deliveryId);
    if (!d || d.status !== "PENDING" || d.attemptCount !== job.attempt - 1) return [];
    const call: WebhookCall = {
      url: d.url,
      method: d.method,
      headers: {},
      signingSecret: "",
      previousSecret: null,
      messageId: d.eventId,
      idempotencyKey: d.idempotencyKey,
      payload: d.payload,
    };
    let sealError: string | undefined;
    try {
      // Stored sealed (shared/secret_box.ts); opened only here, for the call.
      call.url = openUrlSecrets(secrets, d.url);
      call.headers = secrets.openValues(d.headers);
      call.signingSecret = secrets.open(d.signingSecret);
      if (d.previousSigningSecret && d.previousSecretExpiresAt) {
        call.previousSecret = {
          signingSecret: secrets.open(d.previousSigningSecret),
          expiresAt: d.previousSecretExpiresAt,
        };
      }
    } catch (e) {
      if (!(e instanceof SecretBoxError)) throw e;
      sealError = `secrets: ${e.message}`;
    }
    return [{ job, webhookId: d.webhookId, eventType: d.eventType, call, sealError }];
  });
}

/** Makes the HTTP call of a due attempt (see sendWebhook); rejects only when `signal` aborts it. */
export function makeAttempt(
  deps: DeliveryDeps,
  due: DueAttempt,
  signal?: AbortSignal,
): Promise<AttemptOutcome> {
  if (due.sealError) {
    // Never sent unsigned: a failed attempt that says why (visible in the delivery log and lastError).
    deps.logger.error("webhook secrets cannot be opened", { webhookId: due.webhookId, error: due.sealError });
    return Promise.resolve({
      ok: false,
      httpStatus: null,
      error: due.sealError,
      startedAt: deps.clock.now(),
      durationMs: 0,
    });
  }
  return sendWebhook(due.call, { outbound: deps.outbound, now: () => deps.clock.now(), signal });
}

export interface MadeAttempt {
  due: DueAttempt;
  outcome: AttemptOutcome;
}

/**
 * Records attempts that were made. Successes go in one statement; each failure in a transaction of
 * its own that also schedules the next attempt, or sets `lastError` after the third. An attempt
 * that another worker recorded first (the unique (deliveryId, number)) counts as skipped.
 */
export async function recordAttempts(deps: DeliveryDeps, made: MadeAttempt[]): Promise<AttemptResult[]> {
  const ok = made.filter((m) => m.outcome.ok);
  let okResults: AttemptResult[] = ok.map(() => "succeeded");
  if (ok.length > 1) {
    try {
      await insertAttempts(deps, deps.db, ok, "SUCCEEDED");
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      // One of them was recorded elsewhere: record the others one by one.
      okResults = await Promise.all(ok.map((m) => recordOne(deps, m)));
    }
  } else if (ok.length === 1) {
    okResults = [await recordOne(deps, ok[0])];
  }
  const failedResults = await Promise.all(made.filter((m) => !m.outcome.ok).map((m) => recordOne(deps, m)));
  const results = new Map<MadeAttempt, AttemptResult>();
  ok.forEach((m, i) => results.set(m, okResults[i]));
  made.filter((m) => !m.outcome.ok).forEach((m, i) => results.set(m, failedResults[i]));
  return made.map((m) => results.get(m)!);
}

/** Loads, makes and records one attempt. */
export async function runDeliveryAttempt(
  deps: DeliveryDeps,
  job: DeliveryJob,
  options: { signal?: AbortSignal } = {},
): Promise<AttemptResult> {
  const [due] = await dueAttempts(deps, [job]);
  if (!due) return "skipped";
  const outcome = await makeAttempt(deps, due, options.signal);
  return (await recordAttempts(deps, [{ due, outcome }]))[0];
}

async function recordOne(deps: DeliveryDeps, made: MadeAttempt): Promise<AttemptResult> {
  const { job } = made.due;
  const position = cyclePosition(job.attempt);
  const result: AttemptResult = made.outcome.ok
    ? "succeeded"
    : position < ATTEMPTS_PER_CYCLE
    ? "retrying"
    : "failed";
  try {
    if (result === "succeeded") await insertAttempts(deps, deps.db, [made], "SUCCEEDED");
    else {
      await deps.db.$transaction(async (tx) => {
        await insertAttempts(deps, tx, [made], result === "failed" ? "FAILED" : "PENDING");
        if (result === "retrying") {
          const next: DeliveryJob = {
            deliveryId: job.deliveryId,
            attempt: job.attempt + 1,
            webhookId: made.due.webhookId,
          };
          await deps.jobs.send(tx, WEBHOOK_DELIVERY_QUEUE, [{
            data: next,
            startAfterMs: retryDelayMs(position, made.outcome, deps.clock.now()),
          }]);
        } else await setLastError(deps, tx, made);
      });
    }
    return result;
  } catch (e) {
    if (isUniqueViolation(e)) return "skipped";
    throw e;
  }
}

/** Inserts the attempts and moves their deliveries to `status`, in one statement. */
async function insertAttempts(
  deps: DeliveryDeps,
  tx: Tx,
  made: MadeAttempt[],
  status: DeliveryStatus,
): Promise<void> {
  await recordAttemptsSql.run(tx, {
    attempts: made.map(({ due, outcome }) => ({
      id: crypto.randomUUID(),
      deliveryId: due.job.deliveryId,
      number: due.job.attempt,
      startedAt: outcome.startedAt,
      durationMs: outcome.durationMs,
      httpStatus: outcome.httpStatus,
      error: outcome.error,
    })),
    status,
    now: deps.clock.now(),
  });
}

async function setLastError(deps: DeliveryDeps, tx: Tx, { due, outcome }: MadeAttempt): Promise<void> {
  const lastError: WebhookLastError = {
    status: outcome.httpStatus,
    error: outcome.error,
    at: deps.clock.now().toISOString(),
    attempts: ATTEMPTS_PER_CYCLE,
    deliveryId: due.job.deliveryId,
    event: due.eventType,
  };
  await tx.eventWebhook.update({
    where: { id: due.webhookId },
    data: { lastError: lastError as unknown as Prisma.InputJsonValue },
    select: { id: true },
  });
}
