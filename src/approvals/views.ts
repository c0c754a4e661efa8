/**
 * The readable type of src/approvals: a pending approval and its decision, declared with Pothos
 * (src/graphql/types/approvals.ts), and what an actor sees of its snapshots.
 */
import { can } from "../auth/permissions.ts";
import type { ActorContext } from "../context.ts";
import { declaredType, enumType } from "../shared/view.ts";
import { MASK, maskUrlSecrets, openUrlSecrets } from "../shared/url_secrets.ts";
import { WITH_REPLAY } from "../replay/stop.ts";
import { userPrivate } from "../workspaces/views.ts";

/** Who asked for a change: the member whose supervisor message led to it (never their password hash). */
export const WITH_REQUESTER = { requestedBy: { omit: userPrivate } } as const;

/** What an approval's row carries wherever it is answered: who asked, and its replay with its cases. */
export const APPROVAL_INCLUDE = { ...WITH_REPLAY, ...WITH_REQUESTER } as const;

export const APPROVAL_TOOLS = [
  "update_agent_prompt",
  "update_agent_training",
  "toggle_agent_active",
  "create_intent",
  "update_intent",
  "delete_intent",
  "create_webhook",
  "update_webhook",
  "delete_webhook",
] as const;
export type ApprovalTool = typeof APPROVAL_TOOLS[number];

export const ApprovalToolEnum = enumType(
  "ApprovalTool",
  APPROVAL_TOOLS,
  "The change an approval executes (the supervisor's propose_change tool values).",
);

export const ApprovalStatus = enumType(
  "ApprovalStatus",
  ["PENDING", "APPROVED", "REJECTED", "EXPIRED", "FAILED"],
  "PENDING until approved (executed), rejected, expired (24 h) or failed (approved, but executing it failed).",
);

export const ApprovalTargetType = enumType(
  "ApprovalTargetType",
  ["AGENT", "INTENT", "WEBHOOK"],
  "What the change acts on.",
);

/**
 * A before/after snapshot as the actor may see it. Webhook header values and URLs' credential-like
 * query values are stored sealed: opened for roles with webhook:secrets, masked for the others, as
 * the Webhook and Intent views show them. Signing secrets are never in a
 * snapshot (src/approvals/changes.ts).
 */
export function presentSnapshot(ctx: ActorContext, stored: unknown): unknown {
  if (stored === null || typeof stored !== "object" || Array.isArray(stored)) return stored;
  const out: Record<string, unknown> = { ...stored as Record<string, unknown> };
  const secrets = can(ctx.actor, "webhook:secrets");
  if (out.headers && typeof out.headers === "object") {
    const headers = out.headers as Record<string, string>;
    out.headers = secrets
      ? ctx.secrets.openValues(headers)
      : Object.fromEntries(Object.keys(headers).map((k) => [k, MASK]));
  }
  for (const key of ["url", "webhookUrl"]) {
    if (typeof out[key] !== "string") continue;
    const url = out[key] as string;
    out[key] = secrets ? openUrlSecrets(ctx.secrets, url) : maskUrlSecrets(url);
  }
  return out;
}

/** A change proposed by the supervisor: declared with Pothos (src/graphql/types/approvals.ts). */
export const approvalView = declaredType("Approval");
