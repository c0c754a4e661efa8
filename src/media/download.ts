/**
 * `GET /api/messages/{messageId}/media` (any reader of the workspace): the file of a media message,
 * fetched from the Graph API on demand with its channel's token and passed on as it streams (bytes
 * are not kept). The message must be of the workspace and carry a WhatsApp media id (404
 * otherwise); a file WhatsApp no longer has is 404 MEDIA_GONE, any other Graph failure 502
 * MEDIA_UNAVAILABLE. The token never appears in the answer or the logs.
 */
import type { ActorContext } from "../context.ts";
import { authorize } from "../auth/permissions.ts";
import { AppError, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { openMedia } from "./graph_media.ts";
import { cleanMimeType, UNKNOWN_MIME_TYPE } from "../shared/mime_type.ts";

export interface MediaFile {
  stream: ReadableStream<Uint8Array>;
  mimeType: string;
  /** Bytes, when the answer said (its Content-Length). */
  size: number | null;
  fileName: string | null;
}

/** Opens the file of message `messageId` (action workspace:read). */
export async function openMessageMedia(ctx: ActorContext, messageId: string): Promise<MediaFile> {
  authorize(ctx.actor, "workspace:read");
  const message = await ctx.db.message.findFirst({
    where: {
      id: assertId(messageId, "Message"),
      conversation: { workspaceId: ctx.actor.workspaceId },
      mediaId: { not: null },
      channel: { type: "WHATSAPP" },
    },
    select: { mediaId: true, mediaMimeType: true, mediaFileName: true, channelId: true },
  });
  if (!message) throw notFound("Message media");
  const channel = await ctx.channels.whatsapp(message.channelId);
  const accessToken = channel?.secrets.accessToken;
  if (!accessToken) throw new AppError("MEDIA_UNAVAILABLE", 502, "The channel has no access token.");
  const opened = await openMedia((url, init) => ctx.outbound.request(url, init), {
    graphUrl: ctx.config.whatsappGraphUrl,
    mediaId: message.mediaId!,
    accessToken,
  }, { timeoutMs: ctx.config.media.fetchTimeoutMs });
  if (!opened.ok) {
    if (opened.error.gone) throw new AppError("MEDIA_GONE", 404, "WhatsApp no longer has this file.");
    ctx.logger.warn("media download failed", { messageId, error: opened.error.message });
    throw new AppError("MEDIA_UNAVAILABLE", 502, `The WhatsApp Graph API failed: ${opened.error.message}`);
  }
  const length = Number(opened.response.headers.get("content-length") ?? NaN);
  return {
    stream: opened.response.stream(),
    // Cleaned again: a type stored before types were cleaned on arrival must not break the answer.
    mimeType: cleanMimeType(opened.media.mimeType ?? message.mediaMimeType) ?? UNKNOWN_MIME_TYPE,
    size: Number.isSafeInteger(length) && length >= 0 ? length : null,
    fileName: message.mediaFileName,
  };
}
