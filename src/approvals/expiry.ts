/**
 * The expiry sweep (an approval lives 24 h; checked every 60 s): PENDING approvals past their
 * `expiresAt` become EXPIRED, each with its "expired" event, in batches. The conditional UPDATE
 * and SKIP LOCKED make two sweeps at once (two server processes) expire each approval once, and
 * never wait on an approval a decision holds (which itself refuses an expired one). A replay still
 * under way ends with its approval (src/replay/stop.ts).
 */
import type { Deps } from "../context.ts";
import { QUEUED_TRANSACTION } from "../db/transaction.ts";
import { publishApprovalEvents } from "./events.ts";
import { stoppedBy, stopReplays } from "../replay/stop.ts";

export async function expireApprovals(
  deps: Pick<Deps, "db" | "events">,
  now: Date,
  batchSize = 500,
): Promise<number> {
  let expired = 0;
  for (;;) {
    const n = await deps.db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<
        { id: string; workspaceId: string; agentId: string | null; replayId: string | null }[]
      >`
        UPDATE "PendingApproval" SET status = 'EXPIRED'
         WHERE id IN (
           SELECT id FROM "PendingApproval" WHERE status = 'PENDING' AND "expiresAt" <= ${now}
            ORDER BY "expiresAt" LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)
           AND status = 'PENDING'
        RETURNING id, "workspaceId", "agentId", "replayId"`;
      await stopReplays(tx, rows.map((r) => r.replayId), { error: stoppedBy("EXPIRED"), at: now });
      await publishApprovalEvents(deps, tx, "approval.expired", rows);
      return rows.length;
    }, QUEUED_TRANSACTION);
    expired += n;
    if (n < batchSize) return expired;
  }
}
