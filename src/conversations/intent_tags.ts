/**
 * Intent tags in a model reply (docs/behaviour.md "Replies"):
 * `<intent-tag field="value" .../>` for an intent, `<transferir motivo="..."/>`
 * (or `<transferir/>`) for the transfer to a human. Found robustly (self-closing or not, `"` or `'`
 * quotes or none, HTML entities decoded, any number per reply, tag names in any case), only for
 * known tags, with their positions, so the caller can fire each intent and then put the intent
 * response's `message` (or nothing) where its tag was. Anything else that looks like markup is text.
 * Pure: the caller fires `intent.fired`, calls the webhook and logs.
 */
import { TRANSFER_TAG } from "../intents/tag.ts";

export { TRANSFER_TAG };

/** The log line for a tag that lacks a required field (the intent is skipped, not called). */
export const SKIPPING_INTENT = "Skipping intent (missing required fields)";

/** What the parser needs of an intent: its tag and its required field names. */
export interface TaggedIntent {
  tag: string;
  requiredFields: ReadonlyArray<{ name: string }>;
}

interface Span {
  /** UTF-16 offsets of the whole tag in the reply, `end` exclusive (a closing tag included). */
  start: number;
  end: number;
  /** Every attribute as written (names lowercased, values decoded; the first of a repeated name wins). */
  attributes: Record<string, string>;
}

export interface IntentTagMatch<I extends TaggedIntent = TaggedIntent> extends Span {
  kind: "intent";
  intent: I;
  /** One string per required field present with a non-blank value (sent as `fields` of the intent call). */
  fields: Record<string, string>;
  /** Required fields absent or blank: when not empty the intent is skipped (SKIPPING_INTENT). */
  missing: string[];
}

export interface TransferTagMatch extends Span {
  kind: "transfer";
  /** `motivo`, else the text between `<transferir>` and `</transferir>`, else null. */
  reason: string | null;
}

export type TagMatch<I extends TaggedIntent = TaggedIntent> = IntentTagMatch<I> | TransferTagMatch;

// ---- entities ----

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** Decodes the named entities above and numeric ones (`&#39;`, `&#x1F600;`); others stay as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]+);/g, (whole, body: string) => {
    if (body[0] !== "#") return NAMED[body.toLowerCase()] ?? whole;
    const code = body[1] === "x" || body[1] === "X"
      ? parseInt(body.slice(2), 16)
      : parseInt(body.slice(1), 10);
    // Surrogates and values past U+10FFFF are not characters; NUL is refused by the database.
    const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
    return valid ? String.fromCodePoint(code) : whole;
  });
}

/** The entity-encoded form of an attribute value, safe inside either quote style. */
export function encodeEntities(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}

// ---- scanning ----

