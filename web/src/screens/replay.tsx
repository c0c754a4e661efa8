/// <reference lib="dom" />
/**
 * An approval's replay: what the agent would have answered in its recent conversations as it is
 * and as the approval proposes it. Its counts (live, as cases end), then its cases, REGRESSED
 * first: the customer's messages, the two answers side by side (one above the other on a phone)
 * with the words that differ marked, what each answer would have carried out (intents with their
 * fields, a transfer), the verdict and the judge's reason.
 */
import { MarkedText, wordDiff, type WordPart } from "../diff.tsx";
import { href } from "../router.ts";
import { graphql, type ResultOf } from "../schema.ts";
import { Badge, formatCredits } from "../ui.tsx";

export const ReplayFields = graphql(`fragment ConsoleReplay on ApprovalReplay {
  status done total same changed regressed failed credits error startedAt finishedAt
  cases {
    conversationId pinned status customerMessages storedReply storedEffects
    currentReply proposedReply currentEffects proposedEffects verdict reason error
  }
}`);

export type Replay = ResultOf<typeof ReplayFields>;
type Case = Replay["cases"][number];

/** What an answer would carry out, as the API describes it: `{ intents: [{ name, fields }], transfer }`. */
export interface Effects {
  intents: { name: string; fields: [string, string][] }[];
  /** Why the conversation would go to a person, or null. */
  transfer: string | null;
}

const textOf = (value: unknown): string => typeof value === "string" ? value : JSON.stringify(value);

/** An answer's effects from the API's JSON, read liberally (null when there are none to read). */
export function effectsOf(value: unknown): Effects | null {
  if (value === null || typeof value !== "object") return null;
  const { intents, transfer } = value as { intents?: unknown; transfer?: unknown };
  const list = Array.isArray(intents) ? intents : [];
  return {
    intents: list
      .filter((i): i is { name: unknown; fields?: unknown } => i !== null && typeof i === "object")
      .map((i) => ({
        name: textOf(i.name),
        fields: i.fields !== null && typeof i.fields === "object"
          ? Object.entries(i.fields).map(([k, v]): [string, string] => [k, textOf(v)])
          : [],
      })),
    transfer: transfer === null || transfer === undefined || transfer === false ? null : textOf(transfer),
  };
}

/** One firing of an intent, to compare two answers' intents (fields in any order). */
const intentKey = (i: Effects["intents"][number]) => JSON.stringify([i.name, [...i.fields].sort()]);

/** Where a case is listed: REGRESSED, CHANGED, SAME, then failed, then those still asked. */
export function caseRank(c: Pick<Case, "status" | "verdict">): number {
  if (c.status === "FAILED") return 3;
  if (c.status !== "DONE" || !c.verdict) return 4;
  return { REGRESSED: 0, CHANGED: 1, SAME: 2 }[c.verdict];
}

/** The replay's state in words. */
function stateText(r: Replay): string {
  switch (r.status) {
    case "PENDING":
      return "Waiting to start.";
    case "RUNNING":
      return `Asking the model: ${r.done} of ${r.total} conversations replayed.`;
    case "DONE":
      return `Done: ${r.total} ${r.total === 1 ? "conversation" : "conversations"} replayed.`;
    case "FAILED":
      return r.error ?? "The replay failed.";
    case "OFF":
      return "Replay is turned off on this server.";
  }
}

