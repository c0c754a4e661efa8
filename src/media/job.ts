/**
 * The media job of one WhatsApp media message (docs/behaviour.md "Media"): enqueued in the
 * transaction that stored the message (the `message.media_pending` event), never inside Meta's
 * request. It asks the Graph API for the file, checks its size against its type's limit, downloads
 * it (sha256 checked) when something reads it, and understands it: a voice note is transcribed, a
 * PDF or DOCX gets its text, an image is kept for the reply when the agent has vision (bytes are
 * otherwise never kept). Then, in one transaction, the message gets its media fields (or
 * `media.error`), `message.received` is published with them, and the reply runs here when its
 * window has closed meanwhile, or is queued for the window's close (the reply waits for this, at
 * most MEDIA_WAIT_MS).
 *
 * Graph failures that may pass later are tried again (3 attempts, 1 s then 4 s apart, each a job of
 * its own); everything else ends the work with its error, so the customer is answered anyway. The
 * job is durable: a process killed between download and reply leaves it (or its backstop) queued,
 * and a restart runs it again; it acts once (the message's `mediaPending`).
 */
import type { Deps } from "../context.ts";
import type { EventListener } from "../shared/events.ts";
import type { JobQueue } from "../shared/jobs.ts";
import { sqlTransaction } from "../db/transaction.ts";
import { finishMedia, keepImage, type MediaFields, mediaJobMessage, type MediaType } from "./sql.ts";
import type { RowOf } from "../db/statement.ts";
import { REPLY_QUEUE, type ReplyJob } from "../conversations/pipeline/window.ts";
import { describeMedia, downloadMedia, type MediaFailure, tooLarge } from "./graph_media.ts";
import { bareMimeType, transcribe } from "./transcription.ts";
import { extractDocumentText, isExtractable } from "./documents.ts";

export const MEDIA_QUEUE = "message-media";

export interface MediaJob {
  messageId: string;
  /** 1 for the first attempt. */
  attempt?: number;
}

/** Waits before the 2nd and 3rd attempt after a Graph failure that may pass (the house schedule). */
const RETRY_DELAYS_MS = [1000, 4000];

/** The media types whose files are fetched. */
export const MEDIA_TYPES: ReadonlySet<string> = new Set<MediaType>(["AUDIO", "IMAGE", "DOCUMENT"]);

/**
 * The event listener: each `message.media_pending` (a media message just stored) gets its job in
 * the same transaction, run by this process once it commits (the job stays as the backstop).
 */
export function mediaListener(jobs: JobQueue): EventListener {
  return {
    async after(tx, events) {
      const jobsData = events.filter((e) => e.type === "message.media_pending").map((e) =>
        ({ messageId: e.data.messageId as string, attempt: 1 }) satisfies MediaJob
      );
      await jobs.send(tx, MEDIA_QUEUE, jobsData.map((data) => ({ data })));
    },
  };
}

type MessageRow = RowOf<typeof mediaJobMessage.columns> & { mediaId: string };

/** What the work found out; `retry` when a Graph failure may pass on another attempt. */
interface Outcome extends MediaFields {
  /** An image kept for the reply (vision on). */
  imageBytes: Uint8Array | null;
  retry: boolean;
}

/** Runs one media job (see the module comment). */
export async function runMediaJob(deps: Deps, job: MediaJob): Promise<void> {
  const [found] = await mediaJobMessage.rows(deps.db, { id: job.messageId });
  // Gone (deleted with its agent), or done already (a job run twice).
  if (!found || !found.mediaPending || found.mediaId === null) return;
  const row = { ...found, mediaId: found.mediaId };
  const attempt = job.attempt ?? 1;
  const outcome = await understand(deps, row);
  if (outcome.retry && attempt <= RETRY_DELAYS_MS.length) {
    deps.logger.info("media fetch failed; trying again", {
      messageId: row.id,
      attempt,
      error: outcome.error,
    });
    await deps.jobs.send(deps.db, MEDIA_QUEUE, [{
      data: { messageId: row.id, attempt: attempt + 1 } satisfies MediaJob,
      startAfterMs: RETRY_DELAYS_MS[attempt - 1],
    }]);
    return;
  }
  if (outcome.error) {
    deps.logger.warn("media not understood", { messageId: row.id, type: row.type, error: outcome.error });
  }
  await finish(deps, row, outcome);
}

const empty = (): Outcome => ({
  mimeType: null,
  size: null,
  sha256: null,
  error: null,
  transcript: null,
  text: null,
  imageBytes: null,
  retry: false,
});

function graphError(outcome: Outcome, error: MediaFailure): Outcome {
  return { ...outcome, error: error.message, retry: error.retryable };
}

