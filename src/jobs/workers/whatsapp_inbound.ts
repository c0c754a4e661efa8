/** The worker of accepted inbound WhatsApp posts (src/channels/whatsapp/process.ts). */
import type { Deps } from "../../context.ts";
import type { Jobs, QueueSpec } from "../boss.ts";
import { type InboundJob, processInbound, WHATSAPP_INBOUND_QUEUE } from "../../channels/whatsapp/process.ts";
import type { LiveReplies } from "../live_replies.ts";

export const whatsappInboundQueue: QueueSpec = {
  name: WHATSAPP_INBOUND_QUEUE,
  // No NOTIFY, which would wake every worker of every process for each post (each runs a fetch):
  // the accepting process stores the post itself (routes.ts; the worker's runHere), or wakes one of its
  // workers when it has too many under way; the polls catch the rest (backstops, crash retries).
  notify: false,
  expireInSeconds: 60,
  // Storing is idempotent (dedup on the WhatsApp id), so a crashed or failed job is simply run again.
  retryLimit: 10,
  retryDelay: 1,
  deleteAfterSeconds: 24 * 3600,
};

/** `live` counts the posts being stored as live work too: a replay's steps give way to them (../live_replies.ts). */
export async function startWhatsAppInboundWorker(jobs: Jobs, deps: Deps, live: LiveReplies): Promise<void> {
  await jobs.work<InboundJob>(
    WHATSAPP_INBOUND_QUEUE,
    {
      runHere: true,
      localConcurrency: 8,
      batchSize: 2,
      notifyPollingIntervalSeconds: 1,
      pollingIntervalSeconds: 1,
    },
    async (batch) => {
      for (const job of batch) await live.run(() => processInbound(deps, job.data));
    },
  );
}
