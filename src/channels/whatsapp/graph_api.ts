/**
 * Outbound text and templates through the WhatsApp Cloud API: `POST {WHATSAPP_GRAPH_URL}/{phoneNumberId}/messages`
 * with the channel's bearer token, through the app's pinned outbound client (passed in as
 * `request`, the shape of `OutboundPolicy.request`). Answers the wamid, or the error classified as
 * retryable or not, so the caller records `status: FAILED` with it and retries only what may pass.
 * No database and no retries here: one call, one outcome.
 *
 * Classification follows Meta's "Cloud API Error Codes" page
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes) and the Graph API's
 * "Handling Errors" guide (https://developers.facebook.com/docs/graph-api/guides/error-handling),
 * which both say to branch on `error.code`, not on titles or subcodes.
 */
import { type OutboundInit, OutboundRefused, type OutboundResponse } from "../../shared/outbound.ts";
import { unlessAborted } from "../../shared/abort.ts";
import { Deadline } from "../../shared/deadline.ts";

/** The shape of `OutboundPolicy.request` (pass `(url, init) => outbound.request(url, init)`). */
export type OutboundRequest = (url: string, init: OutboundInit) => Promise<OutboundResponse>;

/** WhatsApp's limit on a text body (Meta: "text.body … Maximum 4096 characters"). */
export const WHATSAPP_TEXT_LIMIT = 4096;

/** One send waits this long for Meta's answer (the Graph API answers in well under 1 s). */
export const GRAPH_TIMEOUT_MS = 10_000;

/**
 * Codes Meta documents as temporary: throttling (4 app rate limit, 80007 WABA rate limit, 130429
 * throughput, 131048 spam rate limit, 131056 pair rate limit: "wait and retry") and service errors
 * (1 unknown / possible server error, 2 service temporarily down, 131000 something went wrong,
 * 131016 service unavailable, 133004 server temporarily unavailable).
 */
const RETRYABLE_CODES = new Set([1, 2, 4, 80007, 130429, 131000, 131016, 131048, 131056, 133004]);

/**
 * Meta's pacing refusals, which say the message was not delivered: 130429 (the number's throughput)
 * and 131056 (too many messages to one customer). Waited out (conversations/outbound.ts).
 */
export const PACING_CODES: ReadonlySet<number> = new Set([130429, 131056]);

/** Meta's refusal of a free-form message outside the customer's 24-hour window. */
export const REENGAGEMENT_CODE = 131047;

/**
 * Codes that fail the same way on every try: authorization (0, 3, 10, 190 expired token, 200-299
 * permissions), parameters (100 invalid parameter, 131008 missing, 131009 invalid value, 131051
 * unsupported type), the recipient (131026 undeliverable, 131047 outside the 24-hour window, which
 * needs a template) and account blocks (368, 131031). Code 131049 (held back "to maintain healthy
 * ecosystem engagement") is not retried either: Meta advises against retrying it soon.
 */
function permanent(code: number): boolean {
  return code === 0 || code === 3 || code === 10 || code === 190 || (code >= 200 && code <= 299) ||
    [100, 131008, 131009, 131026, 131031, 131047, 131049, 131051, 368].includes(code);
}

export interface GraphError {
  /** Meta's HTTP status, or 0 when no answer came (refused, connection error, timeout). */
  status: number;
  /** Meta's `error.code`, or null when the answer carried none. */
  code: number | null;
  /** One line, safe to store on the message and show: Meta's message and details, or ours. */
  message: string;
  retryable: boolean;
}

export type SendResult = { ok: true; waMessageId: string } | { ok: false; error: GraphError };

/** Where a message goes: the channel's number and token, and the customer. */
export interface SendTarget {
  /** config.whatsappGraphUrl, without a trailing slash (`https://graph.facebook.com/v21.0`). */
  graphUrl: string;
  phoneNumberId: string;
  /** The channel's opened access token; it goes only into the Authorization header. */
  accessToken: string;
  /** The customer's WhatsApp id (the contact's externalId). */
  to: string;
}

export interface SendTextInput extends SendTarget {
  /** At most WHATSAPP_TEXT_LIMIT characters (shaping.ts splits longer replies). */
  body: string;
}

/**
 * The `template` object of Meta's send call ("Send message templates"): built and checked against
 * the template's components by src/templates/parameters.ts, sent as it is.
 */
export interface TemplateObject {
  name: string;
  language: { code: string };
  components?: unknown[];
}

export interface SendTemplateInput extends SendTarget {
  template: TemplateObject;
}

