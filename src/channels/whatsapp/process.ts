/**
 * The queued half of an inbound WhatsApp post (the route checked its signature and answered 200):
 * each customer message is stored through conversations/receive.ts (an unreadable one as OTHER with
 * its raw JSON, logged), each status callback updates the outbound message it names. One message
 * that fails to store never keeps the others from being stored. Idempotent, so a retried job
 * changes nothing twice.
 */
import type { Deps } from "../../context.ts";
import type { MessageStatus } from "../../generated/prisma/enums.ts";
import type { Logger } from "../../shared/logger.ts";
import { applyStatus, closeWindowOf, receiveCustomerMessage } from "../../conversations/receive.ts";
import { REENGAGEMENT_CODE } from "./graph_api.ts";
import { type InboundMessage, type InboundParse, parseWebhookBody } from "./inbound.ts";
import type { InboundChannel } from "../cache.ts";
import { applyTemplateUpdates } from "../../templates/sync.ts";

export const WHATSAPP_INBOUND_QUEUE = "whatsapp-inbound";

/** One accepted post: the channel and the raw JSON text Meta signed. */
export interface InboundJob {
  channelId: string;
  body: string;
  /** The job of the channel whose URL received the post: it applies the post's template statuses. */
  templates?: boolean;
}

const STATUS: Record<string, Exclude<MessageStatus, "RECEIVED" | "PENDING">> = {
  sent: "SENT",
  delivered: "DELIVERED",
  read: "READ",
  failed: "FAILED",
};

/**
 * What Message.payload keeps beyond the content: an OTHER message's raw JSON as Meta sent it, the
 * chosen reply option or the location.
 */
function payloadOf(m: InboundMessage) {
  if (m.type === "OTHER") return m.raw;
  if (m.reply) return { reply: m.reply };
  if (m.location) return { location: m.location };
  return null;
}

/** What a post carried that cannot be stored (no sender, not JSON), and what was skipped by design. */
export function logUnstored(logger: Logger, channelId: string, parsed: InboundParse): void {
  for (const d of parsed.dropped) {
    logger.warn("whatsapp post: not stored", {
      channelId,
      path: d.path,
      reason: d.reason,
      excerpt: d.excerpt,
    });
  }
  for (const reason of parsed.skipped) logger.debug("whatsapp post: skipped", { channelId, reason });
  for (const error of parsed.accountErrors) {
    logger.warn("whatsapp account error", { channelId, code: error.code, title: error.title });
  }
}

export async function processInbound(deps: Deps, job: InboundJob): Promise<void> {
  const parsed = parseWebhookBody(job.body);
  let channel = await deps.channels.whatsapp(job.channelId);
  // A record of another number: read the channel again before skipping it (its number may have changed).
  const numbers = [...parsed.messages, ...parsed.statuses].map((r) => r.phoneNumberId);
  if (channel && numbers.some((n) => n !== null && n !== channel!.phoneNumberId)) {
    channel = await deps.channels.fresh(job.channelId);
  }
  // Deleted since the post was accepted: its conversations went with it.
  if (!channel) return;
  logUnstored(deps.logger, channel.id, parsed);
  try {
    await store(deps, channel, parsed);
    if (job.templates && parsed.templateUpdates.length) {
      await applyTemplateUpdates(deps, channel, parsed.templateUpdates);
    }
  } catch (error) {
    // Perhaps the channel (or its agent) was deleted meanwhile: the retry reads it again.
    deps.channels.forget(channel.id);
    throw error;
  }
}

async function store(deps: Deps, channel: InboundChannel, parsed: InboundParse): Promise<void> {
  // Records whose number is unreadable are the channel's; another number's (one Meta app serving
  // several) are stored by that number's own job (the route queues one per channel).
  const mine = (r: { phoneNumberId: string | null }) =>
    r.phoneNumberId === null || r.phoneNumberId === channel.phoneNumberId;
  let failure: unknown = null;
  for (const m of parsed.messages) {
    if (!mine(m)) continue;
    try {
      const received = await receiveCustomerMessage(deps, channel, {
        externalId: m.waMessageId,
        contact: { externalId: m.from, name: m.contactName },
        type: m.type,
        content: m.content,
        mediaId: m.media?.id ?? null,
        mediaMimeType: m.media?.mimeType ?? null,
        mediaFileName: m.media?.filename ?? null,
        mediaCaption: m.media?.caption ?? null,
        payload: payloadOf(m),
      });
      // Logged once, when stored (a resent post stores nothing again).
      if (received.inserted && m.unreadable) {
        deps.logger.warn("whatsapp message unreadable: stored as OTHER", {
          channelId: channel.id,
          messageId: received.message.id,
          waMessageId: m.waMessageId,
          kind: m.kind,
          reason: m.unreadable,
        });
      }
    } catch (error) {
      // The others are still stored; the job fails afterwards and its retry stores what is missing.
      failure ??= error;
      deps.logger.error("whatsapp message not stored", {
        channelId: channel.id,
        waMessageId: m.waMessageId,
        error,
      });
    }
  }
  for (const s of parsed.statuses) {
    if (!mine(s)) continue;
    // A message refused later, in a `failed` status, for being outside the window: it closes. Before
    // the status, so the live feeds that read the conversation for the message's change see it closed.
    if (s.status === "failed" && s.errors.some((e) => e.code === REENGAGEMENT_CODE)) {
      await closeWindowOf(deps, channel.id, s.waMessageId);
    }
    await applyStatus(deps, channel.id, {
      externalId: s.waMessageId,
      status: STATUS[s.status],
      error: s.errors.length ? { errors: s.errors.map((e) => ({ ...e })) } : null,
      pricing: s.pricing,
    });
  }
  if (failure) throw failure;
}
