/**
 * Storing a customer message, the one way every channel does it (WhatsApp's worker, the API
 * channel): the contact by (workspace, externalId), the contact's OPEN or HUMAN conversation on the
 * channel or a new one (a CLOSED one is never reopened), the message, and in the same transaction
 * `conversation.opened` (new conversation) and `message.received`.
 *
 * Deduplication on (channelId, externalId): the contact upsert locks the contact's row, so two
 * deliveries of the same WhatsApp message (same sender) serialize there, and the second sees the
 * first's message and stores nothing. The unique index is the backstop; events are published only
 * for a row this call inserted. The same lock keeps two messages of one contact from opening two
 * conversations at once.
 */
import type { z } from "zod";
import type { ActorContext, Deps } from "../context.ts";
import type { SqlTx } from "../db/client.ts";
import { sqlTransaction } from "../db/transaction.ts";
import { newId } from "../shared/ids.ts";
import type { Channel, Prisma } from "../generated/prisma/client.ts";
import type { MessageStatus, MessageType } from "../generated/prisma/enums.ts";
import { notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import type { apiMessageSchema } from "../channels/schemas.ts";
import { closeWindow, storeCustomerMessage, upsertContact } from "./sql.ts";
import type { RowOf } from "../db/statement.ts";

/**
 * A customer message as stored: its statement's row (`storeCustomerMessage`), the columns the Message
 * type shows (its `sender` is senderKind; `media` gathers the media columns).
 */
export type StoredMessage =
  & Omit<RowOf<typeof storeCustomerMessage.columns>, "stored" | "open" | "id">
  & { id: string };

/** Message types whose WhatsApp media is fetched and understood (src/media/). */
const MEDIA_TYPES: ReadonlySet<string> = new Set(["AUDIO", "IMAGE", "DOCUMENT"]);

/** The channel a message arrived on. */
export type ChannelRef = Pick<Channel, "id" | "workspaceId" | "agentId">;

/** A customer message as a channel hands it over. */
export interface CustomerMessage {
  /** The channel's own id of the message (WhatsApp wamid): the deduplication key; null: none. */
  externalId: string | null;
  contact: { externalId: string; name: string | null };
  type: MessageType;
  content: string;
  mediaId?: string | null;
  mediaMimeType?: string | null;
  /** A document's file name, an image's or document's caption. */
  mediaFileName?: string | null;
  mediaCaption?: string | null;
  payload?: Prisma.InputJsonValue | null;
}

export type Received =
  | { inserted: true; message: StoredMessage; conversationId: string; opened: boolean }
  | { inserted: false };

/** Thrown inside the transaction to roll it back when the message turns out to be stored already. */
class AlreadyStored extends Error {}

export async function receiveCustomerMessage(
  deps: Deps,
  channel: ChannelRef,
  m: CustomerMessage,
): Promise<Received> {
  try {
    return await sqlTransaction(deps.db, (tx) => store(deps, tx, channel, m));
  } catch (e) {
    if (e instanceof AlreadyStored) return { inserted: false };
    throw e;
  }
}

async function store(deps: Deps, tx: SqlTx, channel: ChannelRef, m: CustomerMessage): Promise<Received> {
  const now = deps.clock.now();
  const name = m.contact.name?.trim() || null;
  // The upsert always takes the contact's row lock (DO UPDATE), even when the name is unchanged.
  const [contact] = await upsertContact.rows(tx, {
    id: newId(),
    workspaceId: channel.workspaceId,
    externalId: m.contact.externalId,
    name,
    now,
  });
  // After the lock, in a statement of its own (so its snapshot sees what the lock waited for): whether
  // the message is stored already, the contact's OPEN or HUMAN conversation, and, when the message
  // is new, the conversation opened for it (when there is none) and the message itself, in one
  // round trip. The unique index (channelId, externalId) stays the backstop of the dedup.
  const conversationId = newId();
  const media = { id: m.mediaId ?? null, mimeType: m.mediaMimeType ?? null };
  // A media message waits for its media job (src/media/job.ts); its message.received follows it.
  const mediaPending = media.id !== null && MEDIA_TYPES.has(m.type);
  const payload = m.payload == null ? null : JSON.stringify(m.payload);
  // Every time is the app clock's (injected in tests), as for the conversation's times and the replies.
  const [row] = await storeCustomerMessage.rows(tx, {
    channelId: channel.id,
    externalId: m.externalId,
    contactId: contact.id,
    conversationId,
    workspaceId: channel.workspaceId,
    agentId: channel.agentId,
    now,
    messageId: newId(),
    type: m.type,
    content: m.content,
    mediaId: media.id,
    mediaMimeType: media.mimeType,
    mediaFileName: m.mediaFileName ?? null,
    mediaCaption: m.mediaCaption ?? null,
    mediaPending,
    payload,
  });
  // Stored already (seen after the lock, or by the unique index): nothing of this call is kept.
  const { stored: _stored, open, id, ...rest } = row;
  if (!id) throw new AlreadyStored();
  const message: StoredMessage = { id, ...rest };

  const base = {
    workspaceId: channel.workspaceId,
    agentId: channel.agentId,
    conversationId: message.conversationId,
  };
  await deps.events.publishAll(tx, [
    ...(open ? [] : [{ ...base, type: "conversation.opened" as const, data: {} }]),
    mediaPending ? { ...base, type: "message.media_pending" as const, data: { messageId: message.id } } : {
      ...base,
      type: "message.received" as const,
      data: {
        message: {
          id: message.id,
          type: message.type,
          content: message.content,
          createdAt: message.createdAt.toISOString(),
        },
      },
    },
  ]);
  return {
    inserted: true,
    message,
    conversationId: message.conversationId,
    opened: !open,
  };
}

/**
 * POST /api/channels/{channelId}/messages: a customer message on an API channel of the workspace.
 * Answers the stored message.
 */
export async function receiveApiMessage(
  ctx: ActorContext,
  channelId: string,
  input: z.output<typeof apiMessageSchema>,
): Promise<StoredMessage> {
  const channel = await ctx.db.channel.findFirst({
    where: { id: assertId(channelId, "Channel"), workspaceId: ctx.actor.workspaceId, type: "API" },
    select: { id: true, workspaceId: true, agentId: true },
  });
  // A WhatsApp channel's messages come from Meta only.
  if (!channel) throw notFound("API channel");
  const received = await receiveCustomerMessage(ctx, channel, {
    externalId: null,
    contact: { externalId: input.contact.externalId, name: input.contact.name ?? null },
    type: input.type,
    content: input.content,
  });
  // Without an externalId there is nothing to deduplicate: the message is always new.
  if (!received.inserted) throw new Error("API channel message was not stored");
  return received.message;
}

// Delivery states only move forward (Meta may report `read` before `delivered`); FAILED always lands.
const FORWARD = ["PENDING", "SENT", "DELIVERED", "READ"] as const;

/** Meta refused the channel's message `externalId` with 131047: its conversation's window closes. */
export async function closeWindowOf(deps: Pick<Deps, "db" | "clock">, channelId: string, externalId: string) {
  await closeWindow.run(deps.db, { now: deps.clock.now(), messageId: null, channelId, externalId });
}

/**
 * A status callback: the outbound message of the channel with this externalId takes the new status
 * (and the channel's errors on FAILED). Returns whether a message was changed. A change is announced
 * live as `message.updated` by the database itself (src/live/hub.ts).
 */

export async function applyStatus(
  deps: Deps,
  channelId: string,
  update: {
    externalId: string;
    status: Exclude<MessageStatus, "RECEIVED">;
    error?: Prisma.InputJsonValue | null;
    /** What Meta bills the message for: kept whatever the status (a late `delivered` carries it too). */
    pricing?: { category: string; billable: boolean } | null;
  },
): Promise<boolean> {
  if (update.pricing) {
    await deps.db.message.updateMany({
      where: { channelId, externalId: update.externalId, direction: "OUTBOUND" },
      data: { pricing: update.pricing },
    });
  }
  const { status } = update;
  const failed = status === "FAILED";
  const from: MessageStatus[] = failed
    ? [...FORWARD]
    : FORWARD.slice(0, (FORWARD as readonly string[]).indexOf(status));
  const { count } = await deps.db.message.updateMany({
    where: { channelId, externalId: update.externalId, direction: "OUTBOUND", status: { in: from } },
    data: { status, ...(failed ? { error: update.error ?? undefined } : {}) },
  });
  return count > 0;
}
