/**
 * The read planner: a list of roots (reads of capabilities, or rows just written) and what to show
 * of each becomes ONE SQL statement whose single row is the whole answer as JSON text, built by
 * PostgreSQL: nested records and arrays of records (correlated subqueries, a LATERAL sub-select per
 * object) turned into JSON once by `to_json`.
 * The text goes to the client as it is; JS touches it only when a field must be presented
 * (opened or masked), which SQL cannot do.
 *
 * - Access: `authorize` for every root before any SQL; the workspace is a condition of the root
 *   view's row, and every other row is reached through relations from it, so an id of another
 *   workspace answers exactly as an unknown id.
 * - Pages: keyset conditions on (sort key, id) from shared/pagination.ts cursors and a LIMIT per
 *   parent row, so a nested page never reads rows it does not show (one extra row says "more").
 * - Budget: every row the statement reads for the answer adds a lower bound of its bytes to a
 *   running count, and the statement stops once past the request's allowance (Compiler.spend), so
 *   a refused read costs PostgreSQL about the budget, not the whole answer.
 * - Plans: the SQL text depends only on the shape of the roots (kinds, fields, which page
 *   arguments are present) and the actor's role; it is built once per shape and cached. Ids, the
 *   workspace, sizes and cursors are bind parameters; identifiers come only from the views.
 */
import type { ActorContext } from "../context.ts";
import type { ReadCapability } from "../shared/capability.ts";
import type { FieldSpec, Order, View } from "../shared/view.ts";
import { viewOf } from "./views.ts";
import type { EdgePart, JsonPart, PageRequest, PageShape, Selection } from "./selection.ts";
import { authorize, can } from "../auth/permissions.ts";
import { AppError, notFound } from "../shared/errors.ts";
import {
  badCursor,
  decodeCursor,
  DEFAULT_PAGE,
  isRowId,
  type Keyset,
  MAX_PAGE,
} from "../shared/pagination.ts";
import { LIMITS } from "../graphql/limits.ts";
import { stoppedWhenClientGone, TEXT_AS_BYTES } from "../db/pool.ts";
import { fastPathOf } from "../db/fast_path.ts";
import { allowance, charge, INLINE_BYTES, isCutOff, reserve, responseTooLarge } from "./budget.ts";
import { concatBytes } from "../shared/bytes.ts";

/** What to read: one row of a capability, a page of it, or a row just written (already scoped). */
export type Root =
  | { key: string; read: ReadCapability; params: Readonly<Record<string, string>>; selection: Selection }
  | {
    key: string;
    read: ReadCapability;
    params: Readonly<Record<string, string>>;
    page: PageRequest;
    shape: PageShape;
  }
  | { key: string; view: View; id: string; selection: Selection };

export interface Answer {
  /** The JSON of `{ [root key]: value }` as UTF-8, in the roots' order, between runReads' `around`. */
  bytes: Uint8Array;
  /** The same as text (decoded when first asked for). */
  readonly json: string;
  /** Roots whose path named no row: their value is null, and this is the 404 to report. */
  missing: Map<string, AppError>;
}

/** A page's arguments, checked: how many rows, which way, from where. */
export interface PageWindow {
  size: number;
  backward: boolean;
  cursor?: Keyset;
  hasAfter: boolean;
  hasBefore: boolean;
  hasLast: boolean;
}

const invalid = (message: string) => new AppError("VALIDATION_FAILED", 400, message);

/**
 * Relay's arguments as @pothos/plugin-prisma reads them (same refusals, same default and maximum
 * rule): `first`/`last` at most `max`, default DEFAULT_PAGE; `last` or `before` pages backwards.
 */
export function pageWindow(req: PageRequest, max: number): PageWindow {
  const { first, last, after, before } = req;
  if (first != null && first < 0) throw invalid('Argument "first" must be a non-negative integer');
  if (last != null && last < 0) throw invalid('Argument "last" must be a non-negative integer');
  if (before && after) throw invalid('Arguments "before" and "after" are not supported at the same time');
  if (before != null && first != null) {
    throw invalid('Arguments "before" and "first" are not supported at the same time');
  }
  if (after != null && last != null) {
    throw invalid('Arguments "after" and "last" are not supported at the same time');
  }
  const size = Math.min(first ?? last ?? DEFAULT_PAGE, max);
  const raw = before ?? after;
  let cursor: Keyset | undefined;
  if (raw != null) {
    cursor = decodeCursor(raw);
    if (!cursor) throw badCursor();
  }
  return {
    size,
    backward: before != null || last != null,
    cursor,
    hasAfter: after != null,
    hasBefore: before != null,
    hasLast: last != null,
  };
}

/** The largest page a shape may ask for: GraphQL's limit, or REST's. */
export const maxPageOf = (shape: PageShape) => shape.kind === "connection" ? LIMITS.maxPageSize : MAX_PAGE;

// ---------------------------------------------------------------------------------------------
// Presented fields. SQL wraps the stored value as `["\u0000<n>", value]`: PostgreSQL text cannot
// hold NUL and jsonb refuses \u0000, so no stored value serializes to a string starting with
// that escape: an escape `\u0000` right after a quote is a marker (see nextMark). The answer is
// searched and copied as UTF-8 bytes, as PostgreSQL sent it (db/pool.ts TEXT_AS_BYTES): no byte of
// a multi-byte character is ASCII, so a quote, a bracket or a backslash byte is that character.

