/**
 * The conversation workers: reply jobs (the grouping window closed), message sends (one attempt of
 * one outgoing message) and the timers (reminder, auto-close). Each job re-checks the stored state
 * when it runs (conversations/pipeline/reply.ts, outbound.ts, timers.ts), so one that runs late,
 * twice, or in two processes at once acts once.
 */
import type { Deps } from "../../context.ts";
import type { Jobs, QueueSpec } from "../boss.ts";
import type { LiveReplies } from "../live_replies.ts";
import { REPLY_QUEUE, type ReplyJob } from "../../conversations/pipeline/window.ts";
import { runReply, sweepUnanswered } from "../../conversations/pipeline/reply.ts";
import { MESSAGE_SEND_QUEUE, type SendJob, sendMessage } from "../../conversations/outbound.ts";
import { CONVERSATION_TIMER_QUEUE, runTimer, type TimerJob, timerKey } from "../../conversations/timers.ts";

/** Conversations with customer messages no reply handled get a reply job (reply.ts sweepUnanswered). */
export const REPLY_SWEEP_QUEUE = "conversation-reply-sweep";
export const REPLY_SWEEP_CRON = "* * * * *";

export const conversationQueues: QueueSpec[] = [
  // A reply waits for the model and the intent calls; a crash is retried after it expires. A job
  // that finds another reply in progress is not a failure: it queues itself for when that claim
  // would be stale (reply.ts). These retries are for errors; the reply sweep comes after them.
  {
    name: REPLY_QUEUE,
    notify: true,
    expireInSeconds: 15 * 60,
    retryLimit: 5,
    retryDelay: 1,
    retryBackoff: true,
    deleteAfterSeconds: 3600,
  },
  // A missed run is made up by the next one.
  {
    name: REPLY_SWEEP_QUEUE,
    retryLimit: 1,
    retryDelay: 30,
    expireInSeconds: 60,
    deleteAfterSeconds: 3600,
  },
  // WhatsApp's retryable errors are retried by the send itself (a new job); these retries are for crashes.
  // No NOTIFY (it wakes every send worker of every process per job): the process that stored the
  // message wakes one of its own once committed (Jobs.send); polls catch the rest.
  {
    name: MESSAGE_SEND_QUEUE,
    notify: false,
    expireInSeconds: 30,
    retryLimit: 3,
    retryDelay: 2,
    deleteAfterSeconds: 3600,
  },
  // One waiting job per conversation and kind (timers.ts): 'short' keeps one queued job per
  // singleton key, while the one running may queue its successor.
  {
    name: CONVERSATION_TIMER_QUEUE,
    policy: "short",
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

/**
 * A reply mostly waits (for the model, seconds with a real one, and the intent calls), so many run
 * at once: with N at once a process answers at most N conversations per model latency (64 at 2 s
 * is 32 conversations a second). Most run where their window closed (runHere, up to runHereLimit);
 * reply jobs are deferred (the window), so no NOTIFY announces them: the sending process wakes a
 * worker by a timer (Jobs.send) and the workers' polls are only the backstop (another process' or a
 * crash's job, a burst beyond the limit).
 */
const REPLY_OPTIONS = {
  ...OPTIONS,
  runHere: true,
  runHereLimit: 64,
  // A process that only runs workers (PROCESS_ROLE=workers) takes every reply this way: as many at
  // once as the replies' waiting allows. The backstop polls stay at 4 a second over the 32.
  localConcurrency: 32,
  notifyPollingIntervalSeconds: 8,
  pollingIntervalSeconds: 2,
};

/**
 * The timers: many jobs fall due together (every conversation of a busy hour), so a worker takes a
 * batch and fetches again at once while batches come back full (pg-boss otherwise waits a polling
 * interval after every fetch, a couple of jobs a second).
 */
const TIMER_OPTIONS = { ...OPTIONS, batchSize: 20, burstWhenBatchFull: true };

/** A timer that threw: again in a few seconds, under its key (a waiting job of it is enough). */
async function retryTimers(deps: Deps, failed: TimerJob[]): Promise<void> {
  await deps.db.$transaction((tx) =>
    deps.jobs.send(
      tx,
      CONVERSATION_TIMER_QUEUE,
      failed.map((data) => ({ data, startAfterMs: TIMER_RETRY_MS, key: timerKey(data) })),
    )
  );
}

const TIMER_RETRY_MS = 5_000;

async function sweepReplies(deps: Deps): Promise<void> {
  const queued = await sweepUnanswered(deps, deps.clock.now());
  if (queued) deps.logger.info("reply sweep queued conversations with unanswered messages", { queued });
}

/**
 * Starts the conversation workers. `live` counts the replies under way, so that replays give way to
 * them (../live_replies.ts).
 */
export async function startConversationWorkers(jobs: Jobs, deps: Deps, live: LiveReplies): Promise<void> {
  await jobs.work<ReplyJob>(REPLY_QUEUE, REPLY_OPTIONS, async (batch) => {
    for (const job of batch) {
      try {
        await live.run(() => runReply(deps, job.data));
      } catch (error) {
        deps.logger.error("reply failed", { error });
        throw error;
      }
    }
  });
  await jobs.boss.schedule(REPLY_SWEEP_QUEUE, REPLY_SWEEP_CRON);
  await jobs.work(REPLY_SWEEP_QUEUE, { pollingIntervalSeconds: 30 }, () => sweepReplies(deps));
  // At start too: what a process that died (this one, before a restart) left claimed is queued for
  // when its claim goes stale, not a minute later.
  await sweepReplies(deps).catch((error) => deps.logger.error("reply sweep failed", { error }));
  await jobs.work<SendJob>(MESSAGE_SEND_QUEUE, { ...OPTIONS, localConcurrency: 4 }, async (batch) => {
    for (const job of batch) await sendMessage({ ...deps, jobs }, job.data);
  });
  await jobs.work<TimerJob>(CONVERSATION_TIMER_QUEUE, TIMER_OPTIONS, async (batch) => {
    // The jobs of a batch side by side: a reminder's send does not hold up an auto-close. A failed
    // one is queued again on its own rather than failing the batch (which would rerun the others).
    const failed: TimerJob[] = [];
    await Promise.all(batch.map(async (job) => {
      try {
        await runTimer(deps, job.data);
      } catch (error) {
        deps.logger.error("conversation timer failed", { ...job.data, error });
        failed.push(job.data);
      }
    }));
    if (failed.length) await retryTimers(deps, failed);
  });
}
