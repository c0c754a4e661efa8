/**
 * The queued half of an inbound WhatsApp post (the route checked its signature and shape and
 * answered 200): each customer message is stored through conversations/receive.ts, each status
 * callback updates the outbound message it names. Idempotent, so a retried job changes nothing twice.
 */
import type { Deps } from "../../context.ts";
import type { MessageStatus } from "../../generated/prisma/enums.ts";
import { applyStatus, receiveCustomerMessage } from "../../conversations/receive.ts";
import { type InboundMessage, type InboundParse, parseWebhookPayload } from "./inbound.ts";
import type { InboundChannel } from "../cache.ts";

export const WHATSAPP_INBOUND_QUEUE = "whatsapp-inbound";

/** One accepted post: the channel and the raw JSON text Meta signed. */
export interface InboundJob {
  channelId: string;
  body: string;
}

const STATUS: Record<string, Exclude<MessageStatus, "RECEIVED" | "PENDING">> = {
  sent: "SENT",
  delivered: "DELIVERED",
  read: "READ",
  failed: "FAILED",
};

/** What Message.payload keeps beyond the content: the chosen reply option or the location. */
function payloadOf(m: InboundMessage) {
  if (m.reply) return { reply: m.reply };
  if (m.location) return { location: m.location };
  return null;
}

export async function processInbound(deps: Deps, job: InboundJob): Promise<void> {
  const parsed = parseWebhookPayload(JSON.parse(job.body));
  if (!parsed.ok) {
    deps.logger.warn("whatsapp payload refused by the worker", { channelId: job.channelId });
    return;
  }
  let channel = await deps.channels.whatsapp(job.channelId);
  // A record of another number: read the channel again before skipping it (its number may have changed).
  const numbers = [...parsed.messages, ...parsed.statuses].map((r) => r.phoneNumberId);
  if (channel && numbers.some((n) => n !== channel!.phoneNumberId)) {
    channel = await deps.channels.fresh(job.channelId);
  }
  // Deleted since the post was accepted: its conversations went with it.
  if (!channel) return;
  try {
    await store(deps, channel, parsed);
  } catch (error) {
    // Perhaps the channel (or its agent) was deleted meanwhile: the retry reads it again.
    deps.channels.forget(channel.id);
    throw error;
  }
}

async function store(
  deps: Deps,
  channel: InboundChannel,
  parsed: Extract<InboundParse, { ok: true }>,
): Promise<void> {
  for (const error of parsed.accountErrors) {
    deps.logger.warn("whatsapp account error", {
      channelId: channel.id,
      code: error.code,
      title: error.title,
    });
  }
  // Records of another number (one Meta app serving several) are not this channel's.
  for (const m of parsed.messages) {
    if (m.phoneNumberId !== channel.phoneNumberId) continue;
    await receiveCustomerMessage(deps, channel, {
      externalId: m.waMessageId,
      contact: { externalId: m.from, name: m.contactName },
      type: m.type,
      content: m.content,
      mediaId: m.media?.id ?? null,
      mediaMimeType: m.media?.mimeType ?? null,
      payload: payloadOf(m),
    });
  }
  for (const s of parsed.statuses) {
    if (s.phoneNumberId !== channel.phoneNumberId) continue;
    await applyStatus(deps, channel.id, {
      externalId: s.waMessageId,
      status: STATUS[s.status],
      error: s.errors.length ? { errors: s.errors.map((e) => ({ ...e })) } : null,
    });
  }
}
