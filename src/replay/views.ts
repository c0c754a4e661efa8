/**
 * The readable types of src/replay: an approval's replay with its cases, and a pinned conversation,
 * declared with Pothos (src/graphql/types/replay.ts).
 */
import { declaredType, enumType } from "../shared/view.ts";

export const ReplayStatus = enumType(
  "ReplayStatus",
  ["PENDING", "RUNNING", "DONE", "FAILED", "OFF"],
  "PENDING until its job starts, RUNNING while cases are asked, DONE, FAILED (it could not run, or it " +
    "stopped: the approval was decided or expired; `error` says why), OFF (REPLAY_CONVERSATIONS=0).",
);

export const ReplayCaseStatus = enumType(
  "ReplayCaseStatus",
  ["PENDING", "DONE", "FAILED"],
  "PENDING until both answers and the verdict are in; FAILED when a model call failed (`error`).",
);

export const ReplayVerdict = enumType(
  "ReplayVerdict",
  ["SAME", "CHANGED", "REGRESSED"],
  "SAME: the same intents and transfer, and an answer judged as good; CHANGED: an intent or a transfer " +
    "gained, or an answer judged better or different; REGRESSED: an intent or a transfer the stored " +
    "reply had is lost, or the proposed answer is judged worse.",
);

/** A replay of an approval: declared with Pothos (src/graphql/types/replay.ts). */
export const replayView = declaredType("ApprovalReplay");
/** A conversation an agent's replays always include. */
export const replayPinView = declaredType("ReplayPin");
