/**
 * The approval expiry sweep on a pg-boss schedule every minute (the instance runs with
 * `schedule: true`; one job per slot however many processes, and the sweep is idempotent besides).
 */
import type { Deps } from "../../context.ts";
import { expireApprovals } from "../../approvals/expiry.ts";
import type { Jobs, QueueSpec } from "../boss.ts";

export const APPROVAL_EXPIRY_QUEUE = "approval-expiry";
/** Every 60 s (cron's finest step). */
export const APPROVAL_EXPIRY_CRON = "* * * * *";

export const approvalQueues: QueueSpec[] = [
  // A missed run is made up by the next one. NOTIFY: the job sent for a minute wakes a worker at
  // once (of whichever process), rather than up to a polling interval later.
  {
    name: APPROVAL_EXPIRY_QUEUE,
    notify: true,
    retryLimit: 0,
    expireInSeconds: 5 * 60,
    deleteAfterSeconds: 3600,
  },
];

export async function startApprovalWorkers(jobs: Jobs, deps: Deps): Promise<void> {
  await jobs.boss.schedule(APPROVAL_EXPIRY_QUEUE, APPROVAL_EXPIRY_CRON);
  await jobs.work(APPROVAL_EXPIRY_QUEUE, { pollingIntervalSeconds: 30 }, async () => {
    const expired = await expireApprovals(deps, deps.clock.now());
    if (expired) deps.logger.info("approvals expired", { expired });
  });
}
