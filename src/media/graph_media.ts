/**
 * A WhatsApp media file through the Graph API (Meta: "Media" reference of the Cloud API), in two
 * calls, both with the channel's access token and through the app's pinned outbound client:
 * `GET {WHATSAPP_GRAPH_URL}/{mediaId}` describes it (`{ url, mime_type, sha256, file_size, id,
 * messaging_product }`), then `GET url` gives its bytes. One call, one outcome: failures come back
 * classified (retryable or not, gone), never thrown; the caller retries and records.
 */
import { BodyTooLarge, OutboundRefused, type OutboundResponse } from "../shared/outbound.ts";
import { classifyGraphError, type OutboundRequest } from "../channels/whatsapp/graph_api.ts";
import { unlessAborted } from "../shared/abort.ts";
import { createHash } from "node:crypto";
import { Deadline } from "../shared/deadline.ts";
import { cleanMimeType } from "../shared/mime_type.ts";

/** What the Graph API says of a media id. */
export interface MediaDescription {
  url: string;
  mimeType: string | null;
  /** Meta's hash of the file (hex; base64 is accepted too), or null when it sent none. */
  sha256: string | null;
  size: number | null;
}

export interface MediaFailure {
  /** The Graph API's HTTP status, or 0 when no answer came (refused, connection error, timeout). */
  status: number;
  /** One line, safe to store and show (never the token). */
  message: string;
  /** A later try may pass (5xx, 429, Meta's temporary codes, timeouts, connection errors). */
  retryable: boolean;
  /** WhatsApp no longer has the file (404, or Meta's "object does not exist"). */
  gone: boolean;
}

export type Described = { ok: true; media: MediaDescription } | { ok: false; error: MediaFailure };
export type Downloaded = { ok: true; bytes: Uint8Array } | { ok: false; error: MediaFailure };

