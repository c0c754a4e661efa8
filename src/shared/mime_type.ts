/**
 * A media type from outside (WhatsApp's webhook, the Graph API's `mime_type`), made one that is
 * safe to store, show and send as a Content-Type: parsed as the WHATWG MIME Sniffing standard does
 * (npm `whatwg-mimetype`, liberal: case, spaces and quoting as browsers accept them), kept as
 * `type/subtype` lowercased with only the parameters players and extractors use. A value that is not
 * a media type (a CRLF and a header after it, say) is `application/octet-stream`.
 */
// @ts-types="@types/whatwg-mimetype"
import { MIMEType } from "whatwg-mimetype";

/** What a file of unknown kind is sent as. */
export const UNKNOWN_MIME_TYPE = "application/octet-stream";

/** The parameters kept (`audio/ogg; codecs=opus`, a text's charset); names and the rest are dropped. */
const KEPT_PARAMETERS: ReadonlySet<string> = new Set(["charset", "codecs"]);

/** A parameter value written bare; others are quoted. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Printable ASCII: a value with anything else is dropped rather than sent. */
const PRINTABLE = /^[\x20-\x7e]+$/;

/** Longest type kept (the column's and WhatsApp's own bound); beyond it, the parameters go. */
const MAX_LENGTH = 255;

/**
 * `value` as a clean media type (`Image/PNG` → `image/png`, `audio/ogg;codecs="opus"` →
 * `audio/ogg; codecs=opus`), application/octet-stream when it is not one, null when there is none.
 */
export function cleanMimeType(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const parsed = MIMEType.parse(value);
  if (!parsed || parsed.essence.length > MAX_LENGTH) return UNKNOWN_MIME_TYPE;
  let clean = parsed.essence;
  for (const [name, v] of parsed.parameters) {
    if (!KEPT_PARAMETERS.has(name) || !PRINTABLE.test(v)) continue;
    const next = `${clean}; ${name}=${TOKEN.test(v) ? v : `"${v.replace(/["\\]/g, "\\$&")}"`}`;
    if (next.length > MAX_LENGTH) break;
    clean = next;
  }
  return clean;
}

/** The `type/subtype` of a clean media type (`audio/ogg; codecs=opus` → `audio/ogg`). */
export function essenceOf(mimeType: string): string {
  return mimeType.split(";")[0];
}
