/**
 * The replay worker (src/replay/run.ts): one replay at a time per process, on a queue of its own, so
 * replays never take a reply worker. Its model calls share this process' REPLAY_CONCURRENCY slots and
 * give way to live replies (../live_replies.ts). A job whose process died is taken again once it
 * expires and starts its run over.
 */
import pLimit from "p-limit";
import type { Deps } from "../../context.ts";
import type { Jobs, QueueSpec } from "../boss.ts";
import type { LiveReplies } from "../live_replies.ts";
import { REPLAY_QUEUE, type ReplayJob } from "../../replay/start.ts";
import { runReplay } from "../../replay/run.ts";

export const replayQueues: QueueSpec[] = [
  {
    name: REPLAY_QUEUE,
    notify: true,
    // Above the longest replay: 100 cases of three calls, each at most LLM_TIMEOUT_MS, four at a time.
    expireInSeconds: 2 * 3600,
    retryLimit: 1,
    retryDelay: 30,
    deleteAfterSeconds: 24 * 3600,
  },
];

export async function startReplayWorker(jobs: Jobs, deps: Deps, live: LiveReplies): Promise<void> {
  const limit = pLimit(deps.config.replay.concurrency);
  const bounds = { limit, liveRoom: () => live.room() };
  await jobs.work<ReplayJob>(
    REPLAY_QUEUE,
    { localConcurrency: 1, batchSize: 1, pollingIntervalSeconds: 10 },
    async (batch) => {
      for (const job of batch) {
        try {
          await runReplay(deps, job.data, bounds);
        } catch (error) {
          deps.logger.error("replay failed", { replayId: job.data.replayId, error });
          throw error;
        }
      }
    },
  );
}
