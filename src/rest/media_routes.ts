/**
 * `GET /api/messages/{messageId}/media`: a media message's file, streamed from the WhatsApp Graph
 * API (src/media/download.ts), for a reader of the workspace (the API's credentials, or the
 * console's session cookie) or for a signed link (`expires` and `signature`, a Message's
 * `mediaSignedUrl`, src/media/links.ts) without them. Not a capability: its answer is the file,
 * not JSON.
 */
import { Hono } from "hono";
import type { Deps } from "../context.ts";
import { openMessageMedia, openSignedMessageMedia } from "../media/download.ts";
import { consoleActorOf } from "./http.ts";
import { essenceOf } from "../shared/mime_type.ts";

/**
 * Types a browser shows without running anything of the file: shown inline. Anything else (SVG,
 * HTML, XML, PDF, text, scripts: a customer chooses a document's type) is a download, so a file
 * sent by a customer never runs as a page of this server's origin.
 */
const SHOWN_INLINE = /^(image\/(png|jpeg|gif|webp)|audio\/[\w.+-]+|video\/[\w.+-]+)$/;

/** `inline` or `attachment`, with the customer's file name quoted as RFC 6266 and 8187 say. */
function disposition(mimeType: string, fileName: string | null): string {
  const kind = SHOWN_INLINE.test(essenceOf(mimeType)) ? "inline" : "attachment";
  if (!fileName) return kind;
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

export function mediaRoutes(deps: Deps): Hono {
  const r = new Hono();
  r.get("/api/messages/:messageId/media", async (c) => {
    const messageId = c.req.param("messageId");
    const signature = c.req.query("signature");
    const file = signature === undefined
      ? await openMessageMedia(await consoleActorOf(deps, c), messageId)
      : await openSignedMessageMedia(deps, messageId, { expires: c.req.query("expires"), signature });
    const headers = new Headers({
      "content-type": file.mimeType,
      "content-disposition": disposition(file.mimeType, file.fileName),
      // A customer's file: for the reader who asked, not for shared caches; never a page that runs
      // scripts or loads anything, whatever its type says; loaded by this origin's pages only.
      "cache-control": "private, no-store",
      "x-content-type-options": "nosniff",
      "content-security-policy": "sandbox; default-src 'none'",
      "cross-origin-resource-policy": "same-origin",
      "referrer-policy": "no-referrer",
    });
    if (file.size !== null) headers.set("content-length", String(file.size));
    return new Response(file.stream, { status: 200, headers });
  });
  return r;
}
