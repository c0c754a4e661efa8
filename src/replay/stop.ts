/**
 * A replay ends with its approval: the decision (approve, reject) and the expiry sweep end a replay
 * still PENDING or RUNNING in their own transaction, so what they answer is what the approval's reads
 * show from then on, and the replay's job stops at its next step (./run.ts).
 */
import type { Tx } from "../db/client.ts";

/** What an approval's row carries along wherever it is answered: its replay with the cases in order. */
export const WITH_REPLAY = { replay: { include: { cases: { orderBy: { position: "asc" as const } } } } };

/** Why a replay stopped, by its approval's status. */
export function stoppedBy(status: string): string {
  if (status === "EXPIRED") return "Stopped: the approval expired first.";
  // A FAILED approval was approved, and executing it failed.
  const decided = status === "REJECTED" ? "rejected" : "approved";
  return `Stopped: the approval was ${decided} first.`;
}

/** Inside the decision's transaction: the replays of `replayIds` that have not ended stop, FAILED with `error`. */
export async function stopReplays(
  tx: Tx,
  replayIds: ReadonlyArray<string | null>,
  end: { error: string; at: Date },
): Promise<void> {
  const ids = replayIds.filter((id) => id !== null);
  if (!ids.length) return;
  await tx.approvalReplay.updateMany({
    where: { id: { in: ids }, status: { in: ["PENDING", "RUNNING"] } },
    data: { status: "FAILED", error: end.error, finishedAt: end.at },
  });
}
