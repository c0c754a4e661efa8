/**
 * A replay's job (docs/behaviour.md "Replays of agent changes"). It picks the cases (the agent's
 * latest REPLAY_CONVERSATIONS conversations with a model reply, then its pinned ones), cuts each
 * before its latest model reply, and asks the model for that reply twice with the request the live
 * reply builds (conversations/pipeline/request.ts): as the agent is, and as the approval proposes
 * it. The answers' tags are only read (intent_tags.ts tagEffects): nothing is sent, no intent or
 * event webhook is called, no event of the conversation is published, nothing is stored in it.
 * Each case is judged (./verdict.ts), written with its counts and credits, and the approval is
 * published again (`approval.replayed`) for `approvalEvents`.
 *
 * Bounds: the model calls go through this process' slots (REPLAY_CONCURRENCY); each call and each
 * case's write first gives way to the live replies under way (the worker's `liveRoom`); before each
 * call the run checks that it is still the replay's run and that the approval is still PENDING and
 * unexpired, and stops otherwise. A failed model call fails its case; the others go on.
 */
import type { LimitFunction } from "p-limit";
import type { Deps } from "../context.ts";
import type { SqlTx } from "../db/client.ts";
import { sqlTransaction } from "../db/transaction.ts";
import type { Completion } from "../llm/client.ts";
import type { ReplyPrompt } from "../conversations/prompt.ts";
import { replyRequest } from "../conversations/pipeline/request.ts";
import { type TagEffects, tagEffects } from "../conversations/intent_tags.ts";
import { shapeReply } from "../conversations/shaping.ts";
import { modelText } from "../media/understanding.ts";
import type { ReplyIntent } from "../conversations/sql.ts";
import { creditsOf, pricedUsage, saneUsage } from "../supervisor/credits.ts";
import { publishApprovalEvent } from "../approvals/events.ts";
import { sameJson } from "../approvals/changes.ts";
import { storableText } from "../shared/storable.ts";
import { newId } from "../shared/ids.ts";
import { proposedAgent, type ReplayAgent } from "./changes.ts";
import {
  type CaseOutcome,
  caseSources,
  clearCases,
  endReplayRun,
  finishCase,
  replayStart,
  replayState,
  type StartedCase,
  storeCases,
} from "./sql.ts";
import { combine, effectsVerdict, judgePrompt, readJudgement, sameText } from "./verdict.ts";
import type { ReplayJob } from "./start.ts";
import { stoppedBy } from "./stop.ts";
import type { RowOf } from "../db/statement.ts";

/** What a replay's job is given by its worker: this process' bounds on its model calls. */
export interface ReplayBounds {
  /** REPLAY_CONCURRENCY slots of this process, shared by its replays. */
  limit: LimitFunction;
  /** Resolves once the live replies under way leave room for a replay's step. */
  liveRoom(): Promise<void>;
  /** Draws which answer the judge sees first (default Math.random). */
  random?: () => number;
}

/** Messages of history read per case, as the live reply reads them. */
const HISTORY_MESSAGES = 60;

type Source = RowOf<typeof caseSources.columns>;

interface Case {
  id: string;
  source: Source;
}

interface Begun {
  approval: { id: string; workspaceId: string; agentId: string | null };
  agent: ReplayAgent;
  proposed: ReplayAgent;
  intents: ReplyIntent[];
  cases: Case[];
}

/** `fn`'s promise, made on the first call and shared by the later ones. */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => made ??= fn();
}

/** Runs one replay job (see the module comment). */
export async function runReplay(deps: Deps, job: ReplayJob, bounds: ReplayBounds): Promise<void> {
  const begun = await begin(deps, job);
  if (!begun) return;
  const run = new Run(deps, job, begun, bounds);
  await Promise.all(begun.cases.map((c) => run.case(c)));
  await run.end();
}

