/**
 * First attempts whose process is gone. The process that publishes an event makes its deliveries'
 * first attempts itself when it can, without a job: each such delivery is claimed by it
 * (`claimedBy`, its instance id, src/db/instance.ts) until the attempt is recorded. A process is
 * alive exactly while its lock connection is open, so a killed process' claims are free the
 * moment the kernel closes its sockets. Each process with workers looks every CHECK_INTERVAL_MS, on
 * its lock connection (one small statement on a tiny index; the pool is not touched), for claims
 * whose process is gone, and then, in one transaction, ends them and queues a first-attempt job
 * for each delivery whose first attempt is still to be made.
 *
 * That job takes the delivery's id, and so does any job the dead process made to carry the attempt
 * on (a deferral, a failed run's retry: DeliveryJob.claimed): pg-boss inserts a job only once per
 * id, so the attempt is never queued twice. Row locks make two processes doing this at once end
 * each claim once. A process whose lock connection dropped while it lives (a database restart) may
 * have its claims taken: its attempt may then be made twice, with the same idempotency key, and is
 * recorded once (at least once, as for any crash).
 */
import type { Db } from "../db/client.ts";
import type { Instance } from "../db/instance.ts";
import { LIVE_INSTANCES, watchOrphanedClaims } from "../db/instance.ts";
import { sqlTransaction } from "../db/transaction.ts";
import type { JobQueue } from "../shared/jobs.ts";
import type { Logger } from "../shared/logger.ts";
import { type DeliveryJob, WEBHOOK_DELIVERY_QUEUE } from "./delivery.ts";
import { releaseDeadDeliveryClaims } from "./delivery_sql.ts";

/** How often a process looks for claims of dead processes. */
export const CHECK_INTERVAL_MS = 2_000;
/** Claims ended by one transaction, at most (the next one takes the rest at once). */
const BATCH = 500;

/** Whether a claim of a dead process is waiting: on the lock connection, over the claims' index. */
const ORPHANS_SQL = `SELECT EXISTS (SELECT 1 FROM "WebhookDelivery"
   WHERE "claimedBy" IS NOT NULL AND "claimedBy" NOT IN (${LIVE_INSTANCES})) AS found`;

export interface RecoveryDeps {
  db: Db;
  jobs: JobQueue;
  logger: Logger;
  instance: Pick<Instance, "probe">;
}

/**
 * Ends the delivery claims of dead processes and queues the first attempts they left (see the
 * module comment). Returns how many claims it ended.
 */
export async function recoverDeadDeliveryClaims(deps: Pick<RecoveryDeps, "db" | "jobs">): Promise<number> {
  let total = 0;
  for (;;) {
    const ended = await sqlTransaction(deps.db, async (tx) => {
      const rows = await releaseDeadDeliveryClaims.rows(tx, { limit: BATCH });
      await deps.jobs.send(
        tx,
        WEBHOOK_DELIVERY_QUEUE,
        rows.filter((r) => r.due).map((r) => ({
          id: r.id,
          data: { deliveryId: r.id, attempt: 1, webhookId: r.webhookId } satisfies DeliveryJob,
        })),
      );
      return rows.length;
    });
    total += ended;
    if (ended < BATCH) return total;
  }
}

/**
 * Looks for delivery claims of dead processes at once and every CHECK_INTERVAL_MS (see the module
 * comment); returns the function that stops it (once a pass under way has ended).
 */
export function watchDeadDeliveryClaims(deps: RecoveryDeps): () => Promise<void> {
  return watchOrphanedClaims(deps, {
    orphansSql: ORPHANS_SQL,
    intervalMs: CHECK_INTERVAL_MS,
    what: "delivery claims",
    async recover() {
      const ended = await recoverDeadDeliveryClaims(deps);
      if (ended) deps.logger.info("queued the first webhook attempts of a stopped process", { ended });
    },
  });
}
