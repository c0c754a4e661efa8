/**
 * Reply shaping: the agent's behaviour flags applied to a reply text (tags already replaced) to get
 * the messages that are sent. The agent's flags: `splitMessages` (a long reply becomes several
 * messages), `enabledEmoji` (false: emoji stripped), `signMessages` (each message signed with the
 * agent name). WhatsApp refuses a text over 4096 characters, so every message stays within it
 * whatever the flags; the signature is counted in. Boundaries come from Intl.Segmenter (ICU's
 * sentence and grapheme rules), so no message ends inside a sentence when a whole one fits, nor
 * inside a character (only a single cluster longer than the limit is cut, between code points,
 * never inside a surrogate pair). Pure.
 */
import { WHATSAPP_TEXT_LIMIT } from "../channels/whatsapp/graph_api.ts";

export interface ShapingFlags {
  splitMessages: boolean;
  enabledEmoji: boolean;
  signMessages: boolean;
}

// ---- emoji ----

/** Everything that may follow an emoji base inside one emoji: skin tones, variation selectors, keycap, tags. */
const EMOJI_TAIL = String.raw`(?:\p{Emoji_Modifier}|[\uFE0E\uFE0F\u20E3]|[\u{E0020}-\u{E007F}])*`;
/**
 * An emoji base: a pictograph, a regional indicator (flags are pairs of them), a keycap's digit or
 * sign when the keycap mark follows, or ©, ® and ™ only with the emoji variation selector: alone
 * they are ordinary text symbols and stay.
 */
const EMOJI_BASE = String
  .raw`(?:(?![\u00A9\u00AE\u2122])\p{Extended_Pictographic}|\p{Regional_Indicator}|[#*0-9]\uFE0F?\u20E3|[\u00A9\u00AE\u2122]\uFE0F|\p{Emoji_Modifier})`;
/** One emoji, ZWJ sequences (👩‍👩‍👧) included. */
const EMOJI = String.raw`${EMOJI_BASE}${EMOJI_TAIL}(?:\u200D${EMOJI_BASE}${EMOJI_TAIL})*`;
const EMOJI_RUN = new RegExp(String.raw`([ \t]?)(?:${EMOJI})+([ \t]?)`, "gu");

/**
 * The text without emoji (`enabledEmoji: false`). Other text is left as it was, ZWJ and variation
 * selectors outside emoji too; the space of a removed emoji between two words stays single.
 * ©, ® and ™ are emoji only with U+FE0F after them; alone they are text and stay.
 */
export function stripEmoji(text: string): string {
  return text.replace(EMOJI_RUN, (run: string, before: string, after: string, at: number, whole: string) => {
    const prev = whole[at - 1];
    const next = whole[at + run.length];
    // Between two words the space stays; before closing punctuation or at a line's end it goes.
    const between = prev !== undefined && next !== undefined && /\S/.test(prev) &&
      !/[\s.,;:!?…)\]}»”’]/.test(next);
    return between && (before || after) ? " " : "";
  });
}

// ---- splitting ----

const sentences = new Intl.Segmenter(undefined, { granularity: "sentence" });
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

type Level = (text: string) => string[];

/** Paragraphs, each with the blank lines after it (so joining the pieces gives the text back). */
const byParagraph: Level = (text) => text.split(/(?<=\n[ \t]*\n)(?=[ \t]*\S)/);
/** Lines, each with its newline. */
const byLine: Level = (text) => text.split(/(?<=\n)/);
const bySentence: Level = (text) => Array.from(sentences.segment(text), (s) => s.segment);
/** Words, each with the whitespace after it. */
const byWord: Level = (text) => text.split(/(?<=\s)(?=\S)/);
const byGrapheme: Level = (text) => Array.from(graphemes.segment(text), (s) => s.segment);
/** The last resort for a grapheme over the limit (a letter with thousands of marks): code points. */
const byCodePoint: Level = (text) => Array.from(text);

const LEVELS: Level[] = [byParagraph, byLine, bySentence, byWord, byGrapheme, byCodePoint];

/**
 * Pieces of `text`, each at most `max` UTF-16 units, cut at the coarsest boundary that makes them
 * fit (paragraph, line, sentence, word, character, code point), packing as many whole pieces into
 * one as fit. Concatenated, they are `text`.
 */
function pack(text: string, max: number, level = 0): string[] {
  if (text.length <= max) return [text];
  const out: string[] = [];
  let current = "";
  for (const piece of LEVELS[level](text)) {
    if (current.length + piece.length <= max) {
      current += piece;
      continue;
    }
    if (current) out.push(current);
    current = "";
    if (piece.length <= max) current = piece;
    else out.push(...pack(piece, max, Math.min(level + 1, LEVELS.length - 1)));
  }
  if (current) out.push(current);
  return out;
}

/** Trimmed and without empty pieces: whitespace at a cut is not sent. */
const tidy = (parts: string[]) => parts.map((p) => p.trim()).filter((p) => p !== "");

/**
 * The messages of one reply. With `split` (the agent's `splitMessages`) each paragraph is its own
 * message, as people write in a chat; without it the reply is one message. Either way a message
 * over `maxLength` (default WhatsApp's 4096) is cut at paragraph, then sentence, then word
 * boundaries, a character (never half a surrogate pair) only as the last resort.
 */
export function splitMessages(
  text: string,
  options: { split: boolean; maxLength?: number },
): string[] {
  const max = options.maxLength ?? WHATSAPP_TEXT_LIMIT;
  if (max < 1) throw new RangeError("maxLength must be at least 1");
  if (!options.split) return tidy(pack(text, max));
  return tidy(byParagraph(text)).flatMap((paragraph) => tidy(pack(paragraph, max)));
}

// ---- signing ----

/**
 * The signature put before each message when `signMessages` is on: the agent name in WhatsApp bold
 * and a colon, `*Ana*: `. Characters that would break the bold (`*`, `_`, `~`, backticks,
 * newlines) are left out of the name; an empty name signs nothing.
 */
export function signaturePrefix(agentName: string): string {
  const name = agentName.replace(/[*_~`]/g, "").replace(/\s+/g, " ").trim();
  return name ? `*${name}*: ` : "";
}

/**
 * The agent's flags applied to a reply: emoji stripped when `enabledEmoji` is false, split as
 * splitMessages says, each message signed when `signMessages` is on, every message within
 * `maxLength` with its signature. An empty reply (all tags removed) gives no message.
 */
export function shapeReply(
  reply: string,
  agent: ShapingFlags & { name: string },
  options: { maxLength?: number } = {},
): string[] {
  const max = options.maxLength ?? WHATSAPP_TEXT_LIMIT;
  const prefix = agent.signMessages ? signaturePrefix(agent.name) : "";
  // A name so long that nothing fits after it signs nothing rather than sending empty messages.
  const sign = prefix.length < max / 2 ? prefix : "";
  const text = agent.enabledEmoji ? reply : stripEmoji(reply);
  return splitMessages(text, { split: agent.splitMessages, maxLength: max - sign.length }).map((m) =>
    sign + m
  );
}
