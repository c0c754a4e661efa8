/**
 * `GET /api/messages/{messageId}/media`: a media message's file, streamed from the WhatsApp Graph
 * API (src/media/download.ts). Not a capability: its answer is the file, not JSON.
 */
import { Hono } from "hono";
import type { Deps } from "../context.ts";
import { openMessageMedia } from "../media/download.ts";
import { actorOf } from "./http.ts";

/** `attachment; filename*=` with the customer's file name, quoted as RFC 6266 and 8187 say. */
function disposition(fileName: string | null): string {
  if (!fileName) return "inline";
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

export function mediaRoutes(deps: Deps): Hono {
  const r = new Hono();
  r.get("/api/messages/:messageId/media", async (c) => {
    const ctx = await actorOf(deps, c);
    const file = await openMessageMedia(ctx, c.req.param("messageId"));
    const headers = new Headers({
      "content-type": file.mimeType,
      "content-disposition": disposition(file.fileName),
      // A customer's file: for the reader who asked, not for shared caches.
      "cache-control": "private, no-store",
      "x-content-type-options": "nosniff",
    });
    if (file.size !== null) headers.set("content-length", String(file.size));
    return new Response(file.stream, { status: 200, headers });
  });
  return r;
}
