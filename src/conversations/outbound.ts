/**
 * Outgoing messages (AI replies, human replies, reminders, templates): stored, announced with `message.sent`
 * and queued for the channel in one transaction; then sent by the message-send job, or (a reply or
 * reminder of a worker) by the writer itself right after its commit: such a message is stored
 * claimed by its writer's process. If that process dies before it settles the message, the claim is
 * freed within seconds (recovery.ts); one a living sender left unsettled (its attempt threw) gets a
 * send job from the stale-send sweep (a pg-boss schedule, every minute) once the claim is older
 * than SEND_CLAIM_STALE_MS. Each attempt first claims the message, so two senders never both send
 * it. WHATSAPP goes through the Graph API with the channel's sealed access token (SENT with the
 * wamid, or FAILED with the error, retried only when WhatsApp says the error is retryable); an API
 * channel has nothing to send to, so its messages are SENT at once (the business app reads them
 * through events, subscriptions and the read API). Every change of an outgoing message's status or
 * error, by whichever statement here or elsewhere, is announced to the live feeds by the database
 * (`message.updated`, src/live/hub.ts).
 */
import type { Deps } from "../context.ts";
import type { SqlTx } from "../db/client.ts";
import {
  type OutboundRequest,
  PACING_CODES,
  REENGAGEMENT_CODE,
  sendTemplate,
  sendText,
  type TemplateObject,
} from "../channels/whatsapp/graph_api.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { newId } from "../shared/ids.ts";
import { dbAppError } from "../shared/db_errors.ts";
import {
  claimSend,
  closeWindow,
  insertOutgoing,
  insertOutgoingGuarded,
  markFailed,
  markPaced,
  markSent,
  markSentWithoutId,
  type OutgoingColumns,
  staleSends,
  startSend,
} from "./sql.ts";
import { windowOf } from "./views.ts";

export const MESSAGE_SEND_QUEUE = "message-send";
/** Sends of one message, the first included, when each failure is retryable. */
export const SEND_ATTEMPTS = 3;
/** Wait before attempt n+1: 1 s, 4 s (as event deliveries). */
const retryDelayMs = (attempt: number) => 1000 * 4 ** (attempt - 1);
/** Wait before attempt n+1 after a pacing refusal: about 6 s, then 30 s. */
const pacingDelayMs = (attempt: number) => attempt === 1 ? 6_000 : 30_000;
/**
 * A claim older than this is a crashed sender's: another may take the message over. Far above the
 * longest attempt (the Graph call times out after 10 s).
 */
export const SEND_CLAIM_STALE_MS = 60_000;
/** Stale claims handed to send jobs by one sweep, at most (the next sweep takes the rest). */
const SWEEP_BATCH = 1000;

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
  /** A text, or a TEMPLATE message's body with its values filled in. */
  content: string;
  /**
   * A WhatsApp template: the message is TEMPLATE, `template: { name, language }`, and `send` (Meta's
   * `template` object, kept as the message's payload) is what every attempt sends.
   */
  template?: { name: string; language: string; send: TemplateObject };
  inputTokens?: number | null;
  outputTokens?: number | null;
}

/** A stored outgoing message as its sender needs it (a template's send payload beside its text). */
export interface StoredOutgoing {
  id: string;
  content: string;
  /** A TEMPLATE message's Meta `template` object (its payload); absent or null: a text. */
  send?: TemplateObject | null;
}

/**
 * Inside `tx`: stores the messages in one statement (PENDING, or SENT for an API channel; one
 * millisecond apart, so the parts of one reply keep their order in the oldest-first read),
 * publishes `message.sent` `{ message, sender }` for each as one batch and enqueues their sends.
 * Returns the messages in order.
 * `direct`: the caller sends them itself once committed (sendCommitted): they are stored claimed
 * by it and get no job (sweepStaleSends covers a writer that dies first).
 * `guard`: the caller's CTEs, run in the same statement, the last named `guard`: the messages are
 * stored only when `guard` returns a row, which comes back as `guarded` (null: nothing stored).
 */
