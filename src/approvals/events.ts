/** Approval events: published in the transaction of each change of state, followed by `approvalEvents`. */
import type { Deps } from "../context.ts";
import type { Tx } from "../db/client.ts";
import type { ApprovalEventType } from "../shared/events.ts";

export async function publishApprovalEvent(
  deps: Pick<Deps, "events">,
  tx: Tx,
  type: ApprovalEventType,
  approval: { id: string; workspaceId: string; agentId: string | null },
): Promise<void> {
  await deps.events.publish(tx, {
    type,
    workspaceId: approval.workspaceId,
    // Every change targets something of an agent; the bus keys events by agent.
    agentId: approval.agentId ?? "",
    data: { approvalId: approval.id },
  });
}
