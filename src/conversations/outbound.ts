/**
 * Outgoing messages (AI replies, human replies, reminders): stored, announced with `message.sent`
 * and queued for the channel in one transaction; then sent by the message-send job. WHATSAPP goes
 * through the Graph API with the channel's sealed access token (SENT with the wamid, or FAILED with
 * the error, retried only when WhatsApp says the error is retryable); an API channel has nothing to
 * send to, so its messages are SENT at once (the business app reads them through events,
 * subscriptions and the read API).
 */
import type { Deps } from "../context.ts";
import type { Tx } from "../db/client.ts";
import { sendText } from "../channels/whatsapp/graph_api.ts";
import { Prisma } from "../generated/prisma/client.ts";

export const MESSAGE_SEND_QUEUE = "message-send";
/** Sends of one message, the first included, when each failure is retryable. */
export const SEND_ATTEMPTS = 3;
/** Wait before attempt n+1: 1 s, 4 s (as event deliveries). */
const retryDelayMs = (attempt: number) => 1000 * 4 ** (attempt - 1);

export interface SendJob {
  messageId: string;
  attempt: number;
}

export interface Outgoing {
  workspaceId: string;
  agentId: string;
  conversationId: string;
  channelId: string;
  channelType: string;
  sender: "AI" | "HUMAN";
  senderUserId?: string | null;
  content: string;
  inputTokens?: number | null;
  outputTokens?: number | null;
}

/**
 * Inside `tx`: stores each message (PENDING, or SENT for an API channel), publishes `message.sent`
 * `{ message, sender }` for it and enqueues its send. Returns the message ids in order.
 */
export async function storeOutgoing(
  deps: Pick<Deps, "events" | "jobs">,
  tx: Tx,
  now: Date,
  messages: Outgoing[],
): Promise<string[]> {
  const ids: string[] = [];
  const jobs: SendJob[] = [];
  for (const [i, m] of messages.entries()) {
    // One millisecond apart so the parts of one reply keep their order in the oldest-first read.
    const createdAt = new Date(now.getTime() + i);
    const row = await tx.message.create({
      data: {
        conversationId: m.conversationId,
        channelId: m.channelId,
        direction: "OUTBOUND",
        senderKind: m.sender,
        senderUserId: m.senderUserId ?? null,
        type: "TEXT",
        content: m.content,
        status: m.channelType === "WHATSAPP" ? "PENDING" : "SENT",
        inputTokens: m.inputTokens ?? null,
        outputTokens: m.outputTokens ?? null,
        createdAt,
        updatedAt: createdAt,
      },
      select: { id: true, type: true, content: true, createdAt: true },
    });
    ids.push(row.id);
    if (m.channelType === "WHATSAPP") jobs.push({ messageId: row.id, attempt: 1 });
    await deps.events.publish(tx, {
      type: "message.sent",
      workspaceId: m.workspaceId,
      agentId: m.agentId,
      conversationId: m.conversationId,
      data: {
        message: { id: row.id, type: row.type, content: row.content, createdAt: row.createdAt.toISOString() },
        sender: m.sender,
      },
    });
  }
  await deps.jobs.enqueue(tx, MESSAGE_SEND_QUEUE, jobs);
  return ids;
}

/**
 * After the transaction of storeOutgoing committed: a send worker of this process takes the new
 * sends now (the queue has no NOTIFY, which would wake every send worker of every process).
 */
export function sendsCommitted(deps: Pick<Deps, "jobs">, channelType: string): void {
  if (channelType === "WHATSAPP") deps.jobs.wake(MESSAGE_SEND_QUEUE);
}

/** The channel secrets as stored (sealed JSON, written by the channels API). */
interface ChannelSecrets {
  phoneNumberId?: string;
  accessToken?: string;
}

/**
 * One send attempt of one message (the message-send job). A message no longer PENDING (sent, or
 * failed for good) is left alone, so a job run twice sends once as far as we can tell.
 */
export async function sendMessage(
  deps: Pick<Deps, "db" | "secrets" | "outbound" | "config" | "logger"> & {
    jobs: { enqueueLater(queue: string, items: Array<{ data: object; afterMs: number }>): Promise<void> };
  },
  job: SendJob,
): Promise<void> {
  // One statement (Prisma would read each relation apart): the message, its channel and recipient.
  const [message] = await deps.db.$queryRaw<
    Array<{
      id: string;
      status: string;
      content: string;
      channel: { type: string; phoneNumberId: string | null; credentials: string | null };
      to: string;
    }>
  >`
    SELECT m.id, m.status::text AS status, m.content,
           json_build_object('type', ch.type, 'phoneNumberId', ch."phoneNumberId", 'credentials', ch.credentials)
             AS channel,
           ct."externalId" AS "to"
      FROM "Message" m
      JOIN "Channel" ch ON ch.id = m."channelId"
      JOIN "Conversation" c ON c.id = m."conversationId"
      JOIN "Contact" ct ON ct.id = c."contactId"
     WHERE m.id = ${job.messageId}`;
  if (!message) return;
  // Attempt 1 needs PENDING; a retry continues a FAILED one it was scheduled for.
  if (!(message.status === "PENDING" || (job.attempt > 1 && message.status === "FAILED"))) return;
  const { channel } = message;
  if (channel.type !== "WHATSAPP") {
    await deps.db.message.update({
      where: { id: message.id },
      data: { status: "SENT", error: Prisma.DbNull },
    });
    return;
  }
  let secrets: ChannelSecrets = {};
  try {
    secrets = channel.credentials ? JSON.parse(deps.secrets.open(channel.credentials)) : {};
  } catch {
    deps.logger.error("channel credentials cannot be opened", { messageId: message.id });
  }
  const phoneNumberId = channel.phoneNumberId ?? secrets.phoneNumberId;
  const result = phoneNumberId && secrets.accessToken
    ? await sendText((url, init) => deps.outbound.request(url, init), {
      graphUrl: deps.config.whatsappGraphUrl,
      phoneNumberId,
      accessToken: secrets.accessToken,
      to: message.to,
      body: message.content,
    })
    : {
      ok: false as const,
      error: {
        status: 0,
        code: null,
        message: "the channel has no phone number id or access token",
        retryable: false,
      },
    };
  if (result.ok) {
    await deps.db.message.update({
      where: { id: message.id },
      // A retry that got through clears the earlier attempt's error.
      data: { status: "SENT", externalId: result.waMessageId, error: Prisma.DbNull },
    });
    return;
  }
  const retry = result.error.retryable && job.attempt < SEND_ATTEMPTS;
  await deps.db.message.update({
    where: { id: message.id },
    data: { status: "FAILED", error: { ...result.error, attempt: job.attempt, willRetry: retry } },
  });
  deps.logger.warn("message send failed", {
    messageId: message.id,
    attempt: job.attempt,
    status: result.error.status,
    code: result.error.code,
    retry,
  });
  if (retry) {
    await deps.jobs.enqueueLater(MESSAGE_SEND_QUEUE, [{
      data: { messageId: message.id, attempt: job.attempt + 1 } satisfies SendJob,
      afterMs: retryDelayMs(job.attempt),
    }]);
  }
}
