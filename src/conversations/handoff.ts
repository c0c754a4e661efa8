/**
 * Human handoff (docs/behaviour.md "Channels and conversations"): the four operations of a person:
 * take over, reply, release, close. Every change is one transaction with its events; the state
 * checks are in the UPDATE's WHERE, so two people (or a person and the pipeline) racing change it
 * once. The transfer and the close themselves are in ./transitions.ts, shared with the reply
 * pipeline and the timers.
 */
import { z } from "zod";
import type { ActorContext } from "../context.ts";
import { AppError } from "../shared/errors.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { channelPrivate } from "../channels/views.ts";
import { storeOutgoing } from "./outbound.ts";
import { refusedByMeta, windowOf } from "./views.ts";
import { rescheduleTimers } from "./timers.ts";
import { closeConversation, publishAssigned, transferToHuman } from "./transitions.ts";
import { userPrivate } from "../workspaces/views.ts";
import { unreadOf } from "./assignment_sql.ts";

export const humanReplySchema = z.object({
  content: z.string().trim().min(1).max(4096).describe(
    "The text sent to the customer (at most 4096 characters).",
  ),
}).strict();

const notFound = () => new AppError("NOT_FOUND", 404, "Conversation not found.");
const closed = () => new AppError("CONVERSATION_CLOSED", 409, "The conversation is closed.");
const notHuman = () =>
  new AppError("CONVERSATION_NOT_HUMAN", 409, "The conversation is not with a human; take it over first.");

async function load(ctx: ActorContext, id: string) {
  const row = await ctx.db.conversation.findFirst({
    where: { id, workspaceId: ctx.actor.workspaceId },
    select: {
      id: true,
      workspaceId: true,
      agentId: true,
      status: true,
      channelId: true,
      lastContactMessageAt: true,
      windowClosedAt: true,
      channel: { select: { type: true } },
    },
  });
  if (!row) throw notFound();
  return row;
}

/**
 * What the Conversation type shows beside the row: its contact, its channel (never its
 * credentials) and its assignee.
 */
const conversationInclude = {
  contact: true,
  channel: { omit: channelPrivate },
  assignee: { omit: userPrivate },
} as const satisfies Prisma.ConversationInclude;
/** A conversation as the operations answer it, with the caller's `unread` count. */
export type ConversationRow = Prisma.ConversationGetPayload<{ include: typeof conversationInclude }> & {
  unread: number | null;
};

/**
 * The conversation's stored row, as the change left it (404 when it is gone since): what the
 * handoff operations and the template sends (templates/send.ts) answer.
 */
export async function answer(ctx: ActorContext, id: string): Promise<ConversationRow> {
  const row = await ctx.db.conversation.findFirst({
    where: { id, workspaceId: ctx.actor.workspaceId },
    include: conversationInclude,
  });
  if (!row) throw notFound();
  return { ...row, unread: await unreadOf(ctx.db, id, ctx.actor.userId) };
}

/**
 * Takes the conversation over (conversation:attend): OPEN → HUMAN assigned to the caller,
 * `human.transferred` with reason MANUAL. On a HUMAN conversation it only reassigns it; CLOSED → 409.
 * `conversation.assigned` when the assignee changed (an API token takes it over for nobody).
 */
export async function takeover(ctx: ActorContext, id: string): Promise<ConversationRow> {
  const conv = await load(ctx, id);
  const userId = ctx.actor.userId;
  await ctx.db.$transaction(async (tx) => {
    // The assignee before, with the row locked until the change commits.
    const [locked] = await tx.$queryRaw<Array<{ before: string | null }>>`
      SELECT "assignedUserId" AS before FROM "Conversation" WHERE id = ${id} FOR UPDATE`;
    const moved = await transferToHuman(ctx, tx, conv, {
      reason: "MANUAL",
      summary: "taken over by a person",
      userId,
    });
    if (!moved) {
      const reassigned = await tx.conversation.updateMany({
        where: { id, status: "HUMAN" },
        data: { assignedUserId: userId },
      });
      if (reassigned.count !== 1) throw closed();
    }
    // A transfer by an API token (no person) keeps whoever held it while OPEN.
    const after = moved ? userId ?? locked?.before ?? null : userId;
    if (locked && locked.before !== after) {
      await publishAssigned(ctx.events, tx, { ...conv, conversationId: id, assigneeId: after });
    }
  });
  return await answer(ctx, id);
}

