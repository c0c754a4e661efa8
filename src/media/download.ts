/**
 * `GET /api/messages/{messageId}/media` (any reader of the workspace): the file of a media message,
 * fetched from the Graph API on demand with its channel's token and passed on as it streams (bytes
 * are not kept). The message must be of the workspace and carry a WhatsApp media id (404
 * otherwise); a file WhatsApp no longer has is 404 MEDIA_GONE, any other Graph failure 502
 * MEDIA_UNAVAILABLE. The token never appears in the answer or the logs. A signed link
 * (src/media/links.ts) opens the same file without credentials while it is valid.
 */
import type { ActorContext, Deps } from "../context.ts";
import { authorize } from "../auth/permissions.ts";
import { AppError, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { openMedia } from "./graph_media.ts";
import { validSignature } from "./links.ts";
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
  const message = await findMediaMessage(ctx, messageId);
  if (!message || message.workspaceId !== ctx.actor.workspaceId) throw notFound("Message media");
  return await streamMedia(ctx, messageId, message);
}

/**
 * Opens the file of message `messageId` for a signed link (src/media/links.ts), without
 * credentials: 401 UNAUTHENTICATED for a link that has expired or does not sign this message, told
 * apart from no other failure (a message that does not exist looks the same).
 */
export async function openSignedMessageMedia(
  deps: Deps,
  messageId: string,
  link: { expires: string | undefined; signature: string },
): Promise<MediaFile> {
  const expires = Number(link.expires);
  if (!Number.isSafeInteger(expires) || expires * 1000 <= Date.now()) {
    throw new AppError(
      "UNAUTHENTICATED",
      401,
      "The media link has expired: read the message again for a new one.",
    );
  }
  const message = await findMediaMessage(deps, messageId);
  if (
    !message ||
    !validSignature(deps.jwt, { messageId, workspaceId: message.workspaceId, expires }, link.signature)
  ) {
    throw new AppError("UNAUTHENTICATED", 401, "The media link is not valid.");
  }
  return await streamMedia(deps, messageId, message);
}

interface MediaMessage {
  mediaId: string;
  mediaMimeType: string | null;
  mediaFileName: string | null;
  channelId: string;
  workspaceId: string;
}

/** The WhatsApp media message `messageId` with its workspace, or null. */
async function findMediaMessage(deps: Deps, messageId: string): Promise<MediaMessage | null> {
  const message = await deps.db.message.findFirst({
    where: { id: assertId(messageId, "Message"), mediaId: { not: null }, channel: { type: "WHATSAPP" } },
    select: {
      mediaId: true,
      mediaMimeType: true,
      mediaFileName: true,
      channelId: true,
      conversation: { select: { workspaceId: true } },
    },
  });
  if (!message) return null;
  const { conversation, mediaId, ...rest } = message;
  return { ...rest, mediaId: mediaId!, workspaceId: conversation.workspaceId };
}

async function streamMedia(deps: Deps, messageId: string, message: MediaMessage): Promise<MediaFile> {
  const channel = await deps.channels.whatsapp(message.channelId);
  const accessToken = channel?.secrets.accessToken;
  if (!accessToken) throw new AppError("MEDIA_UNAVAILABLE", 502, "The channel has no access token.");
  const opened = await openMedia((url, init) => deps.outbound.request(url, init), {
    graphUrl: deps.config.whatsappGraphUrl,
    mediaId: message.mediaId,
    accessToken,
  }, { timeoutMs: deps.config.media.fetchTimeoutMs });
  if (!opened.ok) {
    if (opened.error.gone) throw new AppError("MEDIA_GONE", 404, "WhatsApp no longer has this file.");
    deps.logger.warn("media download failed", { messageId, error: opened.error.message });
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
