/**
 * The read planner: a list of roots (reads of capabilities, or rows just written) and what to show
 * of each becomes ONE SQL statement whose single row is the whole answer as JSON text, built by
 * PostgreSQL (json_build_object / json_agg over correlated subqueries, as PostGraphile 4 does).
 * The text goes to the client as it is; JS touches it only when a field must be presented
 * (opened or masked), which SQL cannot do.
 *
 * - Access: `authorize` for every root before any SQL; the workspace is a condition of the root
 *   view's row, and every other row is reached through relations from it, so an id of another
 *   workspace answers exactly as an unknown id.
 * - Pages: keyset conditions on (createdAt, id) from shared/pagination.ts cursors and a LIMIT per
 *   parent row, so a nested page never reads rows it does not show (one extra row says "more").
 * - Plans: the SQL text depends only on the shape of the roots (kinds, fields, which page
 *   arguments are present) and the actor's role; it is built once per shape and cached. Ids, the
 *   workspace, sizes and cursors are bind parameters; identifiers come only from the views.
 */
import type { ActorContext } from "../context.ts";
import type { ReadCapability } from "../shared/capability.ts";
import type { FieldSpec, Order, View } from "../shared/view.ts";
import type { ConnectionPart, JsonPart, PageRequest, PageShape, Selection } from "./selection.ts";
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
  /** The JSON text of `{ [root key]: value }`, in the roots' order. */
  json: string;
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
// that escape: an escape `\u0000` right after a quote is a marker (see nextMark).

const presenters: NonNullable<FieldSpec["present"]>[] = [];
const presenterIds = new Map<NonNullable<FieldSpec["present"]>, number>();
const MARK = '"\\u0000';
const ESCAPED_NUL = "\\u0000";

/**
 * Where the next marker starts (its quote), or -1. It searches for the escape alone and then looks
 * back for the quote: JSON text is full of quotes, and a search that starts with one stops at each
 * (about 15 times slower on a 250 KB answer), while backslashes are rare.
 */
function nextMark(json: string, from: number): number {
  for (let at = json.indexOf(ESCAPED_NUL, from + 1); at >= 0; at = json.indexOf(ESCAPED_NUL, at + 1)) {
    if (json.charCodeAt(at - 1) === 0x22) return at - 1;
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
 * The answer with every marked value replaced by what the actor may see of it. Only the marked
 * values are parsed (the rest of the text is copied), so a page of webhooks costs its headers,
 * not a parse and stringify of the whole answer.
 */
function present(ctx: ActorContext, json: string): string {
  let at = nextMark(json, 0);
  if (at < 0) return json;
  const parts: string[] = [];
  let copied = 0;
  while (at >= 0) {
    // json_build_array's text: `["\u0000<n>", <value>]`, the marker string at `at`.
    const idEnd = json.indexOf('"', at + MARK.length);
    const presenter = presenters[Number(json.slice(at + MARK.length, idEnd))];
    const start = skipSpace(json, json.indexOf(",", idEnd) + 1);
    const end = valueEnd(json, start);
    const close = json.indexOf("]", end);
    parts.push(json.slice(copied, at - 1));
    parts.push(JSON.stringify(presenter.apply(ctx, JSON.parse(json.slice(start, end))) ?? null));
    copied = close + 1;
    at = nextMark(json, copied);
  }
  parts.push(json.slice(copied));
  return parts.join("");
}

function skipSpace(text: string, i: number): number {
  while (text[i] === " " || text[i] === "\n" || text[i] === "\t" || text[i] === "\r") i++;
  return i;
}

/** Where the JSON value starting at `i` ends (exclusive). */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; text[i] !== '"'; i++) if (text[i] === "\\") i++;
      if (depth === 0) return i + 1;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (c === "," || c === " ")) return i;
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

/** json_build_object takes at most 100 arguments: larger objects are joined from chunks. */
/**
 * The keys `of` of a jsonb object (or of each object of a jsonb array, in order), under their
 * response keys: what a GraphQL selection of a JSON object type asks for.
 */
