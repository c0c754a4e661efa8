/**
 * What the API can do with approvals, declared once (see shared/capability.ts). Reads and decisions
 * are for OWNER and MANAGER; deciding also needs a person (API token 403).
 */
import { z } from "zod";
import { defineOperation, defineRead } from "../shared/capability.ts";
import { text } from "../shared/validation.ts";
import * as service from "./service.ts";
import { ApprovalStatus, approvalView } from "./views.ts";

const approvalParam = { approvalId: "Approval" } as const;

/** The longest comment a rejection keeps. */
const MAX_COMMENT_CHARS = 2_000;

/** A rejection's body: optional, as is its comment (no body at all rejects without one). */
const rejectSchema = z.strictObject({
  comment: text(MAX_COMMENT_CHARS).optional().describe(
    `Why it was rejected, shown on the approval (at most ${MAX_COMMENT_CHARS} characters).`,
  ),
}).prefault({});

export const approvals = defineRead({
  name: "approvals",
  summary: "The workspace's approvals, newest first, optionally of one status (`status=PENDING`).",
  action: "supervisor:use",
  params: {},
  from: { view: approvalView, order: "desc" },
  filters: { status: ApprovalStatus },
  http: { path: "/api/approvals" },
});

export const approval = defineRead({
  name: "approval",
  summary: "One approval with its before/after.",
  action: "supervisor:use",
  params: approvalParam,
  from: { view: approvalView, idParam: "approvalId" },
  http: { path: "/api/approvals/{approvalId}" },
});

/** Every approval comes from the supervisor's propose_change, so its change list is every approval. */
export const supervisorChanges = defineRead({
  name: "supervisorChanges",
  summary: "The changes the supervisor proposed (approvals of every status), newest first.",
  action: "supervisor:use",
  params: {},
  from: { view: approvalView, order: "desc" },
  http: { path: "/api/supervisor/changes" },
});

export const approveApproval = defineOperation({
  name: "approveApproval",
  summary:
    "Approves a PENDING approval and executes its change in the same transaction (a person only: API tokens get 403). 409 APPROVAL_NOT_PENDING when decided or expired, 409 STALE_APPROVAL (it stays PENDING) when the target changed since the proposal; a change the service refuses now answers the FAILED approval with its error.",
  access: { kind: "workspace", action: "approval:decide" },
  guard: service.requirePerson,
  params: approvalParam,
  target: "approvalId",
  output: { view: approvalView },
  http: { method: "POST", path: "/api/approvals/{approvalId}/approve" },
  run: (ctx, { approvalId }) => service.approve(ctx, approvalId),
});

export const rejectApproval = defineOperation({
  name: "rejectApproval",
  summary:
    "Rejects a PENDING approval, with an optional comment kept on it; nothing is executed (a person only: API tokens get 403). 409 APPROVAL_NOT_PENDING when decided or expired.",
  access: { kind: "workspace", action: "approval:decide" },
  guard: service.requirePerson,
  params: approvalParam,
  target: "approvalId",
  input: rejectSchema,
  output: { view: approvalView },
  http: { method: "POST", path: "/api/approvals/{approvalId}/reject" },
  run: (ctx, { approvalId }, input) => service.reject(ctx, approvalId, input),
});
