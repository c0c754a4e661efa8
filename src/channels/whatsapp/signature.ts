/**
 * The two checks Meta's calls to a WhatsApp channel must pass:
 * `X-Hub-Signature-256` on every inbound POST, and the verify handshake of the GET that registers
 * the callback. Both compare in constant time, so response timing tells nothing about the secret.
 * Pure: the caller passes the channel's opened app secret / verify token and the raw request.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";

/** `sha256=` and 64 hex digits, as Meta sends it (hex case is not Meta's promise, so both are taken). */
const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * Whether `header` (the `X-Hub-Signature-256` value, or null when absent) is the HMAC-SHA256 of the
 * raw body bytes under `appSecret`. Meta signs the bytes it sends, so the body must be the bytes
 * as received, before any JSON parsing or re-encoding. Missing, malformed or wrong: false.
 */
export function verifyHubSignature(
  rawBody: Uint8Array,
  header: string | null | undefined,
  appSecret: string,
): boolean {
  if (!header || !appSecret) return false;
  const match = SIGNATURE.exec(header.trim());
  if (!match) return false;
  const given = Buffer.from(match[1], "hex");
  const expected = createHmac("sha256", appSecret).update(rawBody).digest();
  // Both are 32 bytes here (the regex fixes the length), which timingSafeEqual requires.
  return timingSafeEqual(given, expected);
}

/** The `X-Hub-Signature-256` value for a body: what Meta sends (tests and stand-ins sign with it). */
export function hubSignature(rawBody: Uint8Array | string, appSecret: string): string {
  return `sha256=${createHmac("sha256", appSecret).update(rawBody).digest("hex")}`;
}

/** Equal strings, compared in constant time over fixed-length HMACs of them (so lengths leak nothing either). */
function safeEqual(a: string, b: string): boolean {
  const digest = (s: string) => createHmac("sha256", "verify-token").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** Meta's challenge is a short number; anything longer is not echoed. */
const MAX_CHALLENGE = 256;

/**
 * The verify handshake (`GET` with `hub.mode`, `hub.verify_token`, `hub.challenge`): the challenge
 * to echo as text/plain when the mode is `subscribe` and the token is the channel's; null otherwise
 * (the route answers 403). An empty or over-long challenge, or an empty configured token, never passes.
 */
export function verifyHandshake(query: URLSearchParams, verifyToken: string): string | null {
  const mode = query.get("hub.mode");
  const token = query.get("hub.verify_token");
  const challenge = query.get("hub.challenge");
  if (mode !== "subscribe" || token === null || !verifyToken) return null;
  if (!challenge || challenge.length > MAX_CHALLENGE) return null;
  return safeEqual(token, verifyToken) ? challenge : null;
}
