/**
 * Sending an approved WhatsApp template (docs/behaviour.md "WhatsApp: templates"): on a
 * conversation, or to a contact who has not written, which starts a conversation. The template and
 * its parameters are checked first (./approved.ts: 422, nothing stored). The message is then stored
 * as the person's TEMPLATE message (`content` the body filled in, `template { name, language }`,
 * Meta's `template` object as its payload), announced with `message.sent` and sent by the
 * message-send job like every outgoing message (conversations/outbound.ts: claims, pacing retries,
 * 131047), except that the customer's 24-hour window does not hold a template back.
 */
import { z } from "zod";
import type { ActorContext } from "../context.ts";
import { AppError, notFound } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { assertId } from "../shared/validation.ts";
import { storeOutgoing } from "../conversations/outbound.ts";
import { rescheduleTimers } from "../conversations/timers.ts";
import { upsertContact } from "../conversations/sql.ts";
import { answer } from "../conversations/handoff.ts";
import { approvedTemplate } from "./approved.ts";
import { templateChoiceSchema } from "./parameters.ts";

export const sendTemplateSchema = templateChoiceSchema;

/** A WhatsApp id as Meta takes it: digits with the country code; `+`, spaces, dots, dashes and brackets dropped. */
const whatsAppId = z.string().trim().max(40).transform((s) => s.replace(/[\s+().-]/g, "")).pipe(
  z.string().regex(
    /^[0-9]{6,20}$/,
    "a phone number with its country code (digits, `+` and separators allowed)",
  ),
);

export const startTemplateSchema = templateChoiceSchema.extend({
  to: whatsAppId.describe("The customer's WhatsApp number with its country code (`+55 11 99999-0000`)."),
});

const notWhatsApp = () =>
  new AppError("NOT_WHATSAPP", 409, "Templates are WhatsApp's: this is an API channel, which has none.");
const closed = () => new AppError("CONVERSATION_CLOSED", 409, "The conversation is closed.");

/**
 * Sends a template on the conversation (conversation:attend), whatever its window and status but
 * CLOSED (409 CONVERSATION_CLOSED); an API channel's answers 409 NOT_WHATSAPP. Stored as a HUMAN
 * message of the caller; an OPEN conversation stays the agent's (it answers the customer's reply).
 * Answers the conversation.
 */
export async function sendConversationTemplate(
  ctx: ActorContext,
  conversationId: string,
  input: z.output<typeof sendTemplateSchema>,
) {
  const conv = await ctx.db.conversation.findFirst({
    where: { id: assertId(conversationId, "Conversation"), workspaceId: ctx.actor.workspaceId },
    select: {
      id: true,
      workspaceId: true,
      agentId: true,
      channelId: true,
      status: true,
      channel: { select: { type: true } },
    },
  });
  if (!conv) throw notFound("Conversation");
  if (conv.status === "CLOSED") throw closed();
  if (conv.channel.type !== "WHATSAPP") throw notWhatsApp();
  const template = await approvedTemplate(ctx, conv.channelId, input);
  const now = ctx.clock.now();
  await ctx.db.$transaction(async (tx) => {
    // Locks the row: a close cannot slip in between check and insert.
    const touched = await tx.conversation.updateMany({
      where: { id: conv.id, status: { in: ["OPEN", "HUMAN"] } },
      data: { lastMessageAt: now, lastAgentMessageAt: now },
    });
    if (touched.count !== 1) throw closed();
    await storeOutgoing(ctx, tx, now, [{
      workspaceId: conv.workspaceId,
      agentId: conv.agentId,
      conversationId: conv.id,
      channelId: conv.channelId,
      channelType: conv.channel.type,
      sender: "HUMAN",
      senderUserId: ctx.actor.userId,
      content: template.content,
      template,
    }]);
    await rescheduleTimers(ctx, tx, conv.id);
  });
  return await answer(ctx, conv.id);
}

/**
 * Sends a template to `to` on a WhatsApp channel (conversation:attend): the contact (created when
 * new) and its OPEN or HUMAN conversation on the channel, or a new OPEN one (`conversation.opened`),
 * whose agent answers the customer's reply. Answers that conversation.
 */
export async function startTemplateConversation(
  ctx: ActorContext,
  channelId: string,
  input: z.output<typeof startTemplateSchema>,
) {
  const channel = await ctx.db.channel.findFirst({
    where: { id: assertId(channelId, "Channel"), workspaceId: ctx.actor.workspaceId },
    select: { id: true, workspaceId: true, agentId: true, type: true },
  });
  if (!channel) throw notFound("Channel");
  if (channel.type !== "WHATSAPP") throw notWhatsApp();
  const template = await approvedTemplate(ctx, channel.id, input);
  const now = ctx.clock.now();
  const conversationId = await ctx.db.$transaction(async (tx) => {
    // The contact's row lock (the upsert always takes it) serializes this with its inbound
    // messages, so the two never open two conversations.
    const [contact] = await upsertContact.rows(tx, {
      id: newId(),
      workspaceId: channel.workspaceId,
      externalId: input.to,
      name: null,
      now,
    });
    const open = await tx.conversation.findFirst({
      where: { channelId: channel.id, contactId: contact.id, status: { in: ["OPEN", "HUMAN"] } },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { id: true, agentId: true },
    });
    // The window stays closed until the customer writes (no lastContactMessageAt).
    const conversation = open ?? await tx.conversation.create({
      data: {
        workspaceId: channel.workspaceId,
        agentId: channel.agentId,
        channelId: channel.id,
        contactId: contact.id,
        status: "OPEN",
        openedAt: now,
        lastMessageAt: now,
        createdAt: now,
      },
      select: { id: true, agentId: true },
    });
    if (!open) {
      await ctx.events.publish(tx, {
        type: "conversation.opened",
        workspaceId: channel.workspaceId,
        agentId: conversation.agentId,
        conversationId: conversation.id,
        data: {},
      });
    }
    await tx.conversation.update({
      where: { id: conversation.id },
      data: { lastMessageAt: now, lastAgentMessageAt: now },
    });
    await storeOutgoing(ctx, tx, now, [{
      workspaceId: channel.workspaceId,
      agentId: conversation.agentId,
      conversationId: conversation.id,
      channelId: channel.id,
      channelType: channel.type,
      sender: "HUMAN",
      senderUserId: ctx.actor.userId,
      content: template.content,
      template,
    }]);
    await rescheduleTimers(ctx, tx, conversation.id);
    return conversation.id;
  });
  return await answer(ctx, conversationId);
}
