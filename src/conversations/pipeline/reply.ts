/**
 * The reply job (docs/behaviour.md "Replies"): when a conversation's grouping window has closed,
 * every customer message not yet handled is answered by one model call, its intent and transfer
 * tags are carried out, and the shaped reply is stored and queued for the
 * channel. One reply at a time per conversation: the job claims the conversation (`replyClaimedAt`)
 * in an UPDATE that only one process wins; the messages a reply answers are the ones read by the
 * claim's own statement (those committed before it), and they are marked answered when it is
 * stored, so a message that arrives meanwhile is answered by the next reply (its own window job,
 * or the follow-up enqueued on release). A window with media still being fetched or understood
 * (src/media/job.ts) is not claimed until that work ends (its job queues the reply) or
 * MEDIA_WAIT_MS have passed since the window closed: a voice note is answered from its transcript.
 */
import type { Deps } from "../../context.ts";
import { fireIntent } from "../../intents/fire.ts";
import { replyRequest } from "./request.ts";
import { parseIntentTags, replaceTags, SKIPPING_INTENT, transferSummary } from "../intent_tags.ts";
import { callIntentWebhook } from "../intent_call.ts";
import { openUrlSecrets } from "../../shared/url_secrets.ts";
import { shapeReply } from "../shaping.ts";
import { mayReplyToday, utcDay } from "../timing.ts";
import { recordOutcome, sendCommittedButLast, type SendOutcome, storeOutgoing } from "../outbound.ts";
import { transferToHuman } from "../transitions.ts";
import { completeWithRetries } from "../../llm/retry.ts";
import { scheduleTimers } from "../timers.ts";
import type { RowOf } from "../../db/statement.ts";
import { sqlTransaction } from "../../db/transaction.ts";
import {
  claimConversation,
  type GuardedTimes,
  type PendingMessage,
  releaseClaim,
  type ReplyAgent,
  replyGuard,
  type ReplyIntent,
  unansweredConversations,
} from "../sql.ts";
import { MEDIA_WAIT_MARGIN_MS, REPLY_QUEUE, type ReplyJob } from "./window.ts";
import { Buffer } from "node:buffer";

/** The summary of a transfer when the model is not configured, fails, times out or answers nothing. */
export const MODEL_UNAVAILABLE = "language model unavailable";

/**
 * A claim older than this is a dead process' (by default the longest reply: the model call plus a
 * few intent calls, and a minute): another job may take the conversation over.
 */
function claimStaleMs(deps: Pick<Deps, "config">): number {
  return deps.config.replyClaimTtlMs;
}

/**
 * The job found the conversation claimed by another reply: it comes back when that claim would be
 * stale. If the reply ends first, its release answers what it left (the follow-up) and this job
 * finds nothing to do; if its process died, this job takes the conversation over. Retrying at once
 * would spend every retry long before a dead claim goes stale.
 */
async function retryWhenStale(deps: Deps, id: string, claimedAt: Date): Promise<void> {
  const afterMs = claimedAt.getTime() + claimStaleMs(deps) - deps.clock.now().getTime();
  await deps.jobs.send(deps.db, REPLY_QUEUE, [{
    data: { conversationId: id } satisfies ReplyJob,
    startAfterMs: Math.max(0, afterMs) + STALE_MARGIN_MS,
  }]);
}

/** After a claim's stale time, so that the job's claim finds it stale (clocks are compared in ms). */
const STALE_MARGIN_MS = 100;

