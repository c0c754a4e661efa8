/**
 * Starting replays: an approval that changes what its agent says gets a replay when it is proposed
 * (its job queued in the proposal's transaction), and a PENDING approval's replay can be run again.
 * Each run has its number: a job of an older run stops at its next step (./run.ts).
 */
import type { ActorContext, Deps } from "../context.ts";
import type { Tx } from "../db/client.ts";
import { QUEUED_TRANSACTION } from "../db/transaction.ts";
import { conflict } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { assertPending, lockApproval } from "../approvals/service.ts";
import { publishApprovalEvent } from "../approvals/events.ts";
import { changesReplies } from "./changes.ts";
import type { ApprovalReplay, ApprovalReplayCase, PendingApproval } from "../generated/prisma/client.ts";

export const REPLAY_QUEUE = "approval-replay";

export interface ReplayJob {
  replayId: string;
  /** The run the job is for. */
  run: number;
}

/**
 * Inside the proposal's transaction: a replay for an approval whose `after` changes what the agent
 * says (OFF when REPLAY_CONVERSATIONS is 0), its job queued. Answers its id (null: no replay).
 */
export async function createReplay(
  deps: Pick<Deps, "jobs" | "config">,
  tx: Tx,
  approval: { workspaceId: string; agentId: string; after: unknown },
): Promise<string | null> {
  if (!changesReplies(approval.after)) return null;
  const off = deps.config.replay.conversations === 0;
  const id = newId();
  await tx.approvalReplay.create({
    data: {
      id,
      workspaceId: approval.workspaceId,
      agentId: approval.agentId,
      status: off ? "OFF" : "PENDING",
    },
  });
  if (!off) await deps.jobs.send(tx, REPLAY_QUEUE, [{ data: { replayId: id, run: 1 } satisfies ReplayJob }]);
  return id;
}

/** An approval with its replay and the replay's cases, as the rerun answers it. */
export type ApprovalWithReplay = PendingApproval & {
  replay: (ApprovalReplay & { cases: ApprovalReplayCase[] }) | null;
};

/**
 * Runs the replay of a PENDING approval again (the approval's row locked meanwhile): its cases
 * cleared, its counts zeroed (its credits stay: they were spent), the next run's job queued and
 * `approval.replayed` published. A job of the earlier run still under way stops. Requires
 * `supervisor:use` (the capability's); 409 APPROVAL_NOT_PENDING when decided or expired, 409
 * REPLAY_UNAVAILABLE when the change has no replay or replay is off.
 */
export async function rerunReplay(ctx: ActorContext, approvalId: string): Promise<ApprovalWithReplay> {
  return await ctx.db.$transaction(async (tx) => {
    const approval = await lockApproval(ctx, tx, approvalId);
    assertPending(ctx, approval, "replayed");
    if (!approval.replayId) {
      throw conflict(
        "REPLAY_UNAVAILABLE",
        "This approval has no replay: its change does not change what the agent says.",
      );
    }
    if (ctx.config.replay.conversations === 0) {
      throw conflict("REPLAY_UNAVAILABLE", "Replay is off on this server (REPLAY_CONVERSATIONS=0).");
    }
    await tx.approvalReplayCase.deleteMany({ where: { replayId: approval.replayId } });
    const replay = await tx.approvalReplay.update({
      where: { id: approval.replayId },
      data: {
        run: { increment: 1 },
        status: "PENDING",
        total: 0,
        done: 0,
        same: 0,
        changed: 0,
        regressed: 0,
        failed: 0,
        error: null,
        startedAt: null,
        finishedAt: null,
      },
    });
    await ctx.jobs.send(tx, REPLAY_QUEUE, [{
      data: { replayId: replay.id, run: replay.run } satisfies ReplayJob,
    }]);
    await publishApprovalEvent(ctx, tx, "approval.replayed", approval);
    return { ...approval, replay: { ...replay, cases: [] } };
  }, QUEUED_TRANSACTION);
}