const NAME = /[\p{L}\p{N}][\p{L}\p{N}._-]*/uy;
const SPACE = /\s*/y;
const ATTR_NAME = /[A-Za-z_][A-Za-z0-9_.:-]*/y;
const UNQUOTED = /[^\s"'<>=`/]+/y;

function sticky(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at;
  const m = re.exec(text);
  return m ? m[0] : null;
}

interface Opening {
  name: string;
  attributes: Record<string, string>;
  /** Offset just after `>` or `/>`. */
  end: number;
  selfClosing: boolean;
}

/** The opening tag starting at `text[at] === "<"`, or null when it is not one. */
function readOpening(text: string, at: number): Opening | null {
  const name = sticky(NAME, text, at + 1);
  if (!name) return null;
  const attributes: Record<string, string> = {};
  let i = at + 1 + name.length;
  for (;;) {
    const space = sticky(SPACE, text, i)!;
    i += space.length;
    if (text.startsWith("/>", i)) {
      return { name: name.toLowerCase(), attributes, end: i + 2, selfClosing: true };
    }
    if (text[i] === ">") return { name: name.toLowerCase(), attributes, end: i + 1, selfClosing: false };
    // An attribute must be separated from the name or the previous attribute by whitespace.
    if (!space) return null;
    const attr = sticky(ATTR_NAME, text, i);
    if (!attr) return null;
    i += attr.length;
    let value = "";
    const beforeEq = sticky(SPACE, text, i)!;
    if (text[i + beforeEq.length] === "=") {
      i += beforeEq.length + 1;
      i += sticky(SPACE, text, i)!.length;
      const quote = text[i];
      if (quote === '"' || quote === "'") {
        const close = text.indexOf(quote, i + 1);
        if (close < 0) return null;
        value = text.slice(i + 1, close);
        i = close + 1;
      } else {
        const bare = sticky(UNQUOTED, text, i);
        if (!bare) return null;
        value = bare;
        i += bare.length;
      }
    }
    const key = attr.toLowerCase();
    if (!(key in attributes)) attributes[key] = decodeEntities(value);
  }
}

/**
 * The end of `</name>` when it comes right after `from`, with only text (no `<`) in between, and
 * that text; null when the tag is not closed there (then the opening alone is the tag).
 */
function readClosing(text: string, from: number, name: string): { end: number; inner: string } | null {
  const lt = text.indexOf("<", from);
  if (lt < 0 || text[lt + 1] !== "/") return null;
  const closing = sticky(NAME, text, lt + 2);
  if (!closing || closing.toLowerCase() !== name) return null;
  const after = lt + 2 + closing.length;
  const space = sticky(SPACE, text, after)!;
  if (text[after + space.length] !== ">") return null;
  return { end: after + space.length + 1, inner: text.slice(from, lt) };
}

/** The attribute value for a field name, in any case (attribute names are kept lowercased). */
function fieldValue(attributes: Record<string, string>, name: string): string | undefined {
  return attributes[name.toLowerCase()];
}

/**
 * Every intent and transfer tag of `reply`, in order of appearance. `intents` are the agent's
 * intents that may fire for this reply (see intentsForTypes); tags of other names are left alone.
 * The transfer tag is always reported: when `enabledHumanTransfer` is off the caller removes it
 * without transferring. Never throws.
 */
export function parseIntentTags<I extends TaggedIntent>(reply: string, intents: readonly I[]): TagMatch<I>[] {
  const byTag = new Map<string, I>();
  for (const intent of intents) byTag.set(intent.tag.toLowerCase(), intent);
  const found: TagMatch<I>[] = [];
  let at = reply.indexOf("<");
  while (at >= 0) {
    const opening = readOpening(reply, at);
    const intent = opening ? byTag.get(opening.name) : undefined;
    if (!opening || (!intent && opening.name !== TRANSFER_TAG)) {
      at = reply.indexOf("<", at + 1);
      continue;
    }
    const closing = opening.selfClosing ? null : readClosing(reply, opening.end, opening.name);
    const span = { start: at, end: closing?.end ?? opening.end, attributes: opening.attributes };
    if (intent) {
      const fields: Record<string, string> = {};
      const missing: string[] = [];
      for (const { name } of intent.requiredFields) {
        const value = fieldValue(opening.attributes, name);
        if (value === undefined || value.trim() === "") missing.push(name);
        else fields[name] = value;
      }
      found.push({ kind: "intent", intent, fields, missing, ...span });
    } else {
      const reason = opening.attributes["motivo"]?.trim() || decodeEntities(closing?.inner ?? "").trim() ||
        null;
      found.push({ kind: "transfer", reason, ...span });
    }
    at = reply.indexOf("<", span.end);
  }
  return found;
}

/** The summary of a transfer tag: its reason, or a default when it gives none. */
export function transferSummary(match: Pick<TransferTagMatch, "reason">): string {
  return match.reason?.trim() || "transfer requested by the agent";
}

/** What an answer's tags would carry out: the intents that fire (with their fields) and a transfer. */
export interface TagEffects {
  intents: Array<{ name: string; fields: Record<string, string> }>;
  /** The transfer's summary, or null when the answer hands nothing to a person. */
  transfer: string | null;
}

/**
 * The effects of `reply`'s tags under the reply's rules, without carrying any out: an intent
 * fires when every required field is given; the first transfer tag transfers when the agent's
 * `enabledHumanTransfer` is on. `text`: the reply with every tag removed (no intent answers here).
 */
export function tagEffects<I extends TaggedIntent & { name: string }>(
  reply: string,
  intents: readonly I[],
  options: { transferEnabled: boolean },
): { effects: TagEffects; text: string } {
  const effects: TagEffects = { intents: [], transfer: null };
  const matches = parseIntentTags(reply, intents);
  for (const match of matches) {
    if (match.kind === "transfer") {
      if (options.transferEnabled && effects.transfer === null) effects.transfer = transferSummary(match);
    } else if (!match.missing.length) {
      effects.intents.push({ name: match.intent.name, fields: match.fields });
    }
  }
  const text = replaceTags(reply, matches.map((m) => ({ start: m.start, end: m.end, text: "" })));
  return { effects, text };
}

/**
 * The intents that may be detected in a reply to customer messages of `types`: those whose triggerOnTypes include at least one of them.
 */
export function intentsForTypes<I extends { triggerOnTypes: readonly string[] }>(
  intents: readonly I[],
  types: Iterable<string>,
): I[] {
  const present = new Set(types);
  return intents.filter((i) => i.triggerOnTypes.some((t) => present.has(t)));
}

/**
 * `reply` with each span replaced by its text (the intent response's `message`, or "" to remove
 * it). A removed tag takes one neighbouring space with it, so no double space is left; the result
 * is trimmed. Spans must not overlap (parseIntentTags' never do).
 */
export function replaceTags(
  reply: string,
  replacements: ReadonlyArray<{ start: number; end: number; text: string }>,
): string {
  const sorted = [...replacements].sort((a, b) => a.start - b.start);
  let out = "";
  let at = 0;
  for (const r of sorted) {
    out += reply.slice(at, r.start);
    let next = r.end;
    if (r.text === "") {
      const before = out.at(-1);
      const after = reply[next];
      if ((before === " " || before === undefined || before === "\n") && after === " ") next += 1;
      else if (before === " " && (after === undefined || after === "\n" || /[.,;:!?]/.test(after))) {
        out = out.slice(0, -1);
      }
    }
    out += r.text;
    at = next;
  }
  return (out + reply.slice(at)).replace(/\n{3,}/g, "\n\n").trim();
}

/** The tag form of an intent with these attributes, as the prompt shows it, values encoded. */
export function renderTag(
  tag: string,
  attributes: Record<string, string>,
  options: { selfClosing?: boolean; quote?: '"' | "'" } = {},
): string {
  const q = options.quote ?? '"';
  const attrs = Object.entries(attributes).map(([k, v]) => ` ${k}=${q}${encodeEntities(v)}${q}`).join("");
  return options.selfClosing === false ? `<${tag}${attrs}></${tag}>` : `<${tag}${attrs}/>`;
}