/** Runs one reply job (see the module comment). */
export async function runReply(deps: Deps, job: ReplyJob): Promise<void> {
  const id = job.conversationId;
  const claimedAt = deps.clock.now();
  const row = await claimAndLoad(deps, id, claimedAt);
  if (!row) return; // gone
  if (!row.claimed) {
    const due = (at: Date | null) => at !== null && at <= claimedAt;
    const stale = (at: Date | null) => at === null || at.getTime() < claimedAt.getTime() - claimStaleMs(deps);
    // The row as it was before the claim. Claimed by a live reply: answered once it is done
    // (retried, or the follow-up below). Not due: a newer message moved the window (its job answers).
    if (!due(row.dueAt)) return;
    if (!stale(row.heldSince)) return await retryWhenStale(deps, id, row.heldSince!);
    if (row.mediaPending) {
      // The media job queues the reply when it ends; this one comes back when the wait runs out.
      const afterMs = row.dueAt!.getTime() + deps.config.media.waitMs - claimedAt.getTime();
      await deps.jobs.send(deps.db, REPLY_QUEUE, [{
        data: { conversationId: id } satisfies ReplyJob,
        startAfterMs: Math.max(0, afterMs) + MEDIA_WAIT_MARGIN_MS,
      }]);
      return;
    }
    // Due and free before, yet not claimed: what changed since (a claim, or a message moving the
    // window) committed after the statement began, so only a read of its own sees it (rare).
    const current = await deps.db.conversation.findUnique({
      where: { id },
      select: { replyDueAt: true, replyClaimedAt: true },
    });
    if (current && due(current.replyDueAt) && current.replyClaimedAt) {
      return await retryWhenStale(deps, id, current.replyClaimedAt);
    }
    return;
  }
  let done: Done;
  try {
    // A won claim read them (its CASEs).
    done = await reply(deps, row as Loaded, claimedAt);
  } catch (error) {
    // pg-boss retries the job; a crashed process' claim goes stale instead.
    await release(deps, id, claimedAt);
    throw error;
  }
  // Releases the claim in one statement, which also writes what the reply left to it (the last
  // send's outcome: the parts are all sent, a later reply's cannot overtake them; the messages a
  // silent reply handled) and tells whether a message arrived during the reply (its job found the
  // claim): answered next, by a follow-up job. That job is a shortcut, not the guarantee: the
  // message's own job comes back when the claim would be stale, and the reply sweep finds the rest.
  const { sent, answered } = done;
  const now = deps.clock.now();
  // The statement's reads do not see its own writes: the messages it marks answered are left out.
  let next: { due: Date | null; pending: boolean } | undefined;
  try {
    [next] = await releaseClaim.rows(deps.db, {
      id,
      claimedAt,
      now,
      answered,
      sent: sent ? sent.update : null,
    });
    await sent?.after();
    // Images kept for this reply (src/media/job.ts) are not kept beyond it.
    if (done.images.length) {
      await deps.db.messageMediaBytes.deleteMany({ where: { messageId: { in: done.images } } });
    }
  } catch (error) {
    // The writes apart, the claim first: the conversation stays answerable whatever failed here.
    deps.logger.error("reply release failed; releasing step by step", { conversationId: id, error });
    await release(deps, id, claimedAt);
    if (answered.length) {
      await deps.db.message.updateMany({ where: { id: { in: answered } }, data: { answeredAt: now } });
    }
    if (sent) await recordOutcome(deps, sent);
    next = { due: now, pending: true };
  }
  if (next?.pending && next.due) {
    await deps.jobs.send(deps.db, REPLY_QUEUE, [{
      data: { conversationId: id } satisfies ReplyJob,
      startAfterMs: next.due.getTime() - deps.clock.now().getTime(),
    }]);
  }
}

/** Clears the claim, if still this reply's. */
async function release(deps: Deps, id: string, claimedAt: Date): Promise<void> {
  await deps.db.conversation.updateMany({
    where: { id, replyClaimedAt: claimedAt },
    data: { replyClaimedAt: null },
  });
}

/** Conversations handed to reply jobs by one sweep, at most (the next sweep takes the rest). */
const SWEEP_BATCH = 1000;

/**
 * How long past its due time an unclaimed conversation is left to its own reply job before the
 * sweep queues another: the sweep's period. A job still waiting its turn (a backlog under load)
 * is not doubled, which would only deepen the backlog.
 */
export const SWEEP_GRACE_MS = 60_000;

/**
 * The reply sweep (a pg-boss schedule, every minute, and once when the workers start): every
 * conversation not CLOSED with a customer message no reply has handled gets a reply job when its
 * own jobs have evidently missed it: claimed, for when the claim would be stale (a process that
 * died with the claim); unclaimed, once its reply is SWEEP_GRACE_MS overdue (a job that spent its
 * retries or died with a process before claiming). A reply job acts once however many are queued
 * (its claim), so two sweeps at once, or in two processes, are harmless. Returns how many it queued.
 */