function jsonPick(sql: string, of: readonly JsonPart[], list: boolean): string {
  const pick = (e: string) =>
    jsonObject(of.map((p) => [p.key, "field" in p ? `${e}->${lit(p.field)}` : `${lit(p.constant)}::text`]));
  if (!list) return `(SELECT ${pick("e")} FROM (SELECT ${sql} AS e) x WHERE e IS NOT NULL)`;
  return `(SELECT coalesce(json_agg(${pick("e")} ORDER BY o), '[]'::json) ` +
    `FROM jsonb_array_elements(${sql}) WITH ORDINALITY x(e, o))`;
}

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

/** The opaque cursor of shared/pagination.ts (base64url of `k1.<ms>.<id>`), computed in SQL. */
const cursorSql = (a: string, view: View) =>
  `rtrim(translate(encode(convert_to('k1.' || (extract(epoch FROM ${a}."createdAt") * 1000)::bigint || '.' || ` +
  `${a}.${q(idColumn(view))}, 'UTF8'), 'base64'), '+/' || chr(10), '-_'), '=')`;

class Compiler {
  readonly values: unknown[] = [];
  private aliases = 0;
  constructor(readonly ctx: ActorContext) {}

  param(value: unknown, type: string): string {
    this.values.push(value);
    return `$${this.values.length}::${type}`;
  }

  alias(): string {
    return `t${this.aliases++}`;
  }

