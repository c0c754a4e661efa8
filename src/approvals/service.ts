/**
 * Deciding approvals (docs/behaviour.md "The supervisor and approvals"): approve executes the proposed change through the
 * domain's own service function in the transaction that records the decision; reject executes
 * nothing. The approval row is locked (FOR UPDATE) first, so of two decisions at once, in any
 * processes, one finds it PENDING and the other finds it decided (409). The target's row is locked
 * next and compared with `before`: changed or gone since the proposal → 409 STALE_APPROVAL and the
 * approval stays PENDING. A decision ends the approval's replay if it is still under way
 * (src/replay/stop.ts); the decided approval is answered with it.
 */
import type { ActorContext } from "../context.ts";
import type { Tx } from "../db/client.ts";
import { joinTransaction, QUEUED_TRANSACTION, withSavepoint } from "../db/transaction.ts";
import { AppError, conflict, forbidden, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { CHANGE_KINDS, openSnapshot, sameJson } from "./changes.ts";
import { publishApprovalEvent } from "./events.ts";
import type { PendingApproval } from "../generated/prisma/client.ts";
import { stoppedBy, stopReplays } from "../replay/stop.ts";
import { APPROVAL_INCLUDE, WITH_REQUESTER } from "./views.ts";

/** Approving or rejecting needs a person, so a proposal is never approved by a script: an API token gets 403. */
export function requirePerson(ctx: ActorContext): Promise<void> {
  if (ctx.actor.kind !== "user" || !ctx.actor.userId) {
    throw forbidden("Approving or rejecting needs a person signed in; an API token cannot decide approvals.");
  }
  return Promise.resolve();
}

/** The approval of the actor's workspace, its row locked until the transaction ends; 404 otherwise. */
export async function lockApproval(ctx: ActorContext, tx: Tx, approvalId: string): Promise<PendingApproval> {
  const id = assertId(approvalId, "Approval");
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM "PendingApproval" WHERE id = ${id} AND "workspaceId" = ${ctx.actor.workspaceId} FOR UPDATE`;
  if (!locked.length) throw notFound("Approval");
  return await tx.pendingApproval.findUniqueOrThrow({ where: { id }, include: WITH_REQUESTER });
}

/** PENDING and not past its expiry (one the sweep has not reached yet counts as expired). */
export function assertPending(ctx: ActorContext, row: PendingApproval, verb: string): void {
  if (row.status === "PENDING" && row.expiresAt <= ctx.clock.now()) {
    throw conflict(
      "APPROVAL_NOT_PENDING",
      `The approval has expired; only a PENDING approval can be ${verb}.`,
    );
  }
  if (row.status !== "PENDING") {
    throw conflict(
      "APPROVAL_NOT_PENDING",
      `The approval is ${row.status}; only a PENDING approval can be ${verb}.`,
    );
  }
}

const stale = () =>
  conflict(
    "STALE_APPROVAL",
    "What this approval changes has changed (or is gone) since it was proposed; it stays PENDING.",
  );

/**
 * Approves and executes. An error of the change itself (the service refusing it now: a duplicate
 * intent tag, a URL no longer allowed) undoes the change, keeps the decision as FAILED with the
 * error, and answers the FAILED approval (the stored row).
 */
export async function approve(ctx: ActorContext, approvalId: string): Promise<PendingApproval> {
  await requirePerson(ctx);
  return await ctx.db.$transaction(async (tx) => {
    const approval = await lockApproval(ctx, tx, approvalId);
    assertPending(ctx, approval, "approved");
    const kind = CHANGE_KINDS[approval.tool];
    const run: ActorContext = { ...ctx, db: joinTransaction(tx) };
    const targetId = kind.targetKey === "agentId" ? approval.agentId : approval.targetId;
    const before = openSnapshot(ctx, approval.before);
    const current = await kind.resolve(run, targetId ?? "", tx).catch((e) => {
      throw e instanceof AppError && e.status === 404 ? stale() : e;
    });
    if (!sameJson(current.before, before)) throw stale();
    const decided = { decidedById: ctx.actor.userId, decidedAt: ctx.clock.now() };
    await stopReplays(tx, [approval.replayId], { error: stoppedBy("APPROVED"), at: decided.decidedAt });
    let done: PendingApproval;
    try {
      const changedId = await withSavepoint(tx, () =>
        kind.execute(run, {
          targetId: approval.targetId,
          agentId: current.agentId,
          before,
          after: openSnapshot(ctx, approval.after),
          rationale: approval.rationale,
        }));
      done = await tx.pendingApproval.update({
        where: { id: approval.id },
        data: { status: "APPROVED", ...decided, targetId: changedId },
        include: APPROVAL_INCLUDE,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      done = await tx.pendingApproval.update({
        where: { id: approval.id },
        data: { status: "FAILED", ...decided, error: `${error.code}: ${error.message}` },
        include: APPROVAL_INCLUDE,
      });
    }
    const type = done.status === "APPROVED" ? "approval.approved" : "approval.failed";
    await publishApprovalEvent(ctx, tx, type, { ...done, workspaceId: ctx.actor.workspaceId });
    return done;
  }, QUEUED_TRANSACTION);
}

/** Rejects: nothing is executed; the optional comment is kept on the approval. Answers the stored row. */
export async function reject(
  ctx: ActorContext,
  approvalId: string,
  { comment }: { comment?: string } = {},
): Promise<PendingApproval> {
  await requirePerson(ctx);
  return await ctx.db.$transaction(async (tx) => {
    const approval = await lockApproval(ctx, tx, approvalId);
    assertPending(ctx, approval, "rejected");
    const decidedAt = ctx.clock.now();
    await stopReplays(tx, [approval.replayId], { error: stoppedBy("REJECTED"), at: decidedAt });
    const done = await tx.pendingApproval.update({
      where: { id: approval.id },
      data: {
        status: "REJECTED",
        decidedById: ctx.actor.userId,
        decidedAt,
        decisionComment: comment ?? null,
      },
      include: APPROVAL_INCLUDE,
    });
    await publishApprovalEvent(ctx, tx, "approval.rejected", { ...done, workspaceId: ctx.actor.workspaceId });
    return done;
  }, QUEUED_TRANSACTION);
}