export async function storeOutgoing<G = never>(
  deps: Pick<Deps, "events" | "jobs" | "instance">,
  tx: SqlTx,
  now: Date,
  messages: Outgoing[],
  options: { direct?: boolean; guard?: Prisma.Sql } = {},
): Promise<{ stored: StoredOutgoing[]; guarded: G | null }> {
  const rows = messages.map((m, i) => ({
    ...m,
    id: newId(),
    createdAt: new Date(now.getTime() + i),
    status: m.channelType === "WHATSAPP" ? "PENDING" : "SENT",
    claimed: options.direct && m.channelType === "WHATSAPP" ? now : null,
  }));
  const col = <T>(pick: (r: (typeof rows)[number]) => T) => rows.map(pick);
  const columns: OutgoingColumns = {
    ids: col((r) => r.id),
    conversationIds: col((r) => r.conversationId),
    channelIds: col((r) => r.channelId),
    senders: col((r) => r.sender),
    senderUserIds: col((r) => r.senderUserId ?? null),
    types: col((r) => (r.template ? "TEMPLATE" : "TEXT")),
    contents: col((r) => r.content),
    templates: col((r) =>
      r.template ? JSON.stringify({ name: r.template.name, language: r.template.language }) : null
    ),
    payloads: col((r) => (r.template ? JSON.stringify(r.template.send) : null)),
    statuses: col((r) => r.status),
    claimedAt: col((r) => r.claimed?.toISOString() ?? null),
    claimedBy: deps.instance.id,
    inputTokens: col((r) => r.inputTokens ?? null),
    outputTokens: col((r) => r.outputTokens ?? null),
    createdAt: col((r) => r.createdAt.toISOString()),
  };
  let guarded: G | null = null;
  if (options.guard) {
    const [row] = await insertOutgoingGuarded.rows(tx, { guard: options.guard, messages: columns });
    // The caller's guard decides the shape of its row.
    guarded = (row?.guarded ?? null) as G | null;
    if (guarded === null) return { stored: [], guarded };
  } else if (rows.length) {
    await insertOutgoing.run(tx, columns);
  }
  if (!rows.length) return { stored: [], guarded };
  // The parts' events as one batch: one statement for all of them (src/shared/events.ts).
  await deps.events.publishAll(
    tx,
    rows.map((r) => ({
      type: "message.sent" as const,
      workspaceId: r.workspaceId,
      agentId: r.agentId,
      conversationId: r.conversationId,
      data: {
        message: {
          id: r.id,
          type: r.template ? "TEMPLATE" : "TEXT",
          content: r.content,
          createdAt: r.createdAt.toISOString(),
        },
        sender: r.sender,
      },
    })),
  );
  const jobs: SendJob[] = rows.filter((r) => r.channelType === "WHATSAPP").map((r) => ({
    messageId: r.id,
    attempt: 1,
  }));
  if (!options.direct) await deps.jobs.send(tx, MESSAGE_SEND_QUEUE, jobs.map((data) => ({ data })));
  return {
    stored: rows.map((r) => ({ id: r.id, content: r.content, send: r.template?.send ?? null })),
    guarded,
  };
}

/**
 * The stale-send sweep, for outgoing messages still PENDING under a claim older than
 * SEND_CLAIM_STALE_MS (their sender died before settling them). One whose channel call never began
 * gets a send job, which takes the claim over (sendMessage). One whose call began may have reached
 * the customer: it becomes UNCONFIRMED and is not sent again (at most once). Run every minute on a
 * pg-boss schedule (one run per slot across processes); a second run at once only adds jobs that
 * find the message claimed or sent. Returns how many it queued.
 */
export async function sweepStaleSends(deps: Pick<Deps, "db" | "jobs">, now: Date): Promise<number> {
  const staleBefore = new Date(now.getTime() - SEND_CLAIM_STALE_MS);
  // The partial index "Message_pending_send_claim_idx" holds only claimed PENDING messages. A call
  // is judged by when it began (the parts of a reply are sent one after the other).
  const stale = await staleSends.rows(deps.db, { staleBefore, now, limit: SWEEP_BATCH });
  await deps.jobs.send(
    deps.db,
    MESSAGE_SEND_QUEUE,
    stale.map(({ id }) => ({ data: { messageId: id, attempt: 1 } satisfies SendJob })),
  );
  return stale.length;
}

/**
 * After the transaction of storeOutgoing(..., { direct: true }) committed: the first attempt of
 * each message (claimed by that transaction), in order, here and now: one hop and one claim less
 * than a job. A failure is the send's own (FAILED, retried by a job when retryable); an exception
 * leaves the message claimed, to the stale-send sweep once the claim is stale.
 */
export async function sendCommitted(
  deps: SendDeps,
  target: { channelId: string; channelType: string; to: string },
  messages: StoredOutgoing[],
): Promise<void> {
  const last = await sendCommittedButLast(deps, target, messages);
  if (!last) return;
  try {
    await recordOutcome(deps, last);
  } catch (error) {
    directSendFailed(deps, target, error);
  }
}