/** Why a replay stops now, or null while its approval is PENDING and unexpired. */
function stopReason(state: { status: string | null; expiresAt: Date | null } | undefined, now: Date) {
  if (!state?.status) return "Stopped: the approval is gone.";
  if (state.status !== "PENDING") return stoppedBy(state.status);
  if (state.expiresAt && state.expiresAt <= now) return stoppedBy("EXPIRED");
  return null;
}

/**
 * Starts the job's run (the replay's row locked): the cases picked and stored, the counts reset, the
 * replay RUNNING (DONE at once without a case to ask), `approval.replayed` published. Null when the
 * run is not the replay's any more, or the replay ended (or stopped here). Raw statements on the
 * pool's fast path, like the cases' writes: no Prisma transaction in a replay's run.
 */
async function begin(deps: Deps, job: ReplayJob): Promise<Begun | null> {
  return await sqlTransaction(deps.db, async (tx) => {
    const [start] = await replayStart.rows(tx, {
      replayId: job.replayId,
      limit: deps.config.replay.conversations,
    });
    // A retried job (its process died) finds its run RUNNING and starts it over.
    if (!start || start.run !== job.run || !["PENDING", "RUNNING"].includes(start.status)) return null;
    const approval = start.approvalId
      ? { id: start.approvalId, workspaceId: start.workspaceId!, agentId: start.approvalAgentId }
      : null;
    const now = deps.clock.now();
    const stopped = stopReason({ status: start.approvalStatus, expiresAt: start.expiresAt }, now);
    const agent = start.agent;
    if (stopped || !agent) {
      await endRun(deps, tx, job, approval, { error: stopped ?? "The agent is gone.", now });
      return null;
    }
    const pinned = new Set(start.pins);
    const ids = [...new Set([...start.latest!, ...pinned])];
    const sources = ids.length
      ? await caseSources.rows(tx, { agentId: agent.id, ids, historyMessages: HISTORY_MESSAGES })
      : [];
    const cases: StartedCase[] = sources.map((s, position) => ({
      id: newId(),
      position,
      conversationId: s.conversationId,
      pinned: pinned.has(s.conversationId),
      // A pinned conversation without a model reply has nothing to replay.
      status: s.storedReply === null ? "FAILED" : "PENDING",
      customerMessages: s.pending.map((m) => modelText(m, { inWindow: false })),
      storedReply: s.storedReply ?? "",
      storedEffects: { intents: s.intents, transfer: s.transfer },
      error: s.storedReply === null ? "The conversation has no AI reply to replay." : null,
    }));
    await clearCases.run(tx, { replayId: job.replayId });
    await storeCases.run(tx, { replayId: job.replayId, cases, now });
    await publishApprovalEvent(deps, tx, "approval.replayed", approval!);
    const asked = cases.filter((c) => c.status === "PENDING");
    if (!asked.length) return null;
    return {
      approval: approval!,
      agent,
      proposed: proposedAgent(agent, start.after),
      intents: start.intents!,
      cases: asked.map((c) => ({ id: c.id, source: sources[c.position] })),
    };
  });
}

/**
 * Ends the job's run (still its run, not ended): DONE, or FAILED with `error`; published. An
 * approval that is gone has no one to tell.
 */
async function endRun(
  deps: Deps,
  tx: SqlTx,
  job: ReplayJob,
  approval: { id: string; workspaceId: string; agentId: string | null } | null,
  end: { error: string | null; now: Date },
): Promise<void> {
  const ended = await endReplayRun.run(tx, {
    replayId: job.replayId,
    run: job.run,
    error: end.error,
    now: end.now,
  });
  if (ended && approval) await publishApprovalEvent(deps, tx, "approval.replayed", approval);
}

/** An answer of the model for one side of a case. */
type Answer =
  | { ok: true; text: string; effects: TagEffects }
  | { ok: false; error: string };

class Run {
  /** Why the run stops (set once), or null while it goes on. */
  #stop: string | null = null;
  /** The run is over from outside (a rerun started another, a decision ended it): it writes no more of itself. */
  #superseded = false;
  /** The cases' writes, one after the other (see #finish). */
  #writes: Promise<void> = Promise.resolve();
  readonly #random: () => number;

