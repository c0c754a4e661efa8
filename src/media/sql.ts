/** The SQL of the media job (declared statements: src/db/statement.ts). */
import { Prisma } from "../generated/prisma/client.ts";
import { col, command, query } from "../db/statement.ts";

const at0 = new Date(0);

/** The message types whose media a job fetches and understands. */
export type MediaType = "AUDIO" | "IMAGE" | "DOCUMENT";

/** The message a media job works on, with what the job needs of its conversation and agent. */
export const mediaJobMessage = query(
  {
    id: col.text,
    type: col.enum<MediaType>("MessageType"),
    content: col.text,
    conversationId: col.text,
    channelId: col.text,
    workspaceId: col.text,
    agentId: col.text,
    mediaId: col.text.null,
    mediaMimeType: col.text.null,
    mediaFileName: col.text.null,
    mediaPending: col.boolean,
    createdAt: col.timestamptz,
    enabledVision: col.boolean,
  },
  ({ id }: { id: string }) =>
    Prisma.sql`
    SELECT m.id, m.type, m.content, m."conversationId", m."channelId", c."workspaceId",
           c."agentId", m."mediaId", m."mediaMimeType", m."mediaFileName", m."mediaPending", m."createdAt",
           a."enabledVision"
      FROM "Message" m JOIN "Conversation" c ON c.id = m."conversationId" JOIN "Agent" a ON a.id = c."agentId"
     WHERE m.id = ${id}`,
  [{ id: "m" }],
);

/** What the media work stores on its message. */
export interface MediaFields {
  mimeType: string | null;
  size: number | null;
  sha256: string | null;
  error: string | null;
  transcript: string | null;
  text: string | null;
}

/**
 * The media work's outcome on its message (once: only while it is pending), and whether the reply
 * may be queued: the conversation's window end, whether another media of it is still pending, and
 * whether its window was last restarted by a media message (so its reply job is only the backstop:
 * src/conversations/pipeline/window.ts). No row when another run finished it meanwhile.
 */
export const finishMedia = query(
  { replyDueAt: col.timestamptz.null, othersPending: col.boolean, mediaWindow: col.boolean },
  ({ id, conversationId, now, o }: {
    id: string;
    conversationId: string;
    now: Date;
    o: MediaFields;
  }) =>
    Prisma.sql`
      WITH done AS (
        UPDATE "Message" SET "mediaPending" = false, "mediaMimeType" = COALESCE(${o.mimeType}::text, "mediaMimeType"),
               "mediaSize" = ${o.size}::int, "mediaSha256" = ${o.sha256}::text, "mediaError" = ${o.error}::text,
               transcript = ${o.transcript}::text, text = ${o.text}::text, "updatedAt" = ${now}
         WHERE id = ${id} AND "mediaPending"
        RETURNING id)
      SELECT c."replyDueAt",
             EXISTS (SELECT 1 FROM "Message" m WHERE m."conversationId" = c.id AND m."mediaPending"
                        AND m.id <> ${id}) AS "othersPending",
             COALESCE((SELECT l."mediaId" IS NOT NULL AND l.type IN ('AUDIO', 'IMAGE', 'DOCUMENT')
                         FROM "Message" l WHERE l."conversationId" = c.id AND l."senderKind" = 'CUSTOMER'
                        ORDER BY l."createdAt" DESC, l.id DESC LIMIT 1), false) AS "mediaWindow"
        FROM "Conversation" c, done WHERE c.id = ${conversationId}`,
  [{
    id: "m",
    conversationId: "c",
    now: at0,
    o: { mimeType: null, size: null, sha256: null, error: null, transcript: null, text: null },
  }],
);

/** An image kept for the reply (vision on). */
export const keepImage = command(
  ({ messageId, bytes, now }: { messageId: string; bytes: Uint8Array; now: Date }) =>
    Prisma
      .sql`INSERT INTO "MessageMediaBytes" ("messageId", bytes, "createdAt") VALUES (${messageId}, ${bytes}, ${now})`,
  [{ messageId: "m", bytes: new Uint8Array(0), now: at0 }],
);
