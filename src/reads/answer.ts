/**
 * The statement's row into the answer: its JSON goes to the client as PostgreSQL wrote it, and JS
 * touches it only where a field must be presented (opened or masked), which SQL cannot do.
 *
 * SQL wraps such a stored value as `["\u0000<n>", value]` (presenterMark): PostgreSQL text cannot
 * hold NUL and jsonb refuses \u0000, so no stored value serializes to a string starting with that
 * escape: an escape `\u0000` right after a quote is a marker (see nextMark). The answer is searched
 * and copied as UTF-8 bytes, as PostgreSQL sent it (db/pool.ts TEXT_AS_BYTES): no byte of a
 * multi-byte character is ASCII, so a quote, a bracket or a backslash byte is that character.
 */
import type { ActorContext } from "../context.ts";
import type { Presenter } from "../shared/view.ts";
import type { AppError } from "../shared/errors.ts";
import { concatBytes } from "../shared/bytes.ts";
import type { Root } from "./selection.ts";
import { notFoundAt } from "./read_path.ts";
import { int, type Sql, sql } from "../shared/sql_fragment.ts";

export interface Answer {
  /** The JSON of `{ [root key]: value }` as UTF-8, in the roots' order, between runReads' `around`. */
  bytes: Uint8Array;
  /** The same as text (decoded when first asked for). */
  readonly json: string;
  /** Roots whose path named no row: their value is null, and this is the 404 to report. */
  missing: Map<string, AppError>;
}

/** The statement's one row: the answer's JSON, and per root `m<n>` the index of its first missing step. */
export type AnswerRow = { data: Uint8Array } & Record<string, number | null | string | Uint8Array>;

const presenters: Presenter[] = [];
const presenterIds = new Map<Presenter, number>();
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** The marker's opening: a quote, then the escape `\u0000`. */
const MARK_LENGTH = 7;
const ESCAPED_NUL = encoder.encode("\\u0000");
const [QUOTE, BACKSLASH, COMMA, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE, SPACE] = [
  ...'"\\,[]{} ',
].map((c) => c.charCodeAt(0));

function presenterId(present: Presenter): number {
  let id = presenterIds.get(present);
  if (id === undefined) {
    id = presenters.push(present) - 1;
    presenterIds.set(present, id);
  }
  return id;
}

/** `value` (SQL) marked for `present` to replace with what the actor may see of it. */
export const presenterMark = (present: Presenter, value: Sql): Sql =>
  sql`json_build_array('"\\u0000${int(presenterId(present))}"'::json, ${value})`;

/**
 * Where the next marker starts (its quote), or -1. It searches for backslashes, which are rare in
 * JSON text, and looks at what follows and precedes each.
 */
function nextMark(json: Uint8Array, from: number): number {
  for (let at = json.indexOf(BACKSLASH, from + 1); at >= 0; at = json.indexOf(BACKSLASH, at + 2)) {
    if (json[at - 1] !== QUOTE) continue;
    let i = 1;
    while (i < ESCAPED_NUL.length && json[at + i] === ESCAPED_NUL[i]) i++;
    if (i === ESCAPED_NUL.length) return at - 1;
  }
  return -1;
}

/**
 * What a presenter made of a stored value's text, per app (its config object) and role, as UTF-8:
 * `apply` depends only on those and the stored value (see FieldSpec.present), so the same text is
 * parsed, opened and stringified once. Bounded: cleared when full.
 */
const presentedByApp = new WeakMap<object, Map<string, Uint8Array>>();
const MAX_PRESENTED = 10_000;

function presentValue(ctx: ActorContext, id: string, stored: string): Uint8Array {
  let presented = presentedByApp.get(ctx.config);
  if (!presented) presentedByApp.set(ctx.config, presented = new Map());
  const key = `${id}\u0001${ctx.actor.role}\u0001${stored}`;
  let bytes = presented.get(key);
  if (bytes === undefined) {
    bytes = encoder.encode(JSON.stringify(presenters[Number(id)].apply(ctx, JSON.parse(stored)) ?? null));
    if (presented.size >= MAX_PRESENTED) presented.clear();
    presented.set(key, bytes);
  }
  return bytes;
}

/**
 * `before` + the answer + `after`, with every marked value replaced by what the actor may see of it.
 * Only the marked values are decoded and parsed; the rest is copied, once, into the result (a
 * 250 KB answer costs its headers, not a parse and stringify of the whole text).
 */
function present(
  ctx: ActorContext,
  json: Uint8Array,
  [before, after]: readonly [Uint8Array, Uint8Array],
): Uint8Array {
  const parts: Uint8Array[] = [before];
  let copied = 0;
  for (let at = nextMark(json, 0); at >= 0; at = nextMark(json, copied)) {
    // json_build_array's text: `["\u0000<n>", <value>]`, the marker string at `at`.
    const idEnd = json.indexOf(QUOTE, at + MARK_LENGTH);
    const id = decoder.decode(json.subarray(at + MARK_LENGTH, idEnd));
    const start = skipSpace(json, json.indexOf(COMMA, idEnd) + 1);
    const end = valueEnd(json, start);
    parts.push(json.subarray(copied, at - 1));
    parts.push(presentValue(ctx, id, decoder.decode(json.subarray(start, end))));
    copied = json.indexOf(CLOSE_BRACKET, end) + 1;
  }
  parts.push(json.subarray(copied), after);
  return concatBytes(parts, parts.reduce((n, part) => n + part.length, 0));
}

function skipSpace(text: Uint8Array, i: number): number {
  while (text[i] === SPACE || text[i] === 0x0a || text[i] === 0x09 || text[i] === 0x0d) i++;
  return i;
}

/** Where the JSON value starting at `i` ends (exclusive). */
function valueEnd(text: Uint8Array, i: number): number {
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === QUOTE) {
      for (i++; text[i] !== QUOTE; i++) if (text[i] === BACKSLASH) i++;
      if (depth === 0) return i + 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (c === COMMA || c === SPACE)) return i;
  }
  return i;
}

/** The answer of `roots` from the statement's row: its bytes presented, `around` them, and its 404s. */
export function answerOf(
  ctx: ActorContext,
  roots: readonly Root[],
  row: AnswerRow,
  around: readonly [Uint8Array, Uint8Array],
): Answer {
  const missing = new Map<string, AppError>();
  roots.forEach((root, n) => {
    const step = row[`m${n}`];
    if (step == null || !("read" in root)) return;
    missing.set(root.key, notFoundAt(root.read, Number(step)));
  });
  const bytes = present(ctx, row.data, around);
  let json: string | undefined;
  return {
    bytes,
    get json() {
      return json ??= decoder.decode(bytes);
    },
    missing,
  };
}
