/** The declared type of src/approvals: a change the supervisor proposed, and its decision. */
import { builder } from "../builder.ts";
import { presentedField, typePlan } from "../declared.ts";
import type { Presenter } from "../../shared/view.ts";
import { enumOf } from "../common_types.ts";
import {
  ApprovalStatus,
  ApprovalTargetType,
  ApprovalToolEnum,
  presentSnapshot,
} from "../../approvals/views.ts";

/** A before/after snapshot: header values and URL credentials as the actor may see them. */
const snapshot: Presenter = { apply: presentSnapshot };

/** A change proposed by the supervisor, waiting for (or carrying) a person's decision. */
export const Approval = builder.prismaObject("PendingApproval", {
  name: "Approval",
  extensions: typePlan({ label: "Approval", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    tool: t.expose("tool", { type: enumOf(ApprovalToolEnum) }),
    targetType: t.expose("targetType", { type: enumOf(ApprovalTargetType) }),
    targetId: t.exposeID("targetId", {
      nullable: true,
      description:
        "The intent or webhook changed; for a create, null until approved, then the created record.",
    }),
    agentId: t.exposeID("agentId", { nullable: true, description: "The agent the change belongs to." }),
    before: t.field({
      type: "JSON",
      nullable: true,
      description: "What the change replaces (null for a create). Header values masked for AGENT and VIEWER.",
      ...presentedField(snapshot, (approval) => approval.before),
    }),
    after: t.field({
      type: "JSON",
      nullable: true,
      description: "What the change writes (null for a delete). Header values masked for AGENT and VIEWER.",
      ...presentedField(snapshot, (approval) => approval.after),
    }),
    rationale: t.exposeString("rationale"),
    status: t.expose("status", { type: enumOf(ApprovalStatus) }),
    supervisorMessageId: t.exposeID("supervisorMessageId", {
      nullable: true,
      description: "The supervisor message whose propose_change created it (null once the history is reset).",
    }),
    proposedBy: t.exposeID("proposedById", { nullable: true, description: "The user who was chatting." }),
    requestedBy: t.relation("requestedBy", {
      nullable: true,
      description:
        "The member whose message to the supervisor led to the proposal (null when an API token asked, or the user was deleted).",
    }),
    decidedBy: t.exposeID("decidedById", {
      nullable: true,
      description: "The user who approved or rejected.",
    }),
    decidedAt: t.expose("decidedAt", { type: "DateTime", nullable: true }),
    comment: t.exposeString("decisionComment", {
      nullable: true,
      description: "What the person who decided wrote with the decision (a rejection's optional comment).",
    }),
    expiresAt: t.expose("expiresAt", {
      type: "DateTime",
      description: "24 h after creation; then EXPIRED if still PENDING.",
    }),
    error: t.exposeString("error", { nullable: true, description: "Why executing it failed (FAILED only)." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    replay: t.relation("replay", {
      nullable: true,
      description: "The replay of a change of what the agent says (prompt, training, flags, model, " +
        "temperature): its recent conversations answered as it is and as proposed; null for other changes.",
    }),
  }),
});
