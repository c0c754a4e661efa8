/** The worker of media jobs (src/media/job.ts): fetching and understanding WhatsApp media. */
import type { Deps } from "../../context.ts";
import type { Jobs, QueueSpec } from "../boss.ts";
import { MEDIA_QUEUE, type MediaJob, runMediaJob } from "../../media/job.ts";

export const mediaQueue: QueueSpec = {
  name: MEDIA_QUEUE,
  // Jobs are run by the process that sent them (runHere below); NOTIFY wakes a worker for the
  // retries and the backstops of a process that died.
  notify: true,
  // Above the longest run: two Graph calls, a transcription or a document, with their timeouts.
  expireInSeconds: 5 * 60,
  // Graph failures are retried by the job itself (new jobs); these retries are for crashes and errors.
  retryLimit: 5,
  retryDelay: 2,
  retryBackoff: true,
  deleteAfterSeconds: 24 * 3600,
};

export async function startMediaWorker(jobs: Jobs, deps: Deps): Promise<void> {
  await jobs.work<MediaJob>(
    MEDIA_QUEUE,
    {
      // A media job mostly waits (the Graph calls, seconds of transcription), so as many run at once
      // as run here (Jobs' RUN_HERE_LIMIT): the jobs left to the workers when that many are under
      // way (a burst of voice notes) are not throttled to a few at a time behind them.
      runHere: true,
      localConcurrency: 16,
      batchSize: 1,
      // NOTIFY and this process' timers wake the workers; the polls are only the backstop, as few
      // per second over the 16 workers as over the 4 there were.
      notifyPollingIntervalSeconds: 8,
      pollingIntervalSeconds: 2,
    },
    async (batch) => {
      for (const job of batch) {
        try {
          await runMediaJob(deps, job.data);
        } catch (error) {
          deps.logger.error("media job failed", { messageId: job.data.messageId, error });
          throw error;
        }
      }
    },
  );
}