async function understand(deps: Deps, row: MessageRow): Promise<Outcome> {
  let outcome = empty();
  const channel = await deps.channels.whatsapp(row.channelId);
  const accessToken = channel?.secrets.accessToken;
  if (!accessToken) return { ...outcome, error: "the channel has no access token" };
  const request = (url: string, init: Parameters<Deps["outbound"]["request"]>[1]) =>
    deps.outbound.request(url, init);
  const { media } = deps.config;
  const timing = { timeoutMs: media.fetchTimeoutMs };

  const described = await describeMedia(request, {
    graphUrl: deps.config.whatsappGraphUrl,
    mediaId: row.mediaId,
    accessToken,
  }, timing);
  if (!described.ok) return graphError(outcome, described.error);
  const mimeType = described.media.mimeType ?? row.mediaMimeType;
  outcome = { ...outcome, mimeType, size: described.media.size, sha256: described.media.sha256 };
  const maxBytes = media.maxBytes[row.type];
  if (described.media.size !== null && described.media.size > maxBytes) {
    return { ...outcome, error: tooLarge(described.media.size, maxBytes).message };
  }

  // Only what something reads is downloaded: voice notes, PDF and DOCX, images the model sees.
  const reads = row.type === "AUDIO" ||
    (row.type === "IMAGE" && row.enabledVision) ||
    (row.type === "DOCUMENT" && isExtractable(bareMimeType(mimeType), row.mediaFileName));
  if (!reads) return outcome;
  const downloaded = await downloadMedia(request, {
    url: described.media.url,
    accessToken,
    sha256: described.media.sha256,
    maxBytes,
  }, timing);
  if (!downloaded.ok) return graphError(outcome, downloaded.error);
  const bytes = downloaded.bytes;
  outcome = { ...outcome, size: outcome.size ?? bytes.length };

  switch (row.type) {
    case "AUDIO": {
      const heard = await transcribe(deps.llm, { bytes, mimeType }, {
        model: media.transcriptionModel,
        timeoutMs: media.transcriptionTimeoutMs,
      });
      return heard.ok ? { ...outcome, transcript: heard.transcript } : { ...outcome, error: heard.error };
    }
    case "IMAGE":
      return { ...outcome, imageBytes: bytes };
    case "DOCUMENT": {
      const read = await extractDocumentText(
        { bytes, mimeType: bareMimeType(mimeType), fileName: row.mediaFileName },
        media.document,
      );
      return read.ok
        ? { ...outcome, text: read.text }
        : { ...outcome, error: `text not read: ${read.error}` };
    }
  }
}

/**
 * One transaction: the message's media fields, the image kept for the reply, and `message.received`
 * with what was understood. Then the reply, unless another media of the conversation is pending
 * (the last media job starts it): at once when the window closed while this ran; when the window
 * closes, if it was last restarted by a media message (its own job is only the backstop); otherwise
 * a later text restarted it, and that text's job answers.
 */
async function finish(deps: Deps, row: MessageRow, o: Outcome): Promise<void> {
  const now = deps.clock.now();
  const replyNow = await sqlTransaction(deps.db, async (tx) => {
    const [updated] = await finishMedia.rows(tx, { id: row.id, conversationId: row.conversationId, now, o });
    // Done by another run meanwhile.
    if (!updated) return false;
    if (o.imageBytes) {
      await keepImage.run(tx, { messageId: row.id, bytes: o.imageBytes, now });
    }
    await deps.events.publish(tx, {
      type: "message.received",
      workspaceId: row.workspaceId,
      agentId: row.agentId,
      conversationId: row.conversationId,
      // Its grouping window started when it was stored (message.media_pending).
      afterMedia: true,
      data: {
        message: {
          id: row.id,
          type: row.type,
          content: row.content,
          createdAt: row.createdAt.toISOString(),
          media: {
            id: row.mediaId,
            mimeType: o.mimeType,
            size: o.size,
            fileName: row.mediaFileName,
            error: o.error,
          },
          transcript: o.transcript,
          text: o.text,
        },
      },
    });
    const { replyDueAt, othersPending, mediaWindow } = updated;
    if (replyDueAt === null || othersPending) return false;
    if (replyDueAt <= now) return true;
    if (mediaWindow) {
      await deps.jobs.send(tx, REPLY_QUEUE, [{
        data: { conversationId: row.conversationId } satisfies ReplyJob,
        startAfterMs: replyDueAt.getTime() - now.getTime(),
      }]);
    }
    return false;
  });
  if (replyNow) {
    await deps.jobs.send(deps.db, REPLY_QUEUE, [{
      data: { conversationId: row.conversationId } satisfies ReplyJob,
    }]);
  }
}
