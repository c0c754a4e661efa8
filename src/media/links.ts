/**
 * Signed media links: `GET /api/messages/{id}/media?expires=E&signature=S` serves a media message's
 * file for a few minutes without credentials, so a browser loads it as an `<img src>`, an
 * `<audio src>` or a link, from the media endpoint with the endpoint's own headers (a download unless
 * the type is safe to show, under a sandbox). A message's `mediaSignedUrl` is such a link, made when
 * the message is read. S is an HMAC-SHA256, under a key derived from the JWT key (shared by every
 * process of the database), of the message id, its workspace and E (Unix seconds).
 *
 * A link expires at the end of the 5-minute slot after the one it was made in: 5 to 10 minutes after
 * the read. Every read within a slot gives the same link, so the read planner, which remembers what
 * it presented, and a browser's cache see one value per slot. Expiry is wall-clock time (like a
 * login JWT's), never the injected clock.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { JwtKeys } from "../auth/jwt.ts";
import { base64url } from "../shared/crypto.ts";
import { int, type Sql, sql } from "../shared/sql_fragment.ts";

/** A link's lifetime is counted in slots of this many seconds (see the module comment). */
export const LINK_SLOT_SECONDS = 300;

/** When a link made at `nowMs` expires (Unix seconds): the end of the next slot. */
export function linkExpiry(nowMs: number): number {
  return (Math.floor(nowMs / 1000 / LINK_SLOT_SECONDS) + 2) * LINK_SLOT_SECONDS;
}

/**
 * linkExpiry in SQL, from the statement's time, and what a read stores for a message aliased `t`
 * (`<message id> <workspace id> <expiry>`, null without media): the presenter signs it.
 */
export function linkSourceSql(t: Sql): Sql {
  const slot = int(LINK_SLOT_SECONDS);
  const expiry =
    sql`((floor(extract(epoch FROM statement_timestamp()) / ${slot})::bigint + 2) * ${slot})::text`;
  const workspace = sql`(SELECT c."workspaceId" FROM "Conversation" c WHERE c.id = ${t}."conversationId")`;
  return sql`CASE WHEN ${t}."mediaId" IS NULL THEN NULL ELSE ${t}.id || ' ' || ${workspace} || ' ' || ${expiry} END`;
}

/** The key of media links, derived from the JWT key once per app. */
const linkKeys = new WeakMap<JwtKeys, Uint8Array>();
function linkKey(keys: JwtKeys): Uint8Array {
  let key = linkKeys.get(keys);
  if (!key) {
    key = createHmac("sha256", keys.key).update("switchboard media link v1").digest();
    linkKeys.set(keys, key);
  }
  return key;
}

function signature(keys: JwtKeys, messageId: string, workspaceId: string, expires: number): Uint8Array {
  return createHmac("sha256", linkKey(keys)).update(`${messageId}\n${workspaceId}\n${expires}`).digest();
}

/** The signed link of message `messageId`'s file, valid until `expires` (Unix seconds). */
export function signedMediaPath(
  keys: JwtKeys,
  link: { messageId: string; workspaceId: string; expires: number },
): string {
  const sig = base64url(signature(keys, link.messageId, link.workspaceId, link.expires));
  return `/api/messages/${encodeURIComponent(link.messageId)}/media?expires=${link.expires}&signature=${sig}`;
}

/** The signed link of what linkSourceSql stored (`<message id> <workspace id> <expiry>`), or null. */
export function signedMediaPathOf(keys: JwtKeys, stored: unknown): string | null {
  if (typeof stored !== "string") return null;
  const [messageId, workspaceId, expires] = stored.split(" ");
  return signedMediaPath(keys, { messageId, workspaceId, expires: Number(expires) });
}

/** Whether `sig` (base64url) signs this message, workspace and expiry. */
export function validSignature(
  keys: JwtKeys,
  link: { messageId: string; workspaceId: string; expires: number },
  sig: string,
): boolean {
  const expected = signature(keys, link.messageId, link.workspaceId, link.expires);
  const given = /^[\w-]{43}$/.test(sig)
    ? Uint8Array.from(atob(sig.replaceAll("-", "+").replaceAll("_", "/") + "="), (c) => c.charCodeAt(0))
    : null;
  return given !== null && given.length === expected.length && timingSafeEqual(given, expected);
}
