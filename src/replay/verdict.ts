/**
 * A case's verdict (docs/behaviour.md "Replays of agent changes"). First what the answers would
 * carry out, compared with what the stored reply did: an intent or a transfer the stored reply had
 * and the proposed answer loses is REGRESSED; one it gains, or an intent fired with other fields,
 * is at least CHANGED. Then, unless that already says REGRESSED or the two answers are the same
 * text, the supervisor's model judges blind which answer serves the customer better (the two in a
 * random order, labelled A and B): the current one → REGRESSED, the proposed one → CHANGED,
 * neither → the first step's verdict. Pure but for the random order.
 */
import type { ReplyPrompt } from "../conversations/prompt.ts";
import type { TagEffects } from "../conversations/intent_tags.ts";

export type Verdict = "SAME" | "CHANGED" | "REGRESSED";

export interface Judged {
  verdict: Verdict;
  reason: string;
}

const RANK: Record<Verdict, number> = { SAME: 0, CHANGED: 1, REGRESSED: 2 };
const worse = (a: Verdict, b: Verdict): Verdict => (RANK[a] >= RANK[b] ? a : b);

/** Each intent's name once per firing, to compare as multisets. */
function counts(effects: TagEffects): Map<string, number> {
  const out = new Map<string, number>();
  for (const i of effects.intents) out.set(i.name, (out.get(i.name) ?? 0) + 1);
  return out;
}

const fieldsOf = (effects: TagEffects) =>
  effects.intents.map((i) => `${i.name}\u0000${JSON.stringify(Object.entries(i.fields).sort())}`).sort();

/**
 * What the proposed answer's effects are against the stored reply's: REGRESSED when it loses an
 * intent or the transfer, CHANGED when it gains one or fires one with other fields, else SAME
 * (reason null).
 */
export function effectsVerdict(
  stored: TagEffects,
  proposed: TagEffects,
): { verdict: Verdict; reason: string | null } {
  const had = counts(stored);
  const has = counts(proposed);
  const lost = [...had].filter(([name, n]) => (has.get(name) ?? 0) < n).map(([name]) => name);
  const gained = [...has].filter(([name, n]) => (had.get(name) ?? 0) < n).map(([name]) => name);
  const lostTransfer = stored.transfer !== null && proposed.transfer === null;
  const gainedTransfer = stored.transfer === null && proposed.transfer !== null;
  if (lost.length || lostTransfer) {
    const what = [
      ...lost.map((n) => `the intent ${n}`),
      ...(lostTransfer ? ["the transfer to a person"] : []),
    ];
    return {
      verdict: "REGRESSED",
      reason: `The proposed answer loses ${what.join(" and ")} of the stored reply.`,
    };
  }
  if (gained.length || gainedTransfer) {
    const what = [
      ...gained.map((n) => `the intent ${n}`),
      ...(gainedTransfer ? ["a transfer to a person"] : []),
    ];
    return { verdict: "CHANGED", reason: `The proposed answer adds ${what.join(" and ")}.` };
  }
  const a = fieldsOf(stored);
  const b = fieldsOf(proposed);
  if (a.some((f, i) => f !== b[i])) {
    return { verdict: "CHANGED", reason: "The proposed answer fires the same intents with other fields." };
  }
  return { verdict: "SAME", reason: null };
}

/** Whitespace aside, the same text. */
export const sameText = (a: string, b: string) =>
  a.replace(/\s+/g, " ").trim() === b.replace(/\s+/g, " ").trim();

/** The judge's instructions. */
export const JUDGE_SYSTEM = [
  "You compare two answers a customer-service agent could send on a messaging channel.",
  "You are given the conversation so far, the customer's latest messages, and two candidate answers,",
  "A and B, each with the actions it would trigger. Decide which one serves the customer better:",
  "correct, helpful, consistent with the conversation, clear and polite.",
  'Reply with one line of JSON and nothing else: {"better": "A" | "B" | "same", "why": "<one short sentence>"}.',
  'Say "same" when neither is better.',
].join(" ");

