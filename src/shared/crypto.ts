/** Small crypto helpers: random tokens (WebCrypto) and SHA-256 digests. */
import { createHash } from "node:crypto";

export function randomToken(bytes = 32): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  return base64url(buf);
}

export function base64url(buf: Uint8Array): string {
  let s = "";
  for (const b of buf) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * Hex SHA-256, synchronous: every API-token request hashes its token, and under concurrent load
 * WebCrypto's async digest cost about 15x more than node:crypto (bench/results/agents-list.md).
 */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