export async function sweepUnanswered(
  deps: Pick<Deps, "db" | "jobs" | "config">,
  now: Date,
): Promise<number> {
  const ttl = claimStaleMs(deps);
  const overdue = new Date(now.getTime() - SWEEP_GRACE_MS);
  // The partial index "Message_unanswered_idx" holds only customer messages not handled yet.
  const rows = await unansweredConversations.rows(deps.db, { ttlMs: ttl, overdue, limit: SWEEP_BATCH });
  await deps.jobs.send(
    deps.db,
    REPLY_QUEUE,
    rows.map((r) => ({
      data: { conversationId: r.id } satisfies ReplyJob,
      startAfterMs: Math.max(0, r.at.getTime() - now.getTime()) + STALE_MARGIN_MS,
    })),
  );
  return rows.length;
}

interface Plan {
  parts: string[];
  transfer: { reason: "TAG" | "ESCALATION"; summary: string } | null;
  usage: { inputTokens: number; outputTokens: number } | null;
}

/** Messages of history read for the prompt (prompt.ts bounds what it uses of them). */
const HISTORY_MESSAGES = 60;

/**
 * The claim's outcome with the conversation as it was before it (null: no such conversation):
 * the conversation, its channel, contact and agent (read with the claim: Prisma would read each
 * relation apart); `mediaPending` (read only when the claim failed): media of the window are still
 * being understood.
 */
type ClaimRow = RowOf<typeof claimConversation.columns>;

/**
 * What a reply needs: a won claim's row, which also holds the agent's intents, the customer
 * messages not yet handled, the history before them (the latest messages, oldest first; customer
 * messages not yet handled are not history), and the agent's AI messages to this contact in the
 * claim's UTC day (null: the agent has no daily limit).
 */
type Loaded = ClaimRow & { [K in "intents" | "pending" | "history"]: NonNullable<ClaimRow[K]> };

/**
 * Claims the conversation and reads what its reply needs, in one statement. One statement is one
 * snapshot, taken when it begins (READ COMMITTED): the messages read are exactly those committed
 * before the claim. A message committed later is not among them and stays unanswered (the reply
 * marks answered only the ids it read) for the next reply: its transaction moves `replyDueAt` in an
 * UPDATE of this conversation's row, so either it waited for this claim's row lock (the claim
 * committed first), or the claim waited for it and re-checked the newest row (as an UPDATE does):
 * the window moved, so the claim fails (or, the window already closed again, it wins without that
 * message, which the release then finds). Only on a won claim are the messages read (a CASE runs
 * its subqueries only when taken): the jobs of earlier messages of a window lose it.
 */
async function claimAndLoad(deps: Deps, id: string, claimedAt: Date): Promise<ClaimRow | null> {
  const staleBefore = new Date(claimedAt.getTime() - claimStaleMs(deps));
  // A window whose media work is not done is claimed once the wait for it has run out.
  const mediaWaitedSince = new Date(claimedAt.getTime() - deps.config.media.waitMs);
  // The daily limit: the agent's AI messages to this contact in the current UTC day, against maxDailyMessages.
  const day = utcDay(claimedAt);
  const [row] = await claimConversation.rows(deps.db, {
    id,
    claimedAt,
    claimedBy: deps.instance.id,
    staleBefore,
    mediaWaitedSince,
    dayStart: day.start,
    dayEnd: day.end,
    historyMessages: HISTORY_MESSAGES,
  });
  return row ?? null;
}

/** What a reply leaves to the claim's release to write. */
interface Done {
  /** The outcome of its last send. */
  sent: SendOutcome | null;
  /** The messages it handled without storing anything (a silent reply). */
  answered: string[];
  /** Its IMAGE messages, whose kept bytes go once it is released. */
  images: string[];
}

