/**
 * Sending a failed message again (docs/behaviour.md "Sending a failed message again"): the FAILED
 * outbound message's content (a text, or a template with the same parameters) is stored as a new
 * message of the same sender and sent through the normal outbound path (./outbound.ts: claims, so
 * it goes out once); the failed message stays as it was. A failed message is copied once: the copy
 * names it (`resentFromId`, unique), so two clicks or two people racing send it once.
 */
import type { ActorContext } from "../context.ts";
import type { Message } from "../generated/prisma/client.ts";
import type { TemplateObject } from "../channels/whatsapp/graph_api.ts";
import { AppError, conflict, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { storeOutgoing } from "./outbound.ts";
import { rescheduleTimers } from "./timers.ts";
import { windowClosed } from "./handoff.ts";
import { windowOf } from "./views.ts";

const notResendable = () =>
  conflict(
    "MESSAGE_NOT_RESENDABLE",
    "Only a FAILED outbound message of the agent or a person can be sent again.",
  );
const alreadyResent = () =>
  conflict("MESSAGE_ALREADY_RESENT", "This failed message has been sent again already (see resentFromId).");
const closed = () => new AppError("CONVERSATION_CLOSED", 409, "The conversation is closed.");

const isUniqueViolation = (e: unknown) => (e as { code?: string })?.code === "P2002";

/**
 * Sends the FAILED outbound message `messageId` again (conversation:attend) as a new message: same
 * sender and author, content and template; `message.sent`, then the send job. 409
 * MESSAGE_NOT_RESENDABLE (not a FAILED AI or HUMAN message), MESSAGE_ALREADY_RESENT,
 * CONVERSATION_CLOSED, and WINDOW_CLOSED for a text outside WhatsApp's window (a template is not
 * held back). Answers the new message.
 */
export async function resendMessage(ctx: ActorContext, messageId: string): Promise<Message> {
  const failed = await ctx.db.message.findFirst({
    where: { id: assertId(messageId, "Message"), conversation: { workspaceId: ctx.actor.workspaceId } },
    select: {
      id: true,
      direction: true,
      senderKind: true,
      senderUserId: true,
      status: true,
      type: true,
      content: true,
      template: true,
      payload: true,
      conversation: {
        select: {
          id: true,
          workspaceId: true,
          agentId: true,
          channelId: true,
          status: true,
          lastContactMessageAt: true,
          windowClosedAt: true,
          channel: { select: { type: true } },
        },
      },
    },
  });
  if (!failed) throw notFound("Message");
  const sender = failed.senderKind;
  if (
    failed.direction !== "OUTBOUND" || failed.status !== "FAILED" || (sender !== "AI" && sender !== "HUMAN")
  ) {
    throw notResendable();
  }
  const conv = failed.conversation;
  if (conv.status === "CLOSED") throw closed();
  const now = ctx.clock.now();
  const template = failed.type === "TEMPLATE" && failed.template && failed.payload
    ? {
      ...(failed.template as { name: string; language: string }),
      send: failed.payload as unknown as TemplateObject,
    }
    : undefined;
  // As a person's reply: nothing free-form is stored for a customer outside the window.
  const window = windowOf(conv, now);
  if (!template && !window.open) throw windowClosed(conv, window);
  try {
    const id = await ctx.db.$transaction(async (tx) => {
      // Locks the row, so a close cannot slip in between check and insert.
      const touched = await tx.conversation.updateMany({
        where: { id: conv.id, status: { in: ["OPEN", "HUMAN"] } },
        data: { lastMessageAt: now, lastAgentMessageAt: now },
      });
      if (touched.count !== 1) throw closed();
      const { stored: [copy] } = await storeOutgoing(ctx, tx, now, [{
        workspaceId: conv.workspaceId,
        agentId: conv.agentId,
        conversationId: conv.id,
        channelId: conv.channelId,
        channelType: conv.channel.type,
        sender,
        senderUserId: failed.senderUserId,
        content: failed.content,
        template,
      }]);
      // The unique index on resentFromId: a second copy of the same failed message rolls back here.
      await tx.message.update({ where: { id: copy.id }, data: { resentFromId: failed.id } });
      await rescheduleTimers(ctx, tx, conv.id);
      return copy.id;
    });
    return await ctx.db.message.findUniqueOrThrow({ where: { id } });
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyResent();
    throw e;
  }
}
