/**
 * What the API can do with replays, declared once (see shared/capability.ts): run an approval's
 * replay again, and pin conversations for an agent's replays. OWNER and MANAGER (`supervisor:use`),
 * as approvals; an approval's replay is read with the approval.
 */
import { defineOperation, defineRead } from "../shared/capability.ts";
import { agentView } from "../agents/views.ts";
import { approvalView } from "../approvals/views.ts";
import { replayPinView } from "./views.ts";
import { pinConversation, pinSchema, unpinConversation } from "./pins.ts";
import { rerunReplay } from "./start.ts";

export const replayApproval = defineOperation({
  name: "replayApproval",
  summary:
    "Runs the approval's replay again: its cases cleared, the agent's latest conversations and pinned ones asked again as the agent is and as proposed; answers the approval with its replay PENDING. 409 APPROVAL_NOT_PENDING when decided or expired, 409 REPLAY_UNAVAILABLE when the change has no replay or replay is off.",
  access: { kind: "workspace", action: "supervisor:use" },
  params: { approvalId: "Approval" },
  target: "approvalId",
  output: { view: approvalView },
  http: { method: "POST", path: "/api/approvals/{approvalId}/replay", status: 202 },
  run: (ctx, { approvalId }) => rerunReplay(ctx, approvalId),
});

export const replayCases = defineRead({
  name: "replayCases",
  summary:
    "The conversations pinned for the agent's replays (every replay of a change of the agent includes them), oldest first.",
  action: "supervisor:use",
  params: { agentId: "Agent" },
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "replayPins" }],
  http: { path: "/api/agents/{agentId}/replay-cases" },
  rest: { unpaged: true },
});

export const pinReplayCase = defineOperation({
  name: "pinReplayCase",
  summary:
    "Pins a conversation of the agent for its replays (pinning it again answers the same pin); 404 for a conversation of another agent.",
  access: { kind: "workspace", action: "supervisor:use" },
  params: { agentId: "Agent" },
  input: pinSchema,
  output: { view: replayPinView },
  http: { method: "POST", path: "/api/agents/{agentId}/replay-cases", status: 201 },
  run: (ctx, { agentId }, input) => pinConversation(ctx, agentId, input),
});

export const unpinReplayCase = defineOperation({
  name: "unpinReplayCase",
  summary: "Unpins a conversation of the agent's replays; 404 when it is not pinned.",
  access: { kind: "workspace", action: "supervisor:use" },
  params: { agentId: "Agent", conversationId: "Conversation" },
  output: { none: true },
  http: { method: "DELETE", path: "/api/agents/{agentId}/replay-cases/{conversationId}", status: 204 },
  run: async (ctx, ids) => await unpinConversation(ctx, ids),
});