export interface MediaCallOptions {
  timeoutMs: number;
  /** Aborts the call (the server stops); then the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 500);

/** A non-2xx answer of the Graph API, classified (graph_api.ts), with 404 and "does not exist" as gone. */
function answerFailure(status: number, body: string): MediaFailure {
  const error = classifyGraphError(status, body);
  let subcode: unknown;
  try {
    subcode = JSON.parse(body)?.error?.error_subcode;
  } catch { /* not JSON */ }
  // Meta answers an unknown or expired media id with 400, code 100, subcode 33 ("does not exist").
  const gone = status === 404 || (error.code === 100 && subcode === 33);
  return {
    status,
    message: gone ? `the media is no longer on WhatsApp (HTTP ${status})` : error.message,
    retryable: !gone && error.retryable,
    gone,
  };
}

/**
 * Runs `call` under a timeout of its own (and the caller's signal); a failure to get an answer
 * comes back as a MediaFailure, a stop of the caller's signal as a rejection.
 */
async function timed<T>(
  options: MediaCallOptions,
  call: (signal: AbortSignal) => Promise<T | { ok: false; error: MediaFailure }>,
): Promise<T | { ok: false; error: MediaFailure }> {
  const deadline = new Deadline(options.timeoutMs, options.signal);
  const signal = deadline.signal;
  const fail = (message: string, retryable: boolean) => ({
    ok: false as const,
    error: { status: 0, message, retryable, gone: false },
  });
  try {
    return await unlessAborted(call(signal), signal);
  } catch (error) {
    if (options.signal?.aborted && !deadline.timedOut) throw options.signal.reason;
    if (deadline.timedOut) return fail(`timed out after ${options.timeoutMs} ms`, true);
    if (error instanceof OutboundRefused) return fail(`refused: ${error.message}`, false);
    if (error instanceof BodyTooLarge) return fail(error.message, false);
    const text = error instanceof Error ? error.message : String(error);
    return fail(oneLine(text) || "connection failed", true);
  } finally {
    deadline.clear();
  }
}

const bearer = (accessToken: string) => new Headers({ authorization: `Bearer ${accessToken}` });

/** `GET {graphUrl}/{mediaId}`: where the file is, its type, hash and size. */
export function describeMedia(
  request: OutboundRequest,
  input: { graphUrl: string; mediaId: string; accessToken: string },
  options: MediaCallOptions,
): Promise<Described> {
  return timed(options, async (signal): Promise<Described> => {
    const url = `${input.graphUrl}/${encodeURIComponent(input.mediaId)}`;
    const res = await request(url, { method: "GET", headers: bearer(input.accessToken), signal });
    const text = await unlessAborted(res.text(), signal);
    if (res.status < 200 || res.status >= 300) return { ok: false, error: answerFailure(res.status, text) };
    let body: Record<string, unknown> | null = null;
    try {
      body = JSON.parse(text);
    } catch { /* handled below */ }
    const mediaUrl = typeof body?.url === "string" ? body.url : null;
    if (!body || !mediaUrl) {
      return {
        ok: false,
        error: {
          status: res.status,
          message: "Graph API answer has no media url",
          retryable: false,
          gone: false,
        },
      };
    }
    const size = typeof body.file_size === "number"
      ? body.file_size
      : typeof body.file_size === "string" && /^\d+$/.test(body.file_size)
      ? Number(body.file_size)
      : null;
    return {
      ok: true,
      media: {
        url: mediaUrl,
        mimeType: typeof body.mime_type === "string" ? cleanMimeType(body.mime_type) : null,
        sha256: typeof body.sha256 === "string" && body.sha256 ? body.sha256 : null,
        size: size !== null && Number.isSafeInteger(size) && size >= 0 ? size : null,
      },
    };
  });
}

/**
 * `GET url` with the token: the file's bytes, refused beyond `maxBytes` (by its Content-Length
 * before reading, or as soon as more arrived) and checked against `sha256` when Meta gave one.
 */
export function downloadMedia(
  request: OutboundRequest,
  input: { url: string; accessToken: string; sha256: string | null; maxBytes: number },
  options: MediaCallOptions,
): Promise<Downloaded> {
  return timed(options, async (signal): Promise<Downloaded> => {
    const res = await request(input.url, { method: "GET", headers: bearer(input.accessToken), signal });
    if (res.status < 200 || res.status >= 300) {
      const text = await unlessAborted(res.text(), signal);
      return { ok: false, error: answerFailure(res.status, text) };
    }
    const declared = Number(res.headers.get("content-length") ?? NaN);
    if (declared > input.maxBytes) {
      res.discard();
      return { ok: false, error: tooLarge(declared, input.maxBytes) };
    }
    const bytes = await unlessAborted(res.bytes({ maxBytes: input.maxBytes }), signal);
    if (input.sha256 && !sha256Matches(bytes, input.sha256)) {
      return {
        ok: false,
        error: {
          status: res.status,
          message: "the file does not match its sha256",
          retryable: true,
          gone: false,
        },
      };
    }
    return { ok: true, bytes };
  });
}

/** The failure of a file over its type's limit. */
export function tooLarge(size: number, maxBytes: number): MediaFailure {
  return {
    status: 0,
    message: `the file is over the limit of ${maxBytes} bytes (${size} bytes)`,
    retryable: false,
    gone: false,
  };
}

/** Whether `expected` (hex, or base64 as some senders write it) is the SHA-256 of `bytes`. */
export function sha256Matches(bytes: Uint8Array, expected: string): boolean {
  const digest = createHash("sha256").update(bytes).digest();
  const value = expected.trim();
  return value.toLowerCase() === digest.toString("hex") || value === digest.toString("base64");
}

/**
 * The file as a stream, described and requested afresh (the media endpoint): the open response
 * and what the Graph API said of it, or the failure.
 */
export async function openMedia(
  request: OutboundRequest,
  input: { graphUrl: string; mediaId: string; accessToken: string },
  options: MediaCallOptions,
): Promise<
  { ok: true; media: MediaDescription; response: OutboundResponse } | { ok: false; error: MediaFailure }
> {
  const described = await describeMedia(request, input, options);
  if (!described.ok) return described;
  return await timed(options, async (signal) => {
    // The timeout covers the answer's head; the body streams to the client at its own pace.
    const response = await request(described.media.url, {
      method: "GET",
      headers: bearer(input.accessToken),
      signal,
    });
    if (response.status < 200 || response.status >= 300) {
      const text = await unlessAborted(response.text(), signal);
      return { ok: false as const, error: answerFailure(response.status, text) };
    }
    return { ok: true as const, media: described.media, response };
  });
}