/**
 * sendCommitted, except that the last message's outcome is returned unwritten (null: none), for
 * the caller to write in a statement it sends anyway (the reply's claim release). Until written
 * the message stays claimed: if that statement never runs, the stale-send sweep sends it (again,
 * as after a crash) once the claim is stale. The parts before the last are written as each is sent,
 * so a crash still duplicates at most the one in flight.
 */
export async function sendCommittedButLast(
  deps: SendDeps,
  target: { channelId: string; channelType: string; to: string },
  messages: StoredOutgoing[],
): Promise<SendOutcome | null> {
  if (target.channelType !== "WHATSAPP" || !messages.length) return null;
  try {
    // The channel as this process knows it now (cache, forgotten on change), not as it was before the model ran.
    const channel = await deps.channels.whatsapp(target.channelId);
    if (!channel) return null;
    let outcome: SendOutcome | null = null;
    for (const m of messages) {
      if (outcome) await recordOutcome(deps, outcome);
      outcome = null;
      // Still this writer's (a send job takes over a claim only when stale and never a call
      // begun): the call begins now, so after a crash it is not sent again.
      const started = await startSend.run(deps.db, { now: deps.clock.now(), id: m.id });
      if (started !== 1) continue;
      outcome = await attempt(deps, { ...m, to: target.to }, channel, { messageId: m.id, attempt: 1 });
    }
    return outcome;
  } catch (error) {
    directSendFailed(deps, target, error);
    return null;
  }
}

function directSendFailed(deps: Pick<Deps, "logger">, target: { channelId: string }, error: unknown): void {
  deps.logger.error("direct send failed; the stale-send sweep will send", {
    channelId: target.channelId,
    error: String(error),
  });
}

/** What one send attempt's outcome writes (one UPDATE of the message), and does once written. */
export interface SendOutcome {
  /** SENT with the wamid, or FAILED with the error; the claim cleared either way. */
  update: Prisma.Sql;
  /**
   * The update when `update` failed on the wamid's uniqueness (another message took it
   * concurrently): SENT without it.
   */
  fallback: Prisma.Sql;
  /** After the update: a failure's warning and its retry job. */
  after(): Promise<void>;
}

/** Writes an outcome in a statement of its own. */
export async function recordOutcome(deps: Pick<Deps, "db">, outcome: SendOutcome): Promise<void> {
  try {
    await deps.db.$executeRaw(outcome.update);
  } catch (error) {
    if (dbAppError(error)?.code !== "DUPLICATE") throw error;
    await deps.db.$executeRaw(outcome.fallback);
  }
  await outcome.after();
}

type SendDeps = Pick<
  Deps,
  "db" | "secrets" | "outbound" | "config" | "logger" | "clock" | "jobs" | "channels" | "instance"
>;

/** The channel secrets as stored (sealed JSON, written by the channels API). */
interface ChannelSecrets {
  phoneNumberId?: string;
  accessToken?: string;
}

/**
 * One send attempt of one message (the message-send job, or its writer right after the commit).
 * The attempt claims the message first (one conditional UPDATE that also reads what the send
 * needs): a message no longer PENDING (sent, or failed for good) or claimed by another sender is
 * left alone, so two senders, or a job run twice, send once. A claim older than
 * SEND_CLAIM_STALE_MS (its sender crashed) is taken over; a job that finds a fresh claim comes
 * back when it would be stale, in case that sender dies.
 */