/** Answers the conversation claimed at `claimedAt`. */
async function reply(deps: Deps, conv: Loaded, claimedAt: Date): Promise<Done> {
  const { id, pending } = conv;
  if (!pending.length) return { sent: null, answered: [], images: [] };
  const ids = pending.map((m) => m.id);
  const images = pending.filter((m) => m.type === "IMAGE" && m.media).map((m) => m.id);
  const { agent } = conv;
  const log = { conversationId: id, agentId: agent.id };

  let plan: Plan = { parts: [], transfer: null, usage: null };
  // PAUSED agents and HUMAN or CLOSED conversations keep the messages in the history, silently.
  if (conv.status === "OPEN" && agent.status === "ACTIVE") {
    if (agent.maxDailyMessages !== null && !mayReplyToday(conv.sentToday ?? 0, agent.maxDailyMessages)) {
      deps.logger.info("daily message limit reached; no reply", log);
    } else {
      plan = await generate(deps, conv, pending, await shownImages(deps, conv, pending));
    }
  }

  // Nothing to store: the messages are marked handled with the claim's release.
  if (!plan.parts.length && !plan.transfer) return { sent: null, answered: ids, images };
  const sent = await sqlTransaction(deps.db, async (tx): Promise<Array<{ id: string; content: string }>> => {
    const now = deps.clock.now();
    // One statement: the messages marked answered, the conversation's times moved, and the reply
    // stored, unless the conversation was taken over or closed while the model was thinking (a
    // person has it now, nothing is sent), or this reply's claim was taken over (this process was
    // taken for dead: the reply that took it answers instead, recovery.ts).
    const { stored, guarded: open } = await storeOutgoing<GuardedTimes>(
      deps,
      tx,
      now,
      plan.parts.map((content, i) => ({
        workspaceId: conv.workspaceId,
        agentId: conv.agentId,
        conversationId: id,
        channelId: conv.channelId,
        channelType: conv.channelType,
        sender: "AI" as const,
        content,
        // The call's usage on the first part; the others cost nothing more.
        inputTokens: plan.usage ? (i === 0 ? plan.usage.inputTokens : 0) : null,
        outputTokens: plan.usage ? (i === 0 ? plan.usage.outputTokens : 0) : null,
      })),
      {
        direct: true,
        guard: replyGuard({ now, ids, id, claimedAt, times: plan.parts.length > 0 }),
      },
    );
    if (!open) return [];
    if (plan.transfer) await transferToHuman(deps, tx, conv, plan.transfer);
    // The times as the UPDATE above left them (the row is locked): the timers need no read of their own.
    const { autoCloseMinutes, enabledReminder } = conv.agent;
    const at = (iso: string | null) => iso === null ? null : new Date(iso);
    await scheduleTimers(deps, tx, id, {
      lastMessageAt: at(open.lastMessageAt),
      lastContactMessageAt: at(open.lastContactMessageAt),
      lastAgentMessageAt: at(open.lastAgentMessageAt),
      reminderSentAt: at(open.reminderSentAt),
      status: plan.transfer ? "HUMAN" : "OPEN",
      agent: { autoCloseMinutes, enabledReminder },
    });
    return stored;
  });
  // The first attempts here, one hop less than a send job (the stale-send sweep covers a crash); the last
  // outcome is written with the claim's release.
  const last = await sendCommittedButLast(deps, {
    channelId: conv.channelId,
    channelType: conv.channelType,
    to: conv.contactExternalId,
  }, sent);
  return { sent: last, answered: [], images };
}

/**
 * The window's images the model sees (the agent has vision, the media job kept them), as data:
 * URLs by message id. One read, only for windows with such images.
 */
async function shownImages(
  deps: Deps,
  conv: Loaded,
  pending: PendingMessage[],
): Promise<Map<string, string>> {
  const wanted = conv.agent.enabledVision
    ? pending.filter((m) => m.type === "IMAGE" && m.media && !m.media.pending && m.media.error === null)
    : [];
  if (!wanted.length) return new Map();
  const rows = await deps.db.messageMediaBytes.findMany({
    where: { messageId: { in: wanted.map((m) => m.id) } },
    select: { messageId: true, bytes: true },
  });
  const mime = new Map(wanted.map((m) => [m.id, m.media!.mimeType?.split(";")[0].trim() || "image/jpeg"]));
  return new Map(rows.map((r) => [
    r.messageId,
    `data:${mime.get(r.messageId)};base64,${Buffer.from(r.bytes).toString("base64")}`,
  ]));
}

