/** Approval events: published in the transaction of each change of state, followed by `approvalEvents`. */
import type { Deps } from "../context.ts";
import type { SqlTx } from "../db/client.ts";
import type { ApprovalEventType } from "../shared/events.ts";

type ApprovalRef = { id: string; workspaceId: string; agentId: string | null };

export async function publishApprovalEvent(
  deps: Pick<Deps, "events">,
  tx: SqlTx,
  type: ApprovalEventType,
  approval: ApprovalRef,
): Promise<void> {
  await publishApprovalEvents(deps, tx, type, [approval]);
}

/** The same event for each of `approvals`, as one batch (src/shared/events.ts). */
export async function publishApprovalEvents(
  deps: Pick<Deps, "events">,
  tx: SqlTx,
  type: ApprovalEventType,
  approvals: ApprovalRef[],
): Promise<void> {
  await deps.events.publishAll(
    tx,
    approvals.map((approval) => ({
      type,
      workspaceId: approval.workspaceId,
      // Every change targets something of an agent; the bus keys events by agent.
      agentId: approval.agentId ?? "",
      data: { approvalId: approval.id },
    })),
  );
}