  field(view: View, a: string, name: string, of?: readonly JsonPart[]): string {
    const spec = view.fields[name];
    if (!spec) throw new Error(`${view.name} has no field ${name}`);
    let sql = spec.sql ? spec.sql(a) : `${a}.${q(spec.column ?? name)}`;
    if (of) sql = jsonPick(sql, of, spec.list === true);
    if (spec.type === "DateTime") {
      sql = `to_char(${sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    }
    const p = spec.present;
    if (p && !(p.unless && can(this.ctx.actor, p.unless))) {
      sql = `json_build_array('"\\u0000${presenterId(p)}"'::json, ${sql})`;
    }
    return sql;
  }

  /** The JSON object of `selection` for the row aliased `a` of `view`. */
  object(view: View, a: string, selection: Selection): string {
    return jsonObject(this.pairs(view, a, selection));
  }

  /** The keys of `selection` and their SQL values, in the selection's order. */
  pairs(view: View, a: string, selection: Selection): [string, string][] {
    const pairs: [string, string][] = [];
    for (const s of selection) {
      if ("field" in s) pairs.push([s.key, this.field(view, a, s.field, s.of)]);
      else if ("constant" in s) pairs.push([s.key, `${lit(s.constant)}::text`]);
      else pairs.push([s.key, this.relation(view, a, s)]);
    }
    return pairs;
  }

  /**
   * The objects of a page's rows built beside each row, as a LATERAL sub-select whose whole row is
   * the object: PostgreSQL turns a row into JSON cheaper than it runs json_build_object (~7 % of
   * the nested bench's statement). Its column names are the keys, and names are cut at 63 bytes
   * (NAMEDATALEN): longer keys keep json_build_object. `node` gives the SQL of the object of the row
   * aliased `b`; `from` wraps the rows' FROM item `source` (aliased `b`) with the objects asked for.
   */
  rowObjects(view: View, b: string) {
    const built: string[] = [];
    const names: string[] = [];
    return {
      node: (selection: Selection): string => {
        const pairs = this.pairs(view, b, selection);
        if (pairs.length === 0 || pairs.some(([k]) => utf8.encode(k).length > 63)) return jsonObject(pairs);
        const j = `${b}j${built.length}`;
        built.push(`LATERAL (SELECT ${pairs.map(([k, v]) => `${v} AS ${q(k)}`).join(", ")}) ${j}`);
        names.push(j);
        return `${b}.${j}`;
      },
      from: (source: string): string =>
        built.length === 0
          ? source
          : `(SELECT ${b}.*, ${names.join(", ")} FROM ${source}, ${built.join(", ")}) ${b}`,
    };
  }

  relation(
    view: View,
    a: string,
    s: { relation: string; selection: Selection } | { relation: string; page: PageRequest; shape: PageShape },
  ): string {
    const rel = view.relations?.[s.relation];
    if (!rel) throw new Error(`${view.name} has no relation ${s.relation}`);
    const target = rel.view();
    if ("page" in s) {
      if (rel.kind !== "connection") throw new Error(`${view.name}.${s.relation} is not a connection`);
      const parentId = `${a}.${q(idColumn(view))}`;
      return this.page(target, rel.order, (b) => `${b}.${q(rel.foreignKey)} = ${parentId}`, s.page, s.shape);
    }
    switch (rel.kind) {
      case "embedded":
        return this.object(target, a, s.selection);
      case "object": {
        const b = this.alias();
        return `(SELECT ${this.object(target, b, s.selection)} FROM ${tableOf(target)} ${b} ` +
          `WHERE ${b}.${q(idColumn(target))} = ${a}.${q(rel.localKey)})`;
      }
      case "list": {
        const b = this.alias();
        return `(SELECT COALESCE(json_agg(${this.object(target, b, s.selection)} ORDER BY ${b}.${
          q(rel.orderBy)
        }, ${b}.${q(idColumn(target))}), '[]'::json) FROM ${tableOf(target)} ${b} ` +
          `WHERE ${b}.${q(rel.foreignKey)} = ${a}.${q(idColumn(view))})`;
      }
      case "connection":
        // A connection without page arguments (REST's field lists never name one).
        return this.page(
          target,
          rel.order,
          (b) => `${b}.${q(rel.foreignKey)} = ${a}.${q(idColumn(view))}`,
          {},
          { kind: "array", node: s.selection },
        );
    }
  }

  /**
   * A page of `view`'s rows matching `where`, in `order` by (createdAt, id). Parameters are taken
   * in this order (see bindPage): cursor time, cursor id, size.
   */
  page(view: View, order: Order, where: (b: string) => string, req: PageRequest, shape: PageShape): string {
    const b = this.alias();
    const table = tableOf(view);
    const id = `${b}.${q(idColumn(view))}`;
    if (shape.kind === "array") {
      const dir = order === "asc" ? "ASC" : "DESC";
      const objects = this.rowObjects(view, b);
      const node = objects.node(shape.node);
      return `(SELECT COALESCE(json_agg(${node} ORDER BY ${b}."createdAt" ${dir}, ` +
        `${id} ${dir}), '[]'::json) FROM ${
          objects.from(`(SELECT ${b}.* FROM ${table} ${b} WHERE ${where(b)}) ${b}`)
        })`;
    }
    const w = pageWindow(req, maxPageOf(shape));
    const ascending = (order === "asc") !== w.backward;
    const dir = ascending ? "ASC" : "DESC";
    let keyset = "";
    if (w.cursor) {
      // Milliseconds rather than an ISO string: years past 9999 are cursors' too (no 500 for them).
      const at = `('epoch'::timestamptz + ${
        this.param(w.cursor.createdAt.getTime(), "bigint")
      } * interval '1 millisecond')`;
      const cid = this.param(w.cursor.id, "text");
      keyset = ` AND (${b}."createdAt", ${id}) ${ascending ? ">" : "<"} (${at}, ${cid})`;
    }
    const size = this.param(w.size, "int");
    // The declared filters narrow the rows like the keyset does (after the size: see bindPage).
    keyset += this.filters(view, b, req);
    const orderBy = `${b}."createdAt" ${dir}, ${id} ${dir}`;
    // (GROUP BY (): one row even when no part aggregates, `pageInfo { __typename }`.)
    // The objects of the rows: built beside them when every fetched row is shown (no extra row).
    const objects = this.rowObjects(view, b);
    let node = (selection: Selection) => this.object(view, b, selection);
    let from: () => string;
    let rows: (node: string) => string;
    // Whether there are more rows, and the cursor of the row numbered `rn`, when `counted`.
    let full = "NULL";
    let cursorAt = (_rn: string) => "NULL";
    let first = "1";
    let last = "1";
    if (shape.kind === "connection" && !counted(w, shape)) {
      // Only the rows are shown: exactly `size` of them, no numbering.
      const out = order === "asc" ? "ASC" : "DESC";
      const source = `(SELECT ${b}.* FROM ${table} ${b} WHERE ${where(b)}${keyset} ORDER BY ${orderBy} ` +
        `LIMIT ${size}) ${b}`;
      node = objects.node;
      from = () => `${objects.from(source)} GROUP BY ()`;
      rows = (node) =>
        `COALESCE(json_agg(${node} ORDER BY ${b}."createdAt" ${out}, ${id} ${out}), '[]'::json)`;
    } else {
      // One more row than shown tells whether there is a next page; `rn$` numbers them in fetch order.
      const numbered =
        `(SELECT s.*, count(*) OVER () AS "n$" FROM (SELECT ${b}.*, row_number() OVER (ORDER BY ${orderBy}) ` +
        `AS "rn$" FROM ${table} ${b} WHERE ${
          where(b)
        }${keyset} ORDER BY ${orderBy} LIMIT ${size} + 1) s) ${b} ` +
        `GROUP BY ()`;
      from = () => numbered;
      const kept = `FILTER (WHERE ${b}."rn$" <= ${size})`;
      rows = (node) =>
        `COALESCE(json_agg(${node} ORDER BY ${b}."rn$" ${w.backward ? "DESC" : "ASC"}) ${kept}, '[]'::json)`;
      full = `(count(*) > ${size})`;
      cursorAt = (rn) =>
        `min(${cursorSql(b, view)}) FILTER (WHERE ${b}."rn$" = ${rn} AND ${b}."rn$" <= ${size})`;
      const lastKept = `least(${b}."n$", ${size})`;
      first = w.backward ? lastKept : "1";
      last = w.backward ? "1" : lastKept;
    }
    if (shape.kind === "rest") {
      const data = rows(node(shape.node));
      return `(SELECT json_build_object('data', ${data}, 'nextCursor', CASE WHEN ${full} THEN ${
        cursorAt(size)
      } END) FROM ${from()})`;
    }
    const part = (p: ConnectionPart): string => {
      if ("constant" in p) return `${lit(p.constant)}::text`;
      if ("edges" in p) {
        return rows(jsonObject(p.edges.map((e) => {
          if ("constant" in e) return [e.key, `${lit(e.constant)}::text`] as const;
          if ("cursor" in e) return [e.key, cursorSql(b, view)] as const;
          return [e.key, node(e.node)] as const;
        })));
      }
      return jsonObject(p.pageInfo.map((i) => {
        if ("constant" in i) return [i.key, `${lit(i.constant)}::text`] as const;
        switch (i.info) {
          case "hasNextPage":
            return [i.key, w.hasBefore ? "true" : w.hasLast ? "false" : full] as const;
          case "hasPreviousPage":
            return [i.key, w.hasAfter ? "true" : w.backward ? full : "false"] as const;
          case "startCursor":
            return [i.key, cursorAt(first)] as const;
          case "endCursor":
            return [i.key, cursorAt(last)] as const;
        }
      }));
    };
    const select = jsonObject(shape.parts.map((p) => [p.key, part(p)] as const));
    return `(SELECT ${select} FROM ${from()})`;
  }

  /** The page's equality filters, in field-name order (bindPage binds them so). */
  filters(view: View, b: string, req: PageRequest): string {
    let sql = "";
    for (const name of Object.keys(req.where ?? {}).sort()) {
      const spec = view.fields[name];
      if (!spec || spec.sql) throw new Error(`${view.name} has no stored field ${name} to filter on`);
      sql += ` AND ${b}.${q(spec.column ?? name)}::text = ${this.param(req.where![name], "text")}`;
    }
    return sql;
  }

  /** One root as a FROM item yielding one row: `v` its JSON, `m` the index of its first missing step. */
  root(root: Root, n: number): string {
    const r = `r${n}`;
    if ("view" in root) {
      const b = this.alias();
      const id = this.param(rowId(root.id), "text");
      return `(SELECT (SELECT ${this.object(root.view, b, root.selection)} FROM ${tableOf(root.view)} ${b} ` +
        `WHERE ${b}.${q(idColumn(root.view))} = ${id}) AS v, NULL::int AS m) ${r}`;
    }
    const { read } = root;
    const from = read.from.view;
    const ws = from.workspaceColumn;
    if (!ws) throw new Error(`${read.name}: ${from.name} is not listed under the workspace`);
    const steps = stepsOf(read);
    if (steps.length === 0) {
      // A page of the workspace's rows (agents, members, invites, API tokens): oldest first unless
      // the read says otherwise (approvals: newest first).
      if (!("page" in root)) throw new Error(`${read.name} names no row`);
      const page = this.page(
        from,
        read.from.order ?? "asc",
        (b) => `${b}.${q(ws)} = $1`,
        root.page,
        root.shape,
      );
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
        rel.order,
        (b) => `${b}.${q(rel.foreignKey)} = ${parentId}`,
        root.page,
        root.shape,
      );
    } else {
      value = this.object(view, leaf, root.selection);
    }
    const found = (b: string, v: View) => `${b}.${q(idColumn(v))}`;
    const views = viewsOf(read);
    const missing = aliases.map((b, i) => `WHEN ${found(b, views[i])} IS NULL THEN ${i}`).join(" ");
    return `(SELECT CASE WHEN ${found(leaf, view)} IS NULL THEN NULL ELSE ${value} END AS v, ` +
      `CASE ${missing} END AS m FROM (SELECT 1) x ${joins.join(" ")}) ${r}`;
  }
}

/** Does the read name one row (its last step is by id), rather than a page? */
export function isOneRow(read: ReadCapability): boolean {
  const path = read.path ?? [];
  return path.length === 0 ? read.from.idParam !== undefined : path[path.length - 1].idParam !== undefined;
}

/** The view a read's rows are of (the page's rows, or the one row). */
export function viewOfRead(read: ReadCapability): { view: View; order: "asc" | "desc" } {
  let view = read.from.view;
  let order: "asc" | "desc" = read.from.order ?? "asc";
  for (const step of read.path ?? []) {
    const rel = view.relations?.[step.relation];
    if (!rel) throw new Error(`${read.name}: no relation ${step.relation}`);
    if (rel.kind === "connection") order = rel.order;
    view = rel.view();
  }
  return { view, order };
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

/** The steps by id of a read: its `from` row (when by id), then each path step by id. */
function stepsOf(read: ReadCapability): { relation?: string; idParam: string }[] {
  if (!read.from.idParam) return [];
  const steps: { relation?: string; idParam: string }[] = [{ idParam: read.from.idParam }];
  for (const step of read.path ?? []) {
    if (step.idParam) steps.push({ relation: step.relation, idParam: step.idParam });
  }
  return steps;
}

/** The view of each step by id. */
function viewsOf(read: ReadCapability): View[] {
  const views = [read.from.view];
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
  if (w.cursor) values.push(w.cursor.createdAt.getTime(), w.cursor.id);
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
  const data = jsonObject(roots.map((root, n) => [root.key, `r${n}.v`] as const));
  const missing = roots.map((_, n) => `r${n}.m AS m${n}`).join(", ");
  // `$1` (the workspace) is named once in the select list too: a request of rows just written
  // alone does not use it, and PostgreSQL refuses a parameter it cannot type.
  return {
    sql: `SELECT (${data})::text AS data, $1::text AS ws, ${missing} FROM ${from.join(", ")}`,
    values: c.values,
  };
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

type Row = { data: string } & Record<string, number | null | string>;

/**
 * Reads `roots` for the actor in one statement. Refuses (403) before anything is read when the
 * actor may not perform a root's read.
 */
export async function runReads(ctx: ActorContext, roots: readonly Root[]): Promise<Answer> {
  for (const root of roots) if ("read" in root) authorize(ctx.actor, root.read.action);
  const { sql, values } = plan(ctx, roots);
  const rows = await ctx.db.$queryRawUnsafe<Row[]>(sql, ...values);
  const row = rows[0];
  const missing = new Map<string, AppError>();
  roots.forEach((root, n) => {
    const step = row[`m${n}`];
    if (step == null || !("read" in root)) return;
    const steps = stepsOf(root.read);
    // As the services have always answered: the agent and the row under it are one lookup, so an
    // unknown agent of `intent(agentId, id)` is "Intent not found.", while a page under an unknown
    // agent (`intents(agentId)`) is "Agent not found.".
    const at = Number(step) === 0 && steps.length > 1 ? 1 : Number(step);
    missing.set(root.key, notFound(root.read.params[steps[at].idParam]));
  });
  return { json: present(ctx, row.data), missing };
}

/** One root's value as JSON text (REST answers, GraphQL resolvers); a missing row throws its 404. */
export async function readOne(ctx: ActorContext, root: Root): Promise<string> {
  const answer = await runReads(ctx, [{ ...root, key: "v" }]);
  const error = answer.missing.get("v");
  if (error) throw error;
  // The object is `{"v" : <value>}` (json_build_object's spacing): the value is what follows the key.
  return answer.json.slice(answer.json.indexOf(":") + 1, -1).trim();
}
