/**
 * The conversation workers: reply jobs (the grouping window closed), message sends (one attempt of
 * one outgoing message) and the timers (reminder, auto-close). Each job re-checks the stored state
 * when it runs (conversations/pipeline/reply.ts, outbound.ts, timers.ts), so one that runs late,
 * twice, or in two processes at once acts once.
 */
import type { Deps } from "../../context.ts";
import type { Jobs, QueueSpec } from "../boss.ts";
import { REPLY_QUEUE, type ReplyJob } from "../../conversations/pipeline/window.ts";
import { ReplyInProgress, runReply } from "../../conversations/pipeline/reply.ts";
import { MESSAGE_SEND_QUEUE, type SendJob, sendMessage } from "../../conversations/outbound.ts";
import { CONVERSATION_TIMER_QUEUE, runTimer, type TimerJob } from "../../conversations/timers.ts";

export const conversationQueues: QueueSpec[] = [
  // A reply waits for the model and the intent calls; a crash is retried after it expires. A job
  // that finds another reply in progress fails and is retried a second later.
  {
    name: REPLY_QUEUE,
    notify: true,
    expireInSeconds: 15 * 60,
    retryLimit: 20,
    retryDelay: 1,
    deleteAfterSeconds: 3600,
  },
  // WhatsApp's retryable errors are retried by the send itself (a new job); these retries are for crashes.
  {
    name: MESSAGE_SEND_QUEUE,
    notify: true,
    expireInSeconds: 30,
    retryLimit: 3,
    retryDelay: 2,
    deleteAfterSeconds: 3600,
  },
  {
    name: CONVERSATION_TIMER_QUEUE,
    expireInSeconds: 60,
    retryLimit: 3,
    retryDelay: 5,
    deleteAfterSeconds: 3600,
  },
];

const OPTIONS = {
  localConcurrency: 2,
  batchSize: 1,
  notifyPollingIntervalSeconds: 1,
  pollingIntervalSeconds: 1,
} as const;

export async function startConversationWorkers(jobs: Jobs, deps: Deps): Promise<void> {
  await jobs.work<ReplyJob>(REPLY_QUEUE, OPTIONS, async (batch) => {
    for (const job of batch) {
      try {
        await runReply(deps, job.data);
      } catch (error) {
        if (!(error instanceof ReplyInProgress)) deps.logger.error("reply failed", { error });
        throw error;
      }
    }
  });
  await jobs.work<SendJob>(MESSAGE_SEND_QUEUE, { ...OPTIONS, localConcurrency: 4 }, async (batch) => {
    for (const job of batch) await sendMessage({ ...deps, jobs }, job.data);
  });
  await jobs.work<TimerJob>(CONVERSATION_TIMER_QUEUE, OPTIONS, async (batch) => {
    for (const job of batch) await runTimer(deps, job.data);
  });
}