export interface JudgeInput {
  /** The case's request: its messages after the system message are the conversation and the customer's latest. */
  request: ReplyPrompt;
  current: { text: string; effects: TagEffects };
  proposed: { text: string; effects: TagEffects };
  model: string;
  /** True: the proposed answer is A (a random draw per case, so the judge cannot learn an order). */
  proposedFirst: boolean;
}

const ROLE: Record<string, string> = { user: "Customer", assistant: "Agent" };

function actions(effects: TagEffects): string {
  const parts = effects.intents.map((i) =>
    `${i.name}(${Object.entries(i.fields).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")})`
  );
  if (effects.transfer !== null) parts.push(`transfer to a person ("${effects.transfer}")`);
  return parts.length ? parts.join("; ") : "none";
}

/** The judge's request: the supervisor's model, the conversation, A and B. */
export function judgePrompt(input: JudgeInput): ReplyPrompt {
  const turns = input.request.messages.slice(1);
  const latest = turns.at(-1)?.role === "user" ? turns.at(-1)! : null;
  const before = latest ? turns.slice(0, -1) : turns;
  const [a, b] = input.proposedFirst ? [input.proposed, input.current] : [input.current, input.proposed];
  const text = [
    "Conversation so far:",
    before.length ? before.map((m) => `${ROLE[m.role] ?? m.role}: ${m.content}`).join("\n") : "(none)",
    "",
    "The customer's latest messages:",
    latest?.content || "(none)",
    "",
    `Answer A:\n${a.text || "(no text)"}\nActions of A: ${actions(a.effects)}`,
    "",
    `Answer B:\n${b.text || "(no text)"}\nActions of B: ${actions(b.effects)}`,
  ].join("\n");
  return {
    model: input.model,
    messages: [{ role: "system", content: JUDGE_SYSTEM }, { role: "user", content: text }],
  };
}

/** The judge's answer read liberally: JSON, or a bare A / B / same; null when it says neither. */
export function readJudgement(answer: string): { better: "A" | "B" | "same"; why: string } | null {
  let better: string | undefined;
  let why = "";
  const object = answer.match(/\{[\s\S]*\}/)?.[0];
  if (object) {
    try {
      const parsed = JSON.parse(object) as Record<string, unknown>;
      if (typeof parsed.better === "string") better = parsed.better;
      if (typeof parsed.why === "string") why = parsed.why;
    } catch {
      // not JSON after all: the plain reading below
    }
  }
  // Not JSON (a raw line break inside a string, say): the fields found one by one.
  better ??= answer.match(/"?better"?\s*[:=]\s*"?([A-Za-z]+)/i)?.[1] ?? answer.trim().match(/^([AB])\b/)?.[1];
  why ||= answer.match(/"why"\s*:\s*"([^"]*)"/)?.[1] ?? "";
  const b = better?.trim().toUpperCase();
  const norm = b === "A" || b === "B"
    ? b
    : b && ["SAME", "EQUAL", "TIE", "NEITHER", "BOTH"].includes(b)
    ? "same"
    : null;
  if (!norm) return null;
  return { better: norm, why: oneLine(why) };
}

/** At most one line of 300 characters. */
export function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= 300 ? line : `${line.slice(0, 299)}…`;
}

/** The verdict from the effects' and the judge's. */
export function combine(
  floor: { verdict: Verdict; reason: string | null },
  judged: { better: "proposed" | "current" | "same"; why: string },
): Judged {
  const why = judged.why || "The judge gave no reason.";
  const reason = oneLine([floor.reason, why].filter((r) => r).join(" "));
  if (judged.better === "current") return { verdict: "REGRESSED", reason };
  if (judged.better === "proposed") return { verdict: worse(floor.verdict, "CHANGED"), reason };
  return { verdict: floor.verdict, reason };
}