export async function sendMessage(deps: SendDeps, job: SendJob): Promise<void> {
  const now = deps.clock.now();
  const stale = new Date(now.getTime() - SEND_CLAIM_STALE_MS);
  // Attempt 1 needs PENDING; a retry continues a FAILED one it was scheduled for.
  const [message] = await claimSend.rows(deps.db, {
    now,
    claimedBy: deps.instance.id,
    messageId: job.messageId,
    retry: job.attempt > 1,
    stale,
  });
  if (!message) return await unclaimed(deps, job, now);
  const { channel } = message;
  if (channel.type !== "WHATSAPP") {
    await deps.db.message.update({
      where: { id: message.id },
      data: { status: "SENT", error: Prisma.DbNull, sendClaimedAt: null, sendStartedAt: null },
    });
    return;
  }
  // Nothing free-form goes to Meta outside the customer's window (an AI reply, a reminder, a
  // person's reply whose window closed since it was accepted): FAILED with WINDOW_CLOSED. A
  // template is what may go out then.
  const send = message.type === "TEMPLATE" ? message.payload as unknown as TemplateObject : null;
  if (!send && !windowOf({ ...message, channel }, now).open) {
    const error = {
      status: 0,
      code: "WINDOW_CLOSED",
      message: "outside the customer's 24-hour window: not sent",
      retryable: false,
      attempt: job.attempt,
      willRetry: false,
    };
    const failed = markFailed.sql({ id: message.id, now, error: JSON.stringify(error) });
    return await recordOutcome(deps, { update: failed, fallback: failed, after: () => Promise.resolve() });
  }
  let secrets: ChannelSecrets = {};
  try {
    secrets = channel.credentials ? JSON.parse(deps.secrets.open(channel.credentials)) : {};
  } catch {
    deps.logger.error("channel credentials cannot be opened", { messageId: message.id });
  }
  await recordOutcome(
    deps,
    await attempt(deps, { ...message, send }, { phoneNumberId: channel.phoneNumberId, secrets }, job),
  );
}

/** The Graph call of one claimed message and its outcome (SENT, or FAILED and maybe a retry job), to write. */
async function attempt(
  deps: SendDeps,
  message: StoredOutgoing & { to: string },
  channel: { phoneNumberId: string | null; secrets: ChannelSecrets },
  job: SendJob,
): Promise<SendOutcome> {
  const { secrets } = channel;
  const phoneNumberId = channel.phoneNumberId ?? secrets.phoneNumberId;
  const request: OutboundRequest = (url, init) => deps.outbound.request(url, init);
  const result = phoneNumberId && secrets.accessToken
    ? message.send
      ? await sendTemplate(request, {
        graphUrl: deps.config.whatsappGraphUrl,
        phoneNumberId,
        accessToken: secrets.accessToken,
        to: message.to,
        template: message.send,
      })
      : await sendText(request, {
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
  const now = deps.clock.now();
  if (result.ok) {
    return {
      // A retry that got through clears the earlier attempt's error. A wamid another message of
      // the channel already holds (the channel repeated one) is not kept: the send still happened.
      update: markSent.sql({ id: message.id, now, wamid: result.waMessageId }),
      fallback: markSentWithoutId.sql({ id: message.id, now }),
      after: () => Promise.resolve(),
    };
  }
  const retry = result.error.retryable && job.attempt < SEND_ATTEMPTS;
  const error = { ...result.error, attempt: job.attempt, willRetry: retry };
  const paced = retry && result.error.code !== null && PACING_CODES.has(result.error.code);
  // Meta's 131047: the customer's window has closed (it opens again when they write). Closed before
  // the message is marked FAILED, so the live feeds reading the conversation for that change see it.
  if (result.error.code === REENGAGEMENT_CODE) {
    await closeWindow.run(deps.db, { now, messageId: message.id, channelId: null, externalId: null });
  }
  const update = (paced ? markPaced : markFailed).sql({ id: message.id, now, error: JSON.stringify(error) });
  return {
    update,
    fallback: update,
    async after() {
      deps.logger.warn("message send failed", {
        messageId: message.id,
        attempt: job.attempt,
        status: result.error.status,
        code: result.error.code,
        retry,
      });
      if (retry) {
        await deps.jobs.send(deps.db, MESSAGE_SEND_QUEUE, [{
          data: { messageId: message.id, attempt: job.attempt + 1 } satisfies SendJob,
          startAfterMs: (paced ? pacingDelayMs : retryDelayMs)(job.attempt),
        }]);
      }
    },
  };
}

/**
 * The claim found nothing to do: sent, failed for good, gone, or another sender holds a fresh claim.
 * Only the last needs this job again: when that claim would be stale, in case its sender crashed.
 */
async function unclaimed(deps: SendDeps, job: SendJob, now: Date): Promise<void> {
  const row = await deps.db.message.findUnique({
    where: { id: job.messageId },
    select: { status: true, sendClaimedAt: true },
  });
  if (!row?.sendClaimedAt) return;
  if (!(row.status === "PENDING" || (job.attempt > 1 && row.status === "FAILED"))) return;
  const afterMs = row.sendClaimedAt.getTime() + SEND_CLAIM_STALE_MS - now.getTime() + 1000;
  await deps.jobs.send(deps.db, MESSAGE_SEND_QUEUE, [{ data: job, startAfterMs: Math.max(1000, afterMs) }]);
}
