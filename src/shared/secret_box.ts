/**
 * The secret box: secrets we must send again later are stored sealed with AES-256-GCM under
 * SECRETS_KEY: webhook signing secrets and header values, credential-like values in webhook and
 * intent URLs (url_secrets.ts), a WhatsApp channel's credentials, and those values in approvals'
 * before and after. A sealed value is `sb1:<kid>:<base64url(iv | ciphertext | tag)>`: `kid`
 * (first 8 hex of SHA-256 of the key) says which key sealed it, so older keys
 * (SECRETS_KEY_PREVIOUS) still open values until `deno task admin rotate-secrets` has resealed them
 * under the current key.
 * node:crypto rather than WebCrypto: synchronous, so rows can be opened inside a plain `map`.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { Buffer } from "node:buffer";

export const SEALED_PREFIX = "sb1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/** A sealed value that cannot be opened: unknown key id, not sealed, or altered. Never carries the value. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretBoxError";
  }
}

/** The key id of a key: first 8 hex characters of its SHA-256. */
export function keyId(key: Uint8Array): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 8);
}

/** Decodes a SECRETS_KEY (base64 or base64url, padding optional); null unless it is exactly 32 bytes. */
export function decodeKey(text: string): Uint8Array | null {
  const s = text.trim().replaceAll("-", "+").replaceAll("_", "/").replace(/=+$/, "");
  if (!/^[A-Za-z0-9+/]+$/.test(s) || s.length !== 43) return null;
  const bytes = Uint8Array.from(atob(s + "="), (c) => c.charCodeAt(0));
  return bytes.length === KEY_BYTES ? bytes : null;
}

/** A new random key, base64 (what SECRETS_KEY holds). */
export function generateKey(): string {
  return randomBytes(KEY_BYTES).toString("base64");
}

/** How many opened values the box remembers (a webhook page opens one per header value). */
const OPENED_CACHE_SIZE = 10_000;

export class SecretBox {
  /** Key id of the current key, the one that seals. */
  readonly kid: string;
  private readonly keys = new Map<string, Uint8Array>();
  /**
   * Sealed text -> its plaintext, least recently used first (Map order), for values this box has
   * opened. Safe to reuse: a sealed text is key id + IV + ciphertext + GCM tag, so the same text
   * opens to the same plaintext under the same keys, and the keys never change in a box; an
   * altered value is another text and is deciphered (and refused) as ever, since only values that
   * authenticated are remembered. It saves a decipher setup per value on every read of a page of
   * webhooks. The plaintexts were in this process's memory anyway when opened; the bound keeps it
   * from growing.
   */
  private readonly opened = new Map<string, string>();

  /** `current` seals and opens; `previous` keys only open. */
  constructor(current: Uint8Array, previous: Uint8Array[] = []) {
    for (const key of [current, ...previous]) {
      if (key.length !== KEY_BYTES) throw new SecretBoxError(`a key must be ${KEY_BYTES} bytes`);
    }
    this.kid = keyId(current);
    for (const key of previous) this.keys.set(keyId(key), key);
    this.keys.set(this.kid, current);
  }

  static isSealed(value: string): boolean {
    return value.startsWith(SEALED_PREFIX);
  }

  /** True when `value` is sealed under the current key (nothing to do for rotation). */
  isCurrent(value: string): boolean {
    return value.startsWith(`${SEALED_PREFIX}${this.kid}:`);
  }

  /** Seals `plaintext` under the current key with a fresh IV. */
  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.keys.get(this.kid)!, iv);
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${this.kid}:${Buffer.concat([iv, body]).toString("base64url")}`;
  }

  /** Opens a sealed value; throws SecretBoxError when it is not sealed, its key is unknown or it was altered. */
  open(value: string): string {
    const known = this.opened.get(value);
    if (known !== undefined) {
      // Most recently used goes last.
      this.opened.delete(value);
      this.opened.set(value, known);
      return known;
    }
    const plaintext = this.decipher(value);
    if (this.opened.size >= OPENED_CACHE_SIZE) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(value, plaintext);
    return plaintext;
  }

  private decipher(value: string): string {
    if (!SecretBox.isSealed(value)) throw new SecretBoxError("the value is not sealed (no sb1: prefix)");
    const [kid, data] = value.slice(SEALED_PREFIX.length).split(":", 2);
    const key = this.keys.get(kid);
    if (!key) {
      throw new SecretBoxError(
        `the value is sealed under key id ${kid}, which is neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS`,
      );
    }
    const raw = Buffer.from(data ?? "", "base64url");
    if (raw.length < IV_BYTES + TAG_BYTES) {
      throw new SecretBoxError(`a value under key id ${kid} is truncated`);
    }
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ])
        .toString("utf8");
    } catch {
      throw new SecretBoxError(`a value under key id ${kid} does not authenticate (altered or wrong key)`);
    }
  }

  /**
   * The value as it should be stored: plaintext is sealed, a value under an older key is resealed
   * under the current one, a current one is returned unchanged (so running it twice changes nothing).
   */
  reseal(value: string): string {
    if (this.isCurrent(value)) return value;
    return this.seal(SecretBox.isSealed(value) ? this.open(value) : value);
  }

  /** Seals every value of a name -> value map (webhook headers). */
  sealValues(values: Record<string, string>): Record<string, string> {
    return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, this.seal(v)]));
  }

  /** Opens every value of a stored name -> sealed value map. */
  openValues(stored: unknown): Record<string, string> {
    const values = (stored ?? {}) as Record<string, string>;
    return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, this.open(v)]));
  }
}