export interface SendOptions {
  timeoutMs?: number;
  /** Aborts the call (the server stops); then sendText rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Single-line, bounded text. */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 1000);

interface GraphErrorBody {
  error?: { message?: unknown; code?: unknown; error_data?: { details?: unknown } };
}

/** Classifies a non-2xx answer by Meta's `error.code`, else by the HTTP status (5xx and 429 may pass later). */
export function classifyGraphError(status: number, bodyText: string): GraphError {
  let parsed: GraphErrorBody | null = null;
  try {
    parsed = JSON.parse(bodyText);
  } catch { /* not JSON: a proxy's page, classified by status */ }
  const e = parsed && typeof parsed === "object" ? parsed.error : undefined;
  const code = typeof e?.code === "number" && Number.isInteger(e.code) ? e.code : null;
  const parts = [e?.message, e?.error_data?.details].filter((p): p is string =>
    typeof p === "string" && p !== ""
  );
  const message = oneLine(parts.join(": ")) || `Graph API answered HTTP ${status}`;
  const byStatus = status >= 500 || status === 429;
  const retryable = code === null ? byStatus : RETRYABLE_CODES.has(code) || (!permanent(code) && byStatus);
  return { status, code, message, retryable };
}

/**
 * Sends one text message. Never throws for Meta's or the network's failures (they come back as
 * `ok: false`); throws only when `options.signal` aborts it, so the caller records no outcome.
 */
export async function sendText(
  request: OutboundRequest,
  input: SendTextInput,
  options: SendOptions = {},
): Promise<SendResult> {
  if (input.body.length === 0 || input.body.length > WHATSAPP_TEXT_LIMIT) {
    return {
      ok: false,
      error: {
        status: 0,
        code: null,
        message: `text must have 1 to ${WHATSAPP_TEXT_LIMIT} characters`,
        retryable: false,
      },
    };
  }
  return await postMessage(request, input, { type: "text", text: { body: input.body } }, options);
}

/**
 * Sends one approved template (allowed outside the customer's 24-hour window), as sendText does:
 * the same request, answer and error classification.
 */
export async function sendTemplate(
  request: OutboundRequest,
  input: SendTemplateInput,
  options: SendOptions = {},
): Promise<SendResult> {
  return await postMessage(request, input, { type: "template", template: input.template }, options);
}

/** One `POST /{phoneNumberId}/messages` of `message` (its `type` and that type's object) to `target.to`. */
async function postMessage(
  request: OutboundRequest,
  target: SendTarget,
  message: { type: "text"; text: { body: string } } | { type: "template"; template: TemplateObject },
  options: SendOptions,
): Promise<SendResult> {
  const fail = (error: GraphError): SendResult => ({ ok: false, error });
  const timeoutMs = options.timeoutMs ?? GRAPH_TIMEOUT_MS;
  const deadline = new Deadline(timeoutMs, options.signal);
  const signal = deadline.signal;
  const url = `${target.graphUrl}/${encodeURIComponent(target.phoneNumberId)}/messages`;
  const headers = new Headers({
    "authorization": `Bearer ${target.accessToken}`,
    "content-type": "application/json",
  });
  const body = JSON.stringify({ messaging_product: "whatsapp", to: target.to, ...message });
  try {
    const res = await unlessAborted(request(url, { method: "POST", headers, body, signal }), signal);
    // The answer is read under the same timeout: a stalled body is a timeout too.
    const text = await unlessAborted(res.text(), signal);
    if (res.status < 200 || res.status >= 300) return fail(classifyGraphError(res.status, text));
    let waMessageId: unknown;
    try {
      waMessageId = JSON.parse(text)?.messages?.[0]?.id;
    } catch { /* handled below */ }
    if (typeof waMessageId === "string" && waMessageId !== "") return { ok: true, waMessageId };
    // Accepted but unreadable: Meta may have sent it, so a retry could send it twice.
    return fail({
      status: res.status,
      code: null,
      message: "Graph API answer has no message id",
      retryable: false,
    });
  } catch (error) {
    if (options.signal?.aborted && !deadline.timedOut) throw options.signal.reason;
    if (error instanceof OutboundRefused) {
      return fail({ status: 0, code: null, message: `refused: ${error.message}`, retryable: false });
    }
    if (deadline.timedOut) {
      return fail({ status: 0, code: null, message: `timed out after ${timeoutMs} ms`, retryable: true });
    }
    const text = error instanceof Error ? error.message : String(error);
    return fail({ status: 0, code: null, message: oneLine(text) || "connection failed", retryable: true });
  } finally {
    deadline.clear();
  }
}
