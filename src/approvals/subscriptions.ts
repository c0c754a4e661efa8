/**
 * `approvalEvents`: approvals of the workspace as they are created, approved,
 * rejected, expired or fail, and as their replays move on, for OWNER and MANAGER. The events are published in the transaction of
 * each change of state (./events.ts) and reach every server process through src/live/hub.ts.
 */
import { defineSubscription } from "../shared/capability.ts";
import type { LiveEvent, LiveEventType } from "../live/hub.ts";
import { enumType } from "../shared/view.ts";
import { approvalView } from "./views.ts";

const ApprovalEventType = enumType(
  "ApprovalEventType",
  ["CREATED", "APPROVED", "REJECTED", "EXPIRED", "FAILED", "REPLAYED"],
  "What happened to the approval: proposed, approved (executed), rejected, expired, approved but failed to " +
    "execute, or its replay moved on (started, a case ended, it ended).",
);

const TYPES: Partial<Record<LiveEventType, typeof ApprovalEventType.values[number]>> = {
  "approval.created": "CREATED",
  "approval.approved": "APPROVED",
  "approval.rejected": "REJECTED",
  "approval.expired": "EXPIRED",
  "approval.failed": "FAILED",
  "approval.replayed": "REPLAYED",
};

export const approvalEvents = defineSubscription({
  name: "approvalEvents",
  summary:
    "The workspace's approvals as they are created, approved, rejected, expire or fail, and as their replays start, end a case, and end.",
  action: "supervisor:use",
  params: {},
  output: {
    name: "ApprovalEvent",
    description: "What happened, and the approval as it is now.",
    typeEnum: ApprovalEventType,
    rows: { approval: { view: approvalView } },
  },
  select(event: LiveEvent) {
    const type = TYPES[event.type];
    if (!type || !event.approvalId) return null;
    return { type, approval: event.approvalId };
  },
});