/** The counts of a replay, live; "Replay again" when `onReplay` is given. */
export function ReplaySummary(
  { replay: r, onReplay, replaying }: { replay: Replay; onReplay?: () => void; replaying?: boolean },
) {
  const counts: [string, string | number][] = [
    ["Replayed", `${r.done} of ${r.total}`],
    ["Same", r.same],
    ["Changed", r.changed],
    ["Regressed", r.regressed],
    ["Failed", r.failed],
    ["Credits", formatCredits(r.credits)],
  ];
  return (
    <div class="replay-summary">
      <p class="replay-state" role="status">
        <Badge value={r.status} /> {stateText(r)}
      </p>
      <dl class="counts" aria-label="Replay counts">
        {counts.map(([label, value]) => (
          <div key={label} class={label === "Regressed" && r.regressed > 0 ? "alarm" : undefined}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {onReplay && (
        <div class="buttons">
          <button type="button" class="secondary" disabled={replaying} onClick={onReplay}>
            Replay again
          </button>
        </div>
      )}
    </div>
  );
}

/** The cases of a replay, REGRESSED first. */
export function ReplayCases({ replay }: { replay: Replay }) {
  if (!replay.cases.length) return null;
  // Array.prototype.sort is stable: within a verdict, the API's order (latest conversations first).
  const cases = [...replay.cases].sort((a, b) => caseRank(a) - caseRank(b));
  return (
    <ol class="cases" aria-label="Replayed conversations">
      {cases.map((c) => (
        <li key={c.conversationId}>
          <ReplayCase c={c} />
        </li>
      ))}
    </ol>
  );
}

/** The badge of a case: its verdict, FAILED, or PENDING while it is asked. */
const caseLabel = (c: Case) => c.status === "DONE" && c.verdict ? c.verdict : c.status;

function ReplayCase({ c }: { c: Case }) {
  const label = caseLabel(c);
  const current = effectsOf(c.currentEffects);
  const proposed = effectsOf(c.proposedEffects);
  const words = c.currentReply !== null && c.proposedReply !== null
    ? wordDiff(c.currentReply, c.proposedReply)
    : null;
  return (
    <article class={`case case-${label.toLowerCase()}`} aria-label={`Replayed conversation, ${label}`}>
      <p class="case-head">
        <Badge value={label} /> {c.pinned && <span class="pinned">Pinned</span>}{" "}
        <a href={href("conversation", c.conversationId)}>Open the conversation</a>
      </p>
      {c.status === "DONE" && c.reason && <p class="reason">{c.reason}</p>}
      {c.status === "FAILED" && <p class="case-error">{c.error ?? "This case failed."}</p>}
      <h4>The customer wrote</h4>
      <ol class="said" aria-label="The customer's messages">
        {c.customerMessages.map((m, i) => <li key={i}>{m}</li>)}
      </ol>
      <div class="answers">
        <Answer
          title="Current answer"
          text={c.currentReply}
          parts={words?.before}
          mark="del"
          effects={current}
          other={proposed}
          pending={c.status === "PENDING"}
        />
        <Answer
          title="Proposed answer"
          text={c.proposedReply}
          parts={words?.after}
          mark="ins"
          effects={proposed}
          other={current}
          pending={c.status === "PENDING"}
        />
      </div>
      <details class="stored">
        <summary>The reply the customer got</summary>
        <p class="answer-text">{c.storedReply || "(no text)"}</p>
        <EffectList effects={effectsOf(c.storedEffects)} label="Effects of the reply the customer got" />
      </details>
    </article>
  );
}

/** One side of a case: its text with the words the other lacks marked, and its effects. */
function Answer(
  { title, text, parts, mark, effects, other, pending }: {
    title: string;
    text: string | null;
    parts: WordPart[] | undefined;
    mark: "del" | "ins";
    effects: Effects | null;
    other: Effects | null;
    pending: boolean;
  },
) {
  return (
    <section class={`answer answer-${mark === "del" ? "current" : "proposed"}`} aria-label={title}>
      <h4>{title}</h4>
      {text === null
        ? <p class="muted">{pending ? "Waiting for the model." : "No answer: the model call failed."}</p>
        : (
          <p class="answer-text">
            {!text ? "(no text)" : parts ? <MarkedText parts={parts} mark={mark} /> : text}
          </p>
        )}
      {effects && (
        <EffectList
          effects={effects}
          other={other}
          mark={mark}
          label={`Effects of the ${title.toLowerCase()}`}
        />
      )}
    </section>
  );
}

/**
 * What an answer would carry out, as labelled fields. With `other` (the other answer's effects),
 * an intent or a transfer this answer has and the other lacks is marked: "lost" on the current
 * side, "new" on the proposed one.
 */
function EffectList(
  { effects, other, mark, label }: {
    effects: Effects | null;
    other?: Effects | null;
    mark?: "del" | "ins";
    label: string;
  },
) {
  if (!effects) return null;
  const theirs = new Set(other?.intents.map(intentKey));
  const flag = (only: boolean) =>
    only && other && mark ? <span class={`only only-${mark}`}>{mark === "del" ? "lost" : "new"}</span> : null;
  return (
    <dl class="effects" aria-label={label}>
      {effects.intents.length === 0 && (
        <div>
          <dt>Intents</dt>
          <dd>None</dd>
        </div>
      )}
      {effects.intents.map((intent, i) => (
        <div key={i} class="intent">
          <dt>Intent</dt>
          <dd>
            <strong>{intent.name}</strong> {flag(!theirs.has(intentKey(intent)))}
            {intent.fields.length > 0 && (
              <dl class="fields">
                {intent.fields.map(([k, v]) => (
                  <div key={k}>
                    <dt>{k}</dt>
                    <dd>{v}</dd>
                  </div>
                ))}
              </dl>
            )}
          </dd>
        </div>
      ))}
      <div class="transfer">
        <dt>Transfer to a person</dt>
        <dd>
          {effects.transfer === null ? "No" : <>Yes: {effects.transfer}</>}{" "}
          {flag(effects.transfer !== null && other?.transfer === null)}
        </dd>
      </div>
    </dl>
  );
}