  constructor(
    private readonly deps: Deps,
    private readonly job: ReplayJob,
    private readonly begun: Begun,
    private readonly bounds: ReplayBounds,
  ) {
    this.#random = bounds.random ?? Math.random;
  }

  /** Whether the run must stop, as the database says now (and as the run learnt before). */
  async #stopped(): Promise<boolean> {
    if (this.#stop !== null || this.#superseded) return true;
    const [state] = await replayState.rows(this.deps.db, this.job);
    if (!state?.current) this.#superseded = true;
    else this.#stop = stopReason(state, this.deps.clock.now());
    return this.#stop !== null || this.#superseded;
  }

  /**
   * One model call within the bounds: null when the run stopped before it was made (`check`: the
   * database's answer, shared by the calls of one step). The usage of a call made is added to `spent`.
   */
  #call(prompt: ReplyPrompt, spent: Completion[], check: () => Promise<boolean>): Promise<Completion | null> {
    return this.bounds.limit(async () => {
      await this.bounds.liveRoom();
      if (this.#stop !== null || this.#superseded || await check()) return null;
      const completion = await this.deps.llm.complete(prompt, { timeoutMs: this.deps.config.llmTimeoutMs });
      spent.push(completion);
      return completion;
    });
  }

  /** A side's answer as the customer would read it, and what its tags would carry out. */
  #answer(completion: Completion, intents: ReplyIntent[], agent: ReplayAgent): Answer {
    if (!completion.ok) return { ok: false, error: `${completion.kind}: ${completion.message}` };
    const raw = storableText(completion.content);
    const { effects, text } = tagEffects(raw, intents, { transferEnabled: agent.enabledHumanTransfer });
    return { ok: true, text: shapeReply(text, agent).join("\n\n"), effects };
  }

  async case(c: Case): Promise<void> {
    const spent: Completion[] = [];
    let outcome: CaseOutcome;
    try {
      outcome = await this.#ask(c, spent) ?? this.#stoppedOutcome();
    } catch (error) {
      this.deps.logger.error("replay case failed", { replayId: this.job.replayId, caseId: c.id, error });
      outcome = { ...this.#stoppedOutcome(), error: "The replay of this case failed on the server." };
    }
    // A case stopped before any call stays PENDING: nothing was asked, nothing spent.
    if (!spent.length && outcome.error === this.#stop) return;
    await this.#finish(c, outcome, spent);
  }

  #stoppedOutcome(): CaseOutcome {
    return {
      status: "FAILED",
      currentReply: null,
      proposedReply: null,
      currentEffects: null,
      proposedEffects: null,
      verdict: null,
      reason: null,
      error: this.#stop,
    };
  }

  /** Asks both sides and the judge; null when the run stopped before the case was answered. */
  async #ask(c: Case, spent: Completion[]): Promise<CaseOutcome | null> {
    const { agent, proposed, intents } = this.begun;
    const s = c.source;
    const base = {
      intents,
      history: s.history,
      pending: s.pending,
      // The window's images are not kept past their reply: a replay reads their captions.
      images: new Map<string, string>(),
      contactName: s.contactName,
      now: s.repliedAt!,
      documentMaxChars: this.deps.config.media.document.maxChars,
    };
    const current = replyRequest({ ...base, agent });
    const changed = replyRequest({ ...base, agent: proposed });
    // One look at the database for the two calls, made by the first of them to get a slot.
    const check = once(() => this.#stopped());
    const [a, b] = await Promise.all([
      this.#call(current.prompt, spent, check),
      this.#call(changed.prompt, spent, check),
    ]);
    if (!a || !b) return null;
    const cur = this.#answer(a, current.intents, agent);
    const pro = this.#answer(b, changed.intents, proposed);
    const replies = {
      currentReply: cur.ok ? cur.text : null,
      proposedReply: pro.ok ? pro.text : null,
      currentEffects: cur.ok ? cur.effects : null,
      proposedEffects: pro.ok ? pro.effects : null,
    };
    if (!cur.ok || !pro.ok) {
      const error = [!cur.ok && `current answer: ${cur.error}`, !pro.ok && `proposed answer: ${pro.error}`]
        .filter((e) => e).join("; ");
      return {
        status: "FAILED",
        ...replies,
        verdict: null,
        reason: null,
        error: `The model call failed (${error}).`,
      };
    }
    const stored: TagEffects = { intents: s.intents, transfer: s.transfer };
    const floor = effectsVerdict(stored, pro.effects);
    const done = (verdict: CaseOutcome["verdict"], reason: string): CaseOutcome => ({
      status: "DONE",
      ...replies,
      verdict,
      reason,
      error: null,
    });
    if (floor.verdict === "REGRESSED") return done(floor.verdict, floor.reason!);
    if (sameText(cur.text, pro.text) && sameJson(cur.effects, pro.effects)) {
      return done(floor.verdict, floor.reason ?? "The same answer as the agent's as it is.");
    }
    const proposedFirst = this.#random() < 0.5;
    const judged = await this.#call(
      judgePrompt({
        request: current.prompt,
        current: cur,
        proposed: pro,
        model: this.deps.config.supervisor.model,
        proposedFirst,
      }),
      spent,
      () => this.#stopped(),
    );
    if (!judged) return null;
    const reading = judged.ok ? readJudgement(judged.content) : null;
    if (!reading) {
      const why = judged.ok ? "its answer could not be read" : `${judged.kind}: ${judged.message}`;
      return {
        status: "FAILED",
        ...replies,
        verdict: null,
        reason: null,
        error: `The judge failed (${why}).`,
      };
    }
    const better = reading.better === "same"
      ? "same"
      : (reading.better === "A") === proposedFirst
      ? "proposed"
      : "current";
    const verdict = combine(floor, { better, why: storableText(reading.why) });
    return done(verdict.verdict, verdict.reason);
  }

  /** Writes the case and what its calls cost, publishes the approval, and learns whether to stop. */
  async #finish(c: Case, outcome: CaseOutcome, spent: Completion[]): Promise<void> {
    const usage = pricedUsage(
      spent.filter((s) => s.ok).map((s) =>
        saneUsage({
          promptTokens: s.inputTokens,
          completionTokens: s.outputTokens,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        }, this.deps.logger)
      ),
    );
    const credits = creditsOf(usage, this.deps.config.supervisor);
    // One case's write at a time: they lock the same replay row, and a write waiting for that lock
    // would hold one of the pool's connections that live replies need. Writing gives way to live replies too.
    const written = this.#writes.then(async () => {
      await this.bounds.liveRoom();
      return await this.#write(c, outcome, usage, credits);
    });
    this.#writes = written.then(() => {}, () => {});
    const { state, now } = await written;
    if (!state.recorded) this.#superseded = true;
    else this.#stop ??= stopReason(state, now);
  }

  async #write(
    c: Case,
    outcome: CaseOutcome,
    usage: { inputTokens: number; outputTokens: number },
    credits: number,
  ) {
    const now = this.deps.clock.now();
    const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const state = await sqlTransaction(this.deps.db, async (tx) => {
      const [row] = await finishCase.rows(tx, {
        caseId: c.id,
        replayId: this.job.replayId,
        run: this.job.run,
        outcome,
        usage,
        credits,
        day,
      });
      if (row.recorded) await publishApprovalEvent(this.deps, tx, "approval.replayed", this.begun.approval);
      return row;
    });
    return { state, now };
  }

  /** Ends the run: DONE, or FAILED with why it stopped (one ended from outside is left as it is). */
  async end(): Promise<void> {
    if (this.#superseded) return;
    await sqlTransaction(
      this.deps.db,
      (tx) =>
        endRun(this.deps, tx, this.job, this.begun.approval, {
          error: this.#stop,
          now: this.deps.clock.now(),
        }),
    );
    this.deps.logger.info("replay ended", {
      replayId: this.job.replayId,
      approvalId: this.begun.approval.id,
      cases: this.begun.cases.length,
      stopped: this.#stop,
    });
  }
}