/**
 * A person's reply (conversation:attend), on HUMAN conversations only (409 otherwise): stored as a
 * HUMAN message, `message.sent` with sender HUMAN, sent through the channel like the agent's.
 */
export async function humanReply(
  ctx: ActorContext,
  id: string,
  input: z.output<typeof humanReplySchema>,
): Promise<ConversationRow> {
  const conv = await load(ctx, id);
  const now = ctx.clock.now();
  // Nothing free-form reaches a WhatsApp customer outside the window: refused, nothing stored.
  const window = windowOf(conv, now);
  if (conv.status === "HUMAN" && !window.open) {
    throw new AppError(
      "WINDOW_CLOSED",
      409,
      refusedByMeta(conv)
        ? "WhatsApp refused a message outside the customer's window (131047); it opens again when the " +
          `customer writes (closesAt ${window.closesAt}). Only a template reaches them now.`
        : window.closesAt
        ? `The customer's 24-hour window closed at ${window.closesAt} (closesAt); only a template reaches them now.`
        : "The customer has no open 24-hour window on this channel; only a template reaches them now.",
    );
  }
  await ctx.db.$transaction(async (tx) => {
    // Locks the row, so a concurrent release or close cannot slip in between check and insert.
    const touched = await tx.conversation.updateMany({
      where: { id, status: "HUMAN" },
      data: { lastMessageAt: now, lastAgentMessageAt: now },
    });
    if (touched.count !== 1) throw conv.status === "CLOSED" ? closed() : notHuman();
    await storeOutgoing(ctx, tx, now, [{
      workspaceId: conv.workspaceId,
      agentId: conv.agentId,
      conversationId: id,
      channelId: conv.channelId,
      channelType: conv.channel.type,
      sender: "HUMAN",
      senderUserId: ctx.actor.userId,
      content: input.content,
    }]);
    await rescheduleTimers(ctx, tx, id);
  });
  return await answer(ctx, id);
}

/**
 * Gives the conversation back to the agent (conversation:attend): HUMAN → OPEN, held by nobody
 * (`conversation.assigned` when someone held it); 409 otherwise.
 */
export async function release(ctx: ActorContext, id: string): Promise<ConversationRow> {
  const conv = await load(ctx, id);
  const now = ctx.clock.now();
  await ctx.db.$transaction(async (tx) => {
    const [locked] = await tx.$queryRaw<Array<{ before: string | null }>>`
      SELECT "assignedUserId" AS before FROM "Conversation" WHERE id = ${id} FOR UPDATE`;
    const changed = await tx.conversation.updateMany({
      where: { id, status: "HUMAN" },
      data: { status: "OPEN", humanReason: null, transferSummary: null, assignedUserId: null },
    });
    if (changed.count !== 1) throw conv.status === "CLOSED" ? closed() : notHuman();
    // What the customer wrote while a person attended was theirs to answer: the agent starts fresh.
    await tx.message.updateMany({
      where: { conversationId: id, senderKind: "CUSTOMER", answeredAt: null },
      data: { answeredAt: now },
    });
    // Not a webhook event (there is no subscribable type for it): live feeds show the status change.
    await ctx.events.publish(tx, {
      type: "conversation.released",
      workspaceId: conv.workspaceId,
      agentId: conv.agentId,
      conversationId: id,
      data: {},
    });
    if (locked?.before) {
      await publishAssigned(ctx.events, tx, { ...conv, conversationId: id, assigneeId: null });
    }
  });
  return await answer(ctx, id);
}

/**
 * Closes the conversation (conversation:attend): → CLOSED, `conversation.closed` `{ reason:
 * "MANUAL" }`; already CLOSED → 409.
 */
export async function close(ctx: ActorContext, id: string): Promise<ConversationRow> {
  const conv = await load(ctx, id);
  await ctx.db.$transaction(async (tx) => {
    const closedNow = await closeConversation(ctx, tx, conv, "MANUAL");
    if (!closedNow) throw closed();
  });
  return await answer(ctx, id);
}
