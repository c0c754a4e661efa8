/**
 * The call of an intent's webhook (docs/behaviour.md "Replies"), bounded by INTENT_WEBHOOK_TIMEOUT_MS:
 * the request `{ intentName, fields, context }` through the app's pinned outbound client (passed in,
 * the shape of `OutboundPolicy.request`), and what its answer means for the tag: replaced by the
 * response's `message`, removed silently (2xx without one), or escalated to a human (no answer,
 * timeout, 3xx, 4xx, 5xx). No database and no logging here: the caller fires `intent.fired` before,
 * and logs and transfers after.
 */
import { OutboundRefused } from "../shared/outbound.ts";
import { unlessAborted } from "../shared/abort.ts";
import type { OutboundRequest } from "../channels/whatsapp/graph_api.ts";
import { Deadline } from "../shared/deadline.ts";

/** `context` of the request: the agent and the conversation with its contact, so the receiver can act for the customer. */
export interface IntentContext {
  agentId: string;
  agentName: string;
  conversationId: string;
  contactName: string;
  contactId: string;
}

export interface IntentRequestBody {
  intentName: string;
  /** One string per required field. */
  fields: Record<string, string>;
  context: IntentContext;
}

export type IntentOutcome =
  /** Replace the tag with `message`. */
  | { kind: "reply"; httpStatus: number; message: string }
  /** A 2xx without a `message`: remove the tag. */
  | { kind: "silent"; httpStatus: number }
  /** A technical error: log it and transfer to a human (reason ESCALATION). `httpStatus` 0: no answer. */
  | { kind: "escalate"; httpStatus: number; error: string };

export interface IntentCall {
  url: string;
  /** The intent's webhookMethod (POST, PUT or PATCH). */
  method: string;
  body: IntentRequestBody;
  /** Extra headers (none are stored on intents yet). */
  headers?: Record<string, string>;
}

/** Single-line, bounded text for the log. */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 500);

/** What an answer means for the tag. A `message` must be a non-empty string to replace it. */
export function intentOutcome(status: number, bodyText: string): IntentOutcome {
  if (status < 200 || status >= 300) {
    const why = status < 400 ? "redirect not followed" : oneLine(bodyText) || "no body";
    return { kind: "escalate", httpStatus: status, error: `HTTP ${status}: ${why}` };
  }
  let message: unknown;
  try {
    message = JSON.parse(bodyText)?.message;
  } catch { /* a 2xx that is not JSON carries no message */ }
  return typeof message === "string" && message.trim() !== ""
    ? { kind: "reply", httpStatus: status, message }
    : { kind: "silent", httpStatus: status };
}

/**
 * Calls the intent's webhook once with `timeoutMs` (config.intentWebhookTimeoutMs) covering the
 * answer and its body. Never throws for the receiver's or the network's failures; throws only when
 * `options.signal` aborts it.
 */
export async function callIntentWebhook(
  request: OutboundRequest,
  call: IntentCall,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<IntentOutcome> {
  const deadline = new Deadline(options.timeoutMs, options.signal);
  const signal = deadline.signal;
  const headers = new Headers(call.headers);
  headers.set("content-type", "application/json");
  const { intentName, fields, context } = call.body;
  const body = JSON.stringify({
    intentName,
    fields,
    context: {
      agentId: context.agentId,
      agentName: context.agentName,
      conversationId: context.conversationId,
      contactName: context.contactName,
      contactId: context.contactId,
    },
  });
  try {
    const res = await unlessAborted(
      request(call.url, { method: call.method, headers, body, signal }),
      signal,
    );
    return intentOutcome(res.status, await unlessAborted(res.text(), signal));
  } catch (error) {
    if (options.signal?.aborted && !deadline.timedOut) throw options.signal.reason;
    // No answer at all is recorded as HTTP 0.
    if (error instanceof OutboundRefused) {
      return { kind: "escalate", httpStatus: 0, error: `refused: ${error.message}` };
    }
    if (deadline.timedOut) {
      return { kind: "escalate", httpStatus: 0, error: `timed out after ${options.timeoutMs} ms` };
    }
    const text = error instanceof Error ? error.message : String(error);
    return { kind: "escalate", httpStatus: 0, error: oneLine(text) || "connection failed" };
  } finally {
    deadline.clear();
  }
}