const presenters: NonNullable<FieldSpec["present"]>[] = [];
const presenterIds = new Map<NonNullable<FieldSpec["present"]>, number>();
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** The marker's opening: a quote, then the escape `\u0000`. */
const MARK_LENGTH = 7;
const ESCAPED_NUL = encoder.encode("\\u0000");
const [QUOTE, BACKSLASH, COMMA, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE, SPACE] = [
  ...'"\\,[]{} ',
].map((c) => c.charCodeAt(0));

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

function presenterId(present: NonNullable<FieldSpec["present"]>): number {
  let id = presenterIds.get(present);
  if (id === undefined) {
    id = presenters.push(present) - 1;
    presenterIds.set(present, id);
  }
  return id;
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

// ---------------------------------------------------------------------------------------------
// SQL text. `q` quotes identifiers (from the views only), `lit` string constants (response keys).

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;
const idColumn = (view: View) => view.fields.id?.column ?? "id";
const tableOf = (view: View) => {
  if (!view.table) throw new Error(`View ${view.name} has no table`);
  return q(view.table);
};

/**
 * An answer's value in SQL: a scalar expression (text, number, json...), or an object whose keys
 * map to values. Objects become PostgreSQL records whose column names are the keys, and the whole
 * answer is turned into JSON once, by `to_json` at the top: PostgreSQL then writes every nested
 * record and array straight into one buffer, where JSON built level by level (json_build_object,
 * json_agg) is copied again into each parent (about a sixth of the nested bench's statement).
 */
type Value = string | Obj;
interface Obj {
  pairs: [string, Value][];
}

/** json_build_object takes at most 100 arguments: larger objects are joined from chunks. */
function jsonObject(pairs: ReadonlyArray<readonly [string, string]>): string {
  if (pairs.length === 0) return `'{}'::json`;
  const chunks: string[] = [];
  for (let i = 0; i < pairs.length; i += 50) {
    chunks.push(`json_build_object(${pairs.slice(i, i + 50).map(([k, v]) => `${lit(k)}, ${v}`).join(", ")})`);
  }
  if (chunks.length === 1) return chunks[0];
  const last = chunks.length - 1;
  const parts = chunks.map((c, i) => {
    const text = `${c}::text`;
    if (i === 0) return `left(${text}, -1)`;
    return i === last ? `substr(${text}, 2)` : `substr(left(${text}, -1), 2)`;
  });
  return `(${parts.join(" || ', ' || ")})::json`;
}

const utf8 = new TextEncoder();

/** How a page's rows are ordered: by (key, id), ascending or descending. `key` is a DateTime field. */
interface Sort {
  order: Order;
  key: string;
}

/** A connection's order: its declared sort key (createdAt unless named) and direction. */
const sortOf = (rel: { order: Order; sortKey?: string }): Sort => ({
  order: rel.order,
  key: rel.sortKey ?? "createdAt",
});

/** The column of a sort key: its field's, or a column of that name the view does not show (Membership.createdAt). */
function sortColumn(view: View, sort: Sort): string {
  const spec = view.fields[sort.key];
  if (spec && (spec.sql || spec.type !== "DateTime" || spec.nullable)) {
    throw new Error(`${view.name}.${sort.key} is not a stored, non-null DateTime to sort by`);
  }
  return q(spec?.column ?? sort.key);
}

/** The opaque cursor of shared/pagination.ts (base64url of `k1.<ms>.<id>`), computed in SQL. */
const cursorSql = (a: string, view: View, sort: Sort) =>
  `rtrim(translate(encode(convert_to('k1.' || (extract(epoch FROM ${a}.${
    sortColumn(view, sort)
  }) * 1000)::bigint || '.' || ` +
  `${a}.${q(idColumn(view))}, 'UTF8'), 'base64'), '+/' || chr(10), '-_'), '=')`;

/**
 * Where the statement names its cut-off (the request's byte allowance): a bind parameter numbered
 * once the plan's own are known (see compile). No identifier or response key can hold U+0001.
 */
const CUT_OFF = "\u0001cut-off\u0001";

/** Stored strings longer than this (in bytes) count their JSON's length rather than their own. */
const EXACT_FROM = 4096;

/** The transaction-local setting in which a read statement adds up what its rows count. */
const SPENT = "'switchboard.read_bytes'";

class Compiler {
  readonly values: unknown[] = [];
  private aliases = 0;
  /**
   * Per row alias: SQL terms (and bytes) adding up to at most what that row's values take in the
   * answer's JSON (its own fields and keys; the rows of its relations count themselves).
   */
  private readonly sizes = new Map<string, string[]>();
  constructor(readonly ctx: ActorContext) {}

  /** Counts `term` (SQL of an integer, or a number of bytes) for the row aliased `a`. */
  count(a: string, term: string | number): void {
    const terms = this.sizes.get(a);
    if (terms) terms.push(String(term));
    else this.sizes.set(a, [String(term)]);
  }

  /**
   * A condition on the row aliased `a`, true for every row, evaluated before the row's values are
   * built: it adds what the row counted (then forgotten, so a row shown twice counts twice) to the
   * statement's running total, and stops the statement with SQLSTATE 54SB1 once that total passes
   * the cut-off. The total is a lower bound of the answer's bytes (keys, stored text as stored, a
   * long text's JSON): a refused read costs PostgreSQL about the budget in rows read and built, and
   * never builds the JSON. (About a microsecond a row: a setting read and written.)
   */
  spend(a: string): string {
    const terms = this.sizes.get(a) ?? [];
    this.sizes.delete(a);
    const constant = terms.filter((t) => /^\d+$/.test(t)).reduce((n, t) => n + Number(t), 2);
    const sum = [...terms.filter((t) => !/^\d+$/.test(t)), String(constant)].join(" + ");
    const spent = `coalesce(nullif(current_setting(${SPENT}, true), ''), '0')::bigint`;
    return `CASE WHEN set_config(${SPENT}, (${spent} + ${sum})::text, true)::bigint <= ${CUT_OFF} ` +
      `THEN true ELSE switchboard_read_over_budget(${spent}) END`;
  }

  /** A bind parameter of `type`; without one PostgreSQL gives it the type of what it is compared with. */
  param(value: unknown, type?: string): string {
    this.values.push(value);
    return type ? `$${this.values.length}::${type}` : `$${this.values.length}`;
  }

  alias(): string {
    return `t${this.aliases++}`;
  }

  field(view: View, a: string, name: string, of?: readonly JsonPart[]): string {
    const spec = view.fields[name];
    if (!spec) throw new Error(`${view.name} has no field ${name}`);
    let sql = spec.sql ? spec.sql(a) : `${a}.${q(spec.column ?? name)}`;
    // A stored string's bytes: its length, from the stored value's header (not detoasted); a long
    // one's JSON, escapes included (each control character takes 6 bytes there), so that it counts
    // what it costs to build.
    if (!spec.sql && !spec.list && !of && (spec.type === "String" || spec.type === "ID")) {
      this.count(
        a,
        `coalesce(CASE WHEN octet_length(${sql}) > ${EXACT_FROM} THEN octet_length(to_json(${sql})::text) ` +
          `ELSE octet_length(${sql}) END, 0)`,
      );
    }
    if (of) sql = this.jsonPick(sql, of, spec.list === true);
    if (spec.type === "DateTime") {
      sql = `to_char(${sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    }
    const p = spec.present;
    if (p && !(p.unless && can(this.ctx.actor, p.unless))) {
      const marked = `json_build_array('"\\u0000${presenterId(p)}"'::json, ${sql})`;
      sql = p.mayChange
        ? `CASE WHEN ${p.mayChange(this.ctx, sql)} THEN ${marked} ELSE to_json(${sql}) END`
        : marked;
    }
    return sql;
  }

  /**
   * The keys `of` of a jsonb object (or of each object of a jsonb array, in order), under their
   * response keys: what a GraphQL selection of a JSON object type asks for.
   */
  jsonPick(sql: string, of: readonly JsonPart[], list: boolean): string {
    const [x, e, o] = [this.alias(), this.alias(), this.alias()];
    const pick: Obj = {
      pairs: of.map((p) => [p.key, "field" in p ? `${e}->${lit(p.field)}` : `${lit(p.constant)}::text`]),
    };
    const items: string[] = [];
    const top = this.build(pick, items);
    const beside = items.map((item) => `, ${item}`).join("");
    if (!list) return `(SELECT ${top} FROM (SELECT ${sql} AS ${e}) ${x}${beside} WHERE ${e} IS NOT NULL)`;
    return `ARRAY(SELECT ${top} FROM jsonb_array_elements(${sql}) WITH ORDINALITY ${x}(${e}, ${o})${beside} ` +
      `ORDER BY ${o})`;
  }

  /**
   * The SQL of `value` in a query whose FROM list gets `items`: each object is a LATERAL sub-select
   * whose one row is the record (columns named by the keys), after those of its own objects, so the
   * planner flattens them into row constructors. Keys PostgreSQL would cut (names are at most 63
   * bytes) and empty objects are built with json_build_object instead.
   */
  build(value: Value, items: string[]): string {
    if (typeof value === "string") return value;
    const { pairs } = value;
    if (pairs.length === 0 || pairs.some(([k]) => utf8.encode(k).length > 63)) {
      return jsonObject(pairs.map(([k, v]) => [k, this.build(v, items)] as const));
    }
    const columns = pairs.map(([k, v]) => `${this.build(v, items)} AS ${q(k)}`);
    const n = this.alias();
    items.push(`LATERAL (SELECT ${columns.join(", ")}) ${n}`);
    return n;
  }

  /** `value` as one scalar expression (an object as a sub-select of its record). */
  scalar(value: Value): string {
    const items: string[] = [];
    const top = this.build(value, items);
    return items.length === 0 ? top : `(SELECT ${top} FROM ${items.join(", ")})`;
  }

  /** The object of `selection` for the row aliased `a` of `view`. */
  obj(view: View, a: string, selection: Selection): Obj {
    return { pairs: this.pairs(view, a, selection) };
  }

  /** The keys of `selection` and their values, in the selection's order. */
  pairs(view: View, a: string, selection: Selection): [string, Value][] {
    const pairs: [string, Value][] = [];
    for (const s of selection) {
      // `"key":` and a comma or brace, and at least two bytes of value.
      this.count(a, utf8.encode(s.key).length + 6);
      if ("field" in s) pairs.push([s.key, this.field(view, a, s.field, s.of)]);
      else if ("constant" in s) pairs.push([s.key, `${lit(s.constant)}::text`]);
      else pairs.push([s.key, this.relation(view, a, s)]);
    }
    return pairs;
  }

  /**
   * Values built beside each row of a page's rows (aliased `b`): `beside` gives how the rows' query
   * names a value, `from` wraps the rows' FROM item `source` (aliased `b`) with what they need.
   */
  rowValues(b: string) {
    const items: string[] = [];
    const columns: string[] = [];
    return {
      beside: (value: Value): string => {
        const n = this.alias();
        columns.push(`${this.build(value, items)} AS ${n}`);
        return `${b}.${n}`;
      },
      from: (source: string): string =>
        columns.length === 0
          ? source
          : `(SELECT ${b}.*, ${columns.join(", ")} FROM ${source}${
            items.map((i) => `, ${i}`).join("")
          }) ${b}`,
    };
  }

  relation(
    view: View,
    a: string,
    s: { relation: string; selection: Selection } | { relation: string; page: PageRequest; shape: PageShape },
  ): Value {
    const rel = view.relations?.[s.relation];
    if (!rel) throw new Error(`${view.name} has no relation ${s.relation}`);
    const target = rel.view();
    if ("page" in s) {
      if (rel.kind !== "connection") throw new Error(`${view.name}.${s.relation} is not a connection`);
      const parentId = `${a}.${q(idColumn(view))}`;
      return this.page(
        target,
        sortOf(rel),
        (b) => `${b}.${q(rel.foreignKey)} = ${parentId}`,
        s.page,
        s.shape,
      );
    }
    switch (rel.kind) {
      case "embedded":
        return this.obj(target, a, s.selection);
      case "object": {
        const b = this.alias();
        const value = this.scalar(this.obj(target, b, s.selection));
        return `(SELECT ${value} FROM ${tableOf(target)} ${b} ` +
          `WHERE ${b}.${q(idColumn(target))} = ${a}.${q(rel.localKey)} AND ${this.spend(b)})`;
      }
      case "list": {
        const b = this.alias();
        const rows = this.rowValues(b);
        const node = rows.beside(this.obj(target, b, s.selection));
        return `ARRAY(SELECT ${node} FROM ${
          rows.from(
            `(SELECT ${b}.* FROM ${tableOf(target)} ${b} WHERE ${b}.${q(rel.foreignKey)} = ${a}.${
              q(idColumn(view))
            } AND ${this.spend(b)}) ${b}`,
          )
        } ORDER BY ${b}.${q(rel.orderBy)}, ${b}.${q(idColumn(target))})`;
      }
      case "connection":
        // A connection without page arguments (REST's field lists never name one).
        return this.page(
          target,
          sortOf(rel),
          (b) => `${b}.${q(rel.foreignKey)} = ${a}.${q(idColumn(view))}`,
          {},
          { kind: "array", node: s.selection },
        );
    }
  }

  /**
   * A page of `view`'s rows matching `where`, by (sort key, id) in its order. Parameters are taken
   * in this order (see bindPage): cursor time, cursor id, size.
   */
  page(view: View, sort: Sort, where: (b: string) => string, req: PageRequest, shape: PageShape): string {
    const b = this.alias();
    const table = tableOf(view);
    const id = `${b}.${q(idColumn(view))}`;
    const key = `${b}.${sortColumn(view, sort)}`;
    const { order } = sort;
    if (shape.kind === "array") {
      const dir = order === "asc" ? "ASC" : "DESC";
      const rows = this.rowValues(b);
      const node = rows.beside(this.obj(view, b, shape.node));
      return `ARRAY(SELECT ${node} FROM ${
        rows.from(`(SELECT ${b}.* FROM ${table} ${b} WHERE ${where(b)} AND ${this.spend(b)}) ${b}`)
      } ORDER BY ${key} ${dir}, ${id} ${dir})`;
    }
    const w = pageWindow(req, maxPageOf(shape));
    const ascending = (order === "asc") !== w.backward;
    const dir = ascending ? "ASC" : "DESC";
    let keyset = "";
    if (w.cursor) {
      // Milliseconds rather than an ISO string: years past 9999 are cursors' too (no 500 for them).
      const at = `('epoch'::timestamptz + ${
        this.param(w.cursor.at.getTime(), "bigint")
      } * interval '1 millisecond')`;
      const cid = this.param(w.cursor.id, "text");
      keyset = ` AND (${key}, ${id}) ${ascending ? ">" : "<"} (${at}, ${cid})`;
    }
    const size = this.param(w.size, "int");
    // The declared filters narrow the rows like the keyset does (after the size: see bindPage).
    keyset += this.filters(view, b, req);
    const orderBy = `${key} ${dir}, ${id} ${dir}`;
    const edge = (edges: readonly EdgePart[]): Obj => ({
      pairs: edges.map((e): [string, Value] => {
        // An edge's keys count for its row (a cursor takes at least 16 bytes).
        this.count(b, utf8.encode(e.key).length + ("cursor" in e ? 22 : 6));
        if ("constant" in e) return [e.key, `${lit(e.constant)}::text`];
        if ("cursor" in e) return [e.key, cursorSql(b, view, sort)];
        return [e.key, this.obj(view, b, e.node)];
      }),
    });

    // (A page without edges takes the counted form below, which names every bound parameter.)
    if (shape.kind === "connection" && !counted(w, shape) && shape.parts.some((p) => "edges" in p)) {
      // Only the rows are shown: exactly `size` of them, no numbering; their values built beside them.
      const out = order === "asc" ? "ASC" : "DESC";
      const page = `(SELECT ${b}.* FROM ${table} ${b} WHERE ${where(b)}${keyset} ORDER BY ${orderBy} ` +
        `LIMIT ${size}) ${b}`;
      // Counted above the LIMIT (the rows shown); named once their values were compiled (what they count).
      const source = () => `(SELECT ${b}.* FROM ${page} WHERE ${this.spend(b)}) ${b}`;
      const parts = shape.parts.map((p): [string, Value] => {
        if ("constant" in p) return [p.key, `${lit(p.constant)}::text`];
        if ("edges" in p) {
          const rows = this.rowValues(b);
          const value = rows.beside(edge(p.edges));
          return [
            p.key,
            `ARRAY(SELECT ${value} FROM ${rows.from(source())} ORDER BY ${key} ${out}, ${id} ${out})`,
          ];
        }
        // Decided by the arguments alone (see `counted`).
        return [p.key, {
          pairs: p.pageInfo.map((i): [string, Value] => {
            if ("constant" in i) return [i.key, `${lit(i.constant)}::text`];
            if (i.info === "hasNextPage") return [i.key, w.hasBefore ? "true" : "false"];
            if (i.info === "hasPreviousPage") return [i.key, w.hasAfter ? "true" : "false"];
            return [i.key, "NULL::text"];
          }),
        }];
      });
      return this.scalar({ pairs: parts });
    }

    // One more row than shown tells whether there is a next page; `rn$` numbers them in fetch order.
    // The values of the rows are built in the aggregates (so not for the extra row); the answer's
    // record is built over the aggregates' one row `g`.
    const g = this.alias();
    const aggregates: string[] = [];
    const aggregate = (sql: string) => {
      aggregates.push(`${sql} AS a${aggregates.length}`);
      return `${g}.a${aggregates.length - 1}`;
    };
    const kept = `FILTER (WHERE ${b}."rn$" <= ${size})`;
    const rows = (value: Value) =>
      aggregate(
        `COALESCE(array_agg(${this.scalar(value)} ORDER BY ${b}."rn$" ${
          w.backward ? "DESC" : "ASC"
        }) ${kept}, '{}')`,
      );
    const full = `(count(*) > ${size})`;
    const cursorAt = (rn: string) =>
      `min(${cursorSql(b, view, sort)}) FILTER (WHERE ${b}."rn$" = ${rn} AND ${b}."rn$" <= ${size})`;
    const lastKept = `least(${b}."n$", ${size})`;
    const first = w.backward ? lastKept : "1";
    const last = w.backward ? "1" : lastKept;
    let answer: Obj;
    if (shape.kind === "rest") {
      answer = {
        pairs: [
          ["data", rows(this.obj(view, b, shape.node))],
          ["nextCursor", aggregate(`CASE WHEN ${full} THEN ${cursorAt(size)} END`)],
        ],
      };
    } else {
      answer = {
        pairs: shape.parts.map((p): [string, Value] => {
          if ("constant" in p) return [p.key, `${lit(p.constant)}::text`];
          if ("edges" in p) return [p.key, rows(edge(p.edges))];
          return [p.key, {
            pairs: p.pageInfo.map((i): [string, Value] => {
              if ("constant" in i) return [i.key, `${lit(i.constant)}::text`];
              switch (i.info) {
                case "hasNextPage":
                  return [i.key, w.hasBefore ? "true" : w.hasLast ? "false" : aggregate(full)];
                case "hasPreviousPage":
                  return [i.key, w.hasAfter ? "true" : w.backward ? aggregate(full) : "false"];
                case "startCursor":
                  return [i.key, aggregate(cursorAt(first))];
                case "endCursor":
                  return [i.key, aggregate(cursorAt(last))];
              }
            }),
          }];
        }),
      };
    }
    const items: string[] = [];
    const top = this.build(answer, items);
    // The rows shown count (not the extra row), named once their values were compiled.
    const numbered =
      `(SELECT ${b}.*, count(*) OVER () AS "n$" FROM (SELECT ${b}.*, row_number() OVER (ORDER BY ${orderBy}) ` +
      `AS "rn$" FROM ${table} ${b} WHERE ${
        where(b)
      }${keyset} ORDER BY ${orderBy} LIMIT ${size} + 1) ${b} WHERE ${b}."rn$" > ${size} OR ${
        this.spend(b)
      }) ${b} GROUP BY ()`;
    // (GROUP BY (): one row even when there are no rows, or no aggregate, `pageInfo { __typename }`.)
    return `(SELECT ${top} FROM (SELECT count(*) AS n${
      aggregates.map((a) => `, ${a}`).join("")
    } FROM ${numbered}) ${g}${items.map((i) => `, ${i}`).join("")})`;
  }

  /**
   * The page's equality filters, in field-name order (bindPage binds them so). The value takes the
   * column's own type (an enum), so an index on the column serves it; values are checked against
   * the field's enum by both transports before they get here.
   */
  filters(view: View, b: string, req: PageRequest): string {
    let sql = "";
    for (const name of Object.keys(req.where ?? {}).sort()) {
      const spec = view.fields[name];
      if (!spec || spec.sql) throw new Error(`${view.name} has no stored field ${name} to filter on`);
      sql += ` AND ${b}.${q(spec.column ?? name)} = ${this.param(req.where![name])}`;
    }
    return sql;
  }

  /** One root as a FROM item yielding one row: `v` its JSON, `m` the index of its first missing step. */
  root(root: Root, n: number): string {
    const r = `r${n}`;
    if ("view" in root) {
      const b = this.alias();
      const id = this.param(rowId(root.id), "text");
      const value = this.scalar(this.obj(root.view, b, root.selection));
      return `(SELECT (SELECT ${value} FROM ${tableOf(root.view)} ${b} ` +
        `WHERE ${b}.${q(idColumn(root.view))} = ${id} AND ${this.spend(b)}) AS v, NULL::int AS m) ${r}`;
    }
    const { read } = root;
    const from = viewOf(read.from.view);
    const ws = from.workspaceColumn;
    if (!ws) throw new Error(`${read.name}: ${from.name} is not listed under the workspace`);
    const steps = stepsOf(read);
    if (steps.length === 0) {
      // A page of the workspace's rows (agents, members, invites, API tokens): oldest first unless
      // the read says otherwise (approvals: newest first).
      if (!("page" in root)) throw new Error(`${read.name} names no row`);
      const sort = sortOf({ order: read.from.order ?? "asc" });
      const page = this.page(from, sort, (b) => `${b}.${q(ws)} = $1`, root.page, root.shape);
      return `(SELECT ${page} AS v, NULL::int AS m) ${r}`;
    }
    const joins: string[] = [];
    const aliases: string[] = [];
    let view = from;
    for (const [i, step] of steps.entries()) {
      const b = this.alias();
      const id = this.param(rowId(root.params[step.idParam]), "text");
      if (i === 0) {
        joins.push(
          `LEFT JOIN ${tableOf(from)} ${b} ON ${b}.${q(ws)} = $1 AND ${b}.${q(idColumn(from))} = ${id}`,
        );
      } else {
        const rel = view.relations?.[step.relation!];
        if (!rel || (rel.kind !== "connection" && rel.kind !== "list")) {
          throw new Error(`${read.name}: ${view.name}.${step.relation} is not a relation to many`);
        }
        const target = rel.view();
        const parent = aliases[i - 1];
        joins.push(
          `LEFT JOIN ${tableOf(target)} ${b} ON ${b}.${q(rel.foreignKey)} = ${parent}.${q(idColumn(view))} ` +
            `AND ${b}.${q(idColumn(target))} = ${id}`,
        );
        view = target;
      }
      aliases.push(b);
    }
    const leaf = aliases[aliases.length - 1];
    let value: string;
    if ("page" in root) {
      const tail = read.path?.[read.path.length - 1];
      const rel = tail && !tail.idParam ? view.relations?.[tail.relation] : undefined;
      if (!rel || rel.kind !== "connection") throw new Error(`${read.name} does not end in a connection`);
      const parentId = `${leaf}.${q(idColumn(view))}`;
      value = this.page(
        rel.view(),
        sortOf(rel),
        (b) => `${b}.${q(rel.foreignKey)} = ${parentId}`,
        root.page,
        root.shape,
      );
    } else {
      value = this.scalar(this.obj(view, leaf, root.selection));
    }
    const found = (b: string, v: View) => `${b}.${q(idColumn(v))}`;
    const views = viewsOf(read);
    const missing = aliases.map((b, i) => `WHEN ${found(b, views[i])} IS NULL THEN ${i}`).join(" ");
    // A page's rows count themselves; one row counts here.
    const counted = "page" in root ? "" : ` WHEN ${this.spend(leaf)} THEN ${value}`;
    return `(SELECT CASE WHEN ${found(leaf, view)} IS NULL THEN NULL${
      counted || ` ELSE ${value}`
    } END AS v, ` +
      `CASE ${missing} END AS m FROM (SELECT 1) x ${joins.join(" ")}) ${r}`;
  }
}

/** Does the read name one row (its last step is by id), rather than a page? */
export function isOneRow(read: ReadCapability): boolean {
  const path = read.path ?? [];
  return path.length === 0 ? read.from.idParam !== undefined : path[path.length - 1].idParam !== undefined;
}

/** The view a read's rows are of (the page's rows, or the one row). */
export function viewOfRead(read: ReadCapability): { view: View } {
  let view = viewOf(read.from.view);
  for (const step of read.path ?? []) {
    const next = view.relations?.[step.relation]?.view();
    if (!next) throw new Error(`${read.name}: no relation ${step.relation}`);
    view = next;
  }
  return { view };
}

/**
 * Does the page need its extra row and numbering: REST's nextCursor, a page-info cursor, or a
 * hasNextPage / hasPreviousPage that the arguments alone do not decide?
 */
function counted(w: PageWindow, shape: PageShape): boolean {
  if (shape.kind !== "connection") return true;
  return shape.parts.some((p) =>
    "pageInfo" in p && p.pageInfo.some((i) => {
      if (!("info" in i)) return false;
      if (i.info === "hasNextPage") return !w.hasBefore && !w.hasLast;
      if (i.info === "hasPreviousPage") return !w.hasAfter && w.backward;
      return true;
    })
  );
}

/**
 * The 404 of a read whose step `at` (of stepsOf) names no row. As the services have always
 * answered: the agent and the row under it are one lookup, so an unknown agent of
 * `intent(agentId, id)` is "Intent not found.", while a page under an unknown agent
 * (`intents(agentId)`) is "Agent not found.".
 */
export function notFoundAt(read: ReadCapability, at: number): AppError {
  const steps = stepsOf(read);
  return notFound(read.params[steps[at === 0 && steps.length > 1 ? 1 : at].idParam]);
}

/** The steps by id of a read: its `from` row (when by id), then each path step by id. */
export function stepsOf(read: ReadCapability): { relation?: string; idParam: string }[] {
  if (!read.from.idParam) return [];
  const steps: { relation?: string; idParam: string }[] = [{ idParam: read.from.idParam }];
  for (const step of read.path ?? []) {
    if (step.idParam) steps.push({ relation: step.relation, idParam: step.idParam });
  }
  return steps;
}

/** The view of each step by id. */
function viewsOf(read: ReadCapability): View[] {
  const views = [viewOf(read.from.view)];
  for (const step of read.path ?? []) {
    if (!step.idParam) break;
    const rel = views[views.length - 1].relations?.[step.relation];
    if (!rel) throw new Error(`${read.name}: no relation ${step.relation}`);
    views.push(rel.view());
  }
  return views;
}

/** Something that cannot be an id (NUL, 10 KB) names no row, and must not reach PostgreSQL as text. */
const rowId = (value: unknown) => typeof value === "string" && isRowId(value) ? value : "";

// ---------------------------------------------------------------------------------------------
// Binding: the values of a cached plan, in the order the Compiler takes them, and the shape key.

function bindSelection(selection: Selection, key: string[], values: unknown[]) {
  for (const s of selection) {
    if ("field" in s) {
      key.push(`f${s.key}:${s.field}`);
      if (s.of) {
        key.push(`{${s.of.map((p) => "field" in p ? `f${p.key}:${p.field}` : `c${p.key}:${p.constant}`)}}`);
      }
    } else if ("constant" in s) key.push(`c${s.key}:${s.constant}`);
    else if ("page" in s) {
      key.push(`p${s.key}:${s.relation}(`);
      bindPage(s.page, s.shape, key, values);
      key.push(")");
    } else {
      key.push(`r${s.key}:${s.relation}(`);
      bindSelection(s.selection, key, values);
      key.push(")");
    }
  }
}

function bindPage(req: PageRequest, shape: PageShape, key: string[], values: unknown[]) {
  if (shape.kind === "array") {
    key.push("array(");
    bindSelection(shape.node, key, values);
    key.push(")");
    return;
  }
  const w = pageWindow(req, maxPageOf(shape));
  key.push(
    `${w.backward ? "b" : "f"}${w.cursor ? "c" : ""}${w.hasAfter ? "A" : ""}${w.hasBefore ? "B" : ""}${
      w.hasLast ? "L" : ""
    }`,
  );
  if (w.cursor) values.push(w.cursor.at.getTime(), w.cursor.id);
  values.push(w.size);
  for (const name of Object.keys(req.where ?? {}).sort()) {
    key.push(`w:${name}`);
    values.push(req.where![name]);
  }
  if (shape.kind === "rest") {
    key.push("rest(");
    bindSelection(shape.node, key, values);
    key.push(")");
    return;
  }
  for (const p of shape.parts) {
    if ("constant" in p) key.push(`C${p.key}:${p.constant}`);
    else if ("pageInfo" in p) {
      key.push(`I${p.key}(${p.pageInfo.map((i) => `${i.key}:${"info" in i ? i.info : `'${i.constant}`}`)})`);
    } else {
      key.push(`E${p.key}(`);
      for (const e of p.edges) {
        if ("constant" in e) key.push(`C${e.key}:${e.constant}`);
        else if ("cursor" in e) key.push(`K${e.key}`);
        else {
          key.push(`N${e.key}(`);
          bindSelection(e.node, key, values);
          key.push(")");
        }
      }
      key.push(")");
    }
  }
}

function bind(ctx: ActorContext, roots: readonly Root[]): { key: string; values: unknown[] } {
  const key: string[] = [ctx.actor.role];
  const values: unknown[] = [ctx.actor.workspaceId];
  for (const root of roots) {
    if ("view" in root) {
      key.push(`W${root.key}:${root.view.name}(`);
      values.push(rowId(root.id));
      bindSelection(root.selection, key, values);
    } else {
      key.push(`R${root.key}:${root.read.name}(`);
      for (const step of stepsOf(root.read)) values.push(rowId(root.params[step.idParam]));
      if ("page" in root) bindPage(root.page, root.shape, key, values);
      else bindSelection(root.selection, key, values);
    }
    key.push(")");
  }
  return { key: key.join("\u0001"), values };
}

function compile(ctx: ActorContext, roots: readonly Root[]): { sql: string; values: unknown[] } {
  const c = new Compiler(ctx);
  c.param(ctx.actor.workspaceId, "text");
  const from = roots.map((root, n) => c.root(root, n));
  const items: string[] = [];
  const data = c.build({ pairs: roots.map((root, n) => [root.key, `r${n}.v`]) }, items);
  const missing = roots.map((_, n) => `r${n}.m AS m${n}`).join(", ");
  const outer = roots.map((_, n) => `a.m${n}`).join(", ");
  // The last two parameters (bound by fetchBounded): the cut-off, the request's allowance, which the
  // rows' count stops the statement at while it builds them (Compiler.spend); and the byte budget
  // of this round trip: PostgreSQL measures the JSON it built and sends it only within it (OFFSET 0
  // keeps it built once, not per reference). The running count is reset once the answer is built,
  // for a next read in the same transaction.
  const cutOff = `$${c.values.length + 1}::bigint`;
  const budget = `$${c.values.length + 2}::int`;
  // `$1` (the workspace) is named once in the select list too: a request of rows just written
  // alone does not use it, and PostgreSQL refuses a parameter it cannot type.
  const sql = `SELECT CASE WHEN octet_length(a.data) <= ${budget} THEN a.data END AS data, ` +
    `octet_length(a.data) AS bytes, ${outer}, set_config(${SPENT}, '', true) AS "spent$", ${cutOff} AS "cut$" ` +
    `FROM (SELECT to_json(${data})::text AS data, $1::text AS ws, ${missing} FROM ${
      [...from, ...items].join(", ")
    } OFFSET 0) a`;
  return { sql: sql.replaceAll(CUT_OFF, cutOff), values: c.values };
}

const MAX_PLANS = 2_000;
const plans = new Map<string, string>();

/** The statement of `roots` and its values (the plan cached by shape). */
export function plan(ctx: ActorContext, roots: readonly Root[]): { sql: string; values: unknown[] } {
  const { key, values } = bind(ctx, roots);
  let sql = plans.get(key);
  if (sql === undefined) {
    const compiled = compile(ctx, roots);
    // The binder and the compiler walk the roots in the same order; a difference is a bug here.
    if (JSON.stringify(compiled.values) !== JSON.stringify(values)) {
      throw new Error("read planner: bound values differ from the compiled plan's");
    }
    sql = compiled.sql;
    if (plans.size >= MAX_PLANS) plans.clear();
    plans.set(key, sql);
  }
  return { sql, values };
}

/** Number of cached plans (tests). */
export const cachedPlans = () => plans.size;

/** `data` is bytes on the pool's fast path (TEXT_AS_BYTES), text through Prisma (in a transaction). */
type Row =
  & { data: Uint8Array | string | null; bytes: number }
  & Record<string, number | null | string | Uint8Array>;

/**
 * The statement's one row within the request's byte allowance: a small answer in one round trip,
 * a large one measured first, then fetched once its bytes are reserved in the process's budget.
 * `use` turns the text into what is kept, while the bytes are still reserved.
 */
async function fetchBounded<T>(
  ctx: ActorContext,
  sql: string,
  values: unknown[],
  use: (row: Row & { data: Uint8Array }) => T,
): Promise<T> {
  const limits = ctx.config.reads;
  const allowed = allowance(limits.maxResponseBytes);
  let budget = Math.min(allowed, INLINE_BYTES);
  for (let attempt = 0; attempt < 3; attempt++) {
    const release = budget > INLINE_BYTES ? await reserve(limits, budget) : undefined;
    try {
      const fast = fastPathOf(ctx.db);
      const [row] = await stoppedWhenClientGone(() =>
        fast
          ? fast.rows<Row>({ text: sql, values: [...values, allowed, budget], types: TEXT_AS_BYTES })
          : ctx.db.$queryRawUnsafe<Row[]>(sql, ...values, allowed, budget)
      ).catch((error) => {
        throw isCutOff(error) ? responseTooLarge(undefined, limits.maxResponseBytes) : error;
      });
      if (row.data !== null) {
        charge(row.bytes);
        return use({ ...row, data: typeof row.data === "string" ? encoder.encode(row.data) : row.data });
      }
      if (row.bytes > allowed) throw responseTooLarge(row.bytes, limits.maxResponseBytes);
      // Room for some growth before the second run (rows may change in between).
      budget = Math.min(allowed, row.bytes + (row.bytes >> 3));
    } finally {
      release?.();
    }
  }
  throw responseTooLarge(budget, limits.maxResponseBytes);
}

/**
 * Reads `roots` for the actor in one statement. Refuses (403) before anything is read when the
 * actor may not perform a root's read. `around` is UTF-8 to put before and after the answer.
 */
export async function runReads(
  ctx: ActorContext,
  roots: readonly Root[],
  around: readonly [Uint8Array, Uint8Array] = NOTHING_AROUND,
): Promise<Answer> {
  for (const root of roots) if ("read" in root) authorize(ctx.actor, root.read.action);
  const { sql, values } = plan(ctx, roots);
  return await fetchBounded(ctx, sql, values, (row) => answerOf(ctx, roots, row, around));
}

const NOTHING_AROUND = [new Uint8Array(0), new Uint8Array(0)] as const;

function answerOf(
  ctx: ActorContext,
  roots: readonly Root[],
  row: Row & { data: Uint8Array },
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

/** One root's value as JSON text (REST answers, GraphQL resolvers); a missing row throws its 404. */
export async function readOne(ctx: ActorContext, root: Root): Promise<string> {
  const answer = await runReads(ctx, [{ ...root, key: "v" }]);
  const error = answer.missing.get("v");
  if (error) throw error;
  // The object is `{"v":<value>}`: the value is what follows the key.
  return answer.json.slice(answer.json.indexOf(":") + 1, -1).trim();
}