/** What generate() needs of the conversation reply() loaded. */
interface Conv {
  id: string;
  workspaceId: string;
  agentId: string;
  contact: { id: string; name: string };
  /** The contact's address on its channel: where the replies go, and the contactId receivers see. */
  contactExternalId: string;
  agent: Pick<
    ReplyAgent,
    | "id"
    | "name"
    | "systemPrompt"
    | "trainingContext"
    | "model"
    | "temperature"
    | "enabledHumanTransfer"
    | "splitMessages"
    | "enabledEmoji"
    | "signMessages"
    | "enabledVision"
  >;
}

/** The model call and what its tags say: the parts to send and a transfer, if any. */
async function generate(
  deps: Deps,
  conv: Conv & { intents: ReplyIntent[]; history: Loaded["history"] },
  pending: PendingMessage[],
  images: Map<string, string>,
): Promise<Plan> {
  const { agent } = conv;
  const log = { conversationId: conv.id, agentId: agent.id };
  const { prompt, intents } = replyRequest({
    agent,
    intents: conv.intents,
    history: conv.history,
    pending,
    images,
    contactName: conv.contact.name,
    now: deps.clock.now(),
    documentMaxChars: deps.config.media.document.maxChars,
  });
  const completion = await completeWithRetries(deps.llm, prompt, {
    timeoutMs: deps.config.llmTimeoutMs,
    logger: deps.logger,
    log,
  });
  if (!completion.ok) {
    deps.logger.warn("language model call failed; transferring to a human", {
      ...log,
      kind: completion.kind,
      error: completion.message,
    });
    const summary = completion.kind === "unavailable"
      ? MODEL_UNAVAILABLE
      : `${MODEL_UNAVAILABLE} (${completion.kind})`;
    return { parts: [], transfer: { reason: "ESCALATION", summary }, usage: null };
  }
  const usage = { inputTokens: completion.inputTokens, outputTokens: completion.outputTokens };

  const replacements: Array<{ start: number; end: number; text: string }> = [];
  let transfer: Plan["transfer"] = null;
  for (const match of parseIntentTags(completion.content, intents)) {
    const span = { start: match.start, end: match.end };
    if (match.kind === "transfer") {
      replacements.push({ ...span, text: "" });
      if (agent.enabledHumanTransfer && !transfer) {
        transfer = { reason: "TAG", summary: transferSummary(match) };
      }
      continue;
    }
    if (transfer?.reason === "ESCALATION") {
      // After a failed intent nothing more is carried out: a person takes it from here.
      replacements.push({ ...span, text: "" });
      continue;
    }
    if (match.missing.length) {
      deps.logger.info(SKIPPING_INTENT, { ...log, intent: match.intent.name, missing: match.missing });
      replacements.push({ ...span, text: "" });
      continue;
    }
    await fireIntent(deps, {
      workspaceId: conv.workspaceId,
      agentId: agent.id,
      conversationId: conv.id,
      intentName: match.intent.name,
      fields: match.fields,
    });
    // The URL is stored with its credentials sealed: opened only for the call.
    const open = (url: string) => openUrlSecrets(deps.secrets, url);
    const outcome = await callIntentWebhook((url, init) => deps.outbound.request(open(url), init), {
      url: match.intent.webhookUrl,
      method: match.intent.webhookMethod,
      body: {
        intentName: match.intent.name,
        fields: match.fields,
        context: {
          agentId: agent.id,
          agentName: agent.name,
          conversationId: conv.id,
          contactName: conv.contact.name,
          contactId: conv.contactExternalId,
        },
      },
    }, { timeoutMs: deps.config.intentWebhookTimeoutMs });
    if (outcome.kind === "escalate") {
      deps.logger.error("intent webhook failed; escalating to a human", {
        ...log,
        intent: match.intent.name,
        httpStatus: outcome.httpStatus,
        error: outcome.error,
      });
      transfer = { reason: "ESCALATION", summary: `intent ${match.intent.name} failed: ${outcome.error}` };
      replacements.push({ ...span, text: "" });
      continue;
    }
    replacements.push({ ...span, text: outcome.kind === "reply" ? outcome.message : "" });
  }
  // An escalated reply is not sent: its text may say the intent's action was done.
  if (transfer?.reason === "ESCALATION") return { parts: [], transfer, usage };
  const text = replaceTags(completion.content, replacements);
  return { parts: shapeReply(text, agent), transfer, usage };
}
