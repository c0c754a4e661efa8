/**
 * The compiler: roots and their selections into ONE SQL statement whose single row is the whole
 * answer as JSON text, built by PostgreSQL: nested records and arrays of records (correlated
 * subqueries, a LATERAL sub-select per object, ./records.ts) turned into JSON once by `to_json`.
 *
 * - Access: the workspace is a condition of the root view's row, and every other row is reached
 *   through relations from it, so an id of another workspace answers exactly as an unknown id.
 * - Pages: ./compile_page.ts.
 * - Budget: each row read for the answer counts its bytes before its values are built
 *   (./row_bytes.ts).
 * - Parameters: `$1` is the workspace and `$2` the acting member (NULL for an API token): the
 *   caller a field's or a filter's SQL names (./caller.ts); then the values
 *   in the order the compiler takes them, which
 *   ./bind.ts takes in the same order without compiling; the cut-off and the round trip's byte
 *   budget come last (bound by ./budget.ts fetchBounded). Everything else in the text is the
 *   shape: identifiers from the views, response keys, type names (../shared/sql_fragment.ts).
 */
import type { ActorContext } from "../context.ts";
import type { View } from "../shared/view.ts";
import { CALLER } from "./caller.ts";
import type { JsonPart, PageRequest, PageShape, Root, Selection } from "./selection.ts";
import { can } from "../auth/permissions.ts";
import { afterCommas, type Obj, Records, type Value } from "./records.ts";
import { resetSpent, RowBytes, storedTextBytes } from "./row_bytes.ts";
import { idColumn, sortOf, tableOf } from "./view_columns.ts";
import { rowId, stepsOf, viewsOf } from "./read_path.ts";
import { viewOf } from "./views.ts";
import { presenterMark } from "./answer.ts";
import { page } from "./compile_page.ts";
import {
  cat,
  ident,
  int,
  join,
  nameText,
  type ParamType,
  placeholder,
  type Sql,
  sql,
} from "../shared/sql_fragment.ts";

const utf8 = new TextEncoder();

export class Compiler extends Records {
  readonly values: unknown[] = [];
  readonly bytes: RowBytes;
  /** The request's byte allowance, at which the rows' count stops the statement. */
  readonly cutOff: Sql;
  /** This round trip's byte budget: PostgreSQL sends the answer only within it. */
  readonly budget: Sql;

  /** `planValues`: how many values the plan binds (./bind.ts), before the cut-off and the budget. */
  constructor(readonly ctx: ActorContext, planValues: number) {
    super();
    this.cutOff = placeholder(planValues + 1, "bigint");
    this.budget = placeholder(planValues + 2, "int");
    this.bytes = new RowBytes(this.cutOff);
  }

  /** A bind parameter of `type`; without one PostgreSQL gives it the type of what it is compared with. */
  param(value: unknown, type?: ParamType): Sql {
    this.values.push(value);
    return placeholder(this.values.length, type);
  }

  field(view: View, a: Sql, name: string, of?: readonly JsonPart[]): Sql {
    const spec = view.fields[name];
    if (!spec) throw new Error(`${view.name} has no field ${name}`);
    let value = spec.sql ? spec.sql(a, CALLER) : sql`${a}.${ident(spec.column ?? name)}`;
    if (!spec.sql && !spec.list && !of && (spec.type === "String" || spec.type === "ID")) {
      this.bytes.count(a, storedTextBytes(value));
    }
    if (of) value = this.jsonPick(value, of, spec.list === true);
    if (spec.type === "DateTime") {
      value = sql`to_char(${value} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    }
    const p = spec.present;
    if (p && !(p.unless && can(this.ctx.actor, p.unless))) {
      const marked = presenterMark(p, value);
      if (!p.mayChange) return marked;
      const mayChange = p.mayChange(this.ctx, value);
      value = sql`CASE WHEN ${mayChange} THEN ${marked} ELSE to_json(${value}) END`;
    }
    return value;
  }

  /**
   * The keys `of` of a jsonb object (or of each object of a jsonb array, in order), under their
   * response keys: what a GraphQL selection of a JSON object type asks for.
   */
  jsonPick(value: Sql, of: readonly JsonPart[], list: boolean): Sql {
    const [x, e, o] = [this.alias(), this.alias(), this.alias()];
    const pick: Obj = {
      pairs: of.map((p) => [
        p.key,
        "field" in p ? sql`${e}->${nameText(p.field)}` : sql`${nameText(p.constant)}::text`,
      ]),
    };
    const items: Sql[] = [];
    const top = this.build(pick, items);
    const beside = afterCommas(items);
    if (!list) {
      return sql`(SELECT ${top} FROM (SELECT ${value} AS ${e}) ${x}${beside} WHERE ${e} IS NOT NULL)`;
    }
    return cat(
      sql`ARRAY(SELECT ${top} FROM jsonb_array_elements(${value}) WITH ORDINALITY ${x}(${e}, ${o})${beside} `,
      sql`ORDER BY ${o})`,
    );
  }

  /** The object of `selection` for the row aliased `a` of `view`. */
  obj(view: View, a: Sql, selection: Selection): Obj {
    return { pairs: this.pairs(view, a, selection) };
  }

  /** The keys of `selection` and their values, in the selection's order. */
  pairs(view: View, a: Sql, selection: Selection): [string, Value][] {
    const pairs: [string, Value][] = [];
    for (const s of selection) {
      // `"key":` and a comma or brace, and at least two bytes of value.
      this.bytes.count(a, utf8.encode(s.key).length + 6);
      if ("field" in s) pairs.push([s.key, this.field(view, a, s.field, s.of)]);
      else if ("constant" in s) pairs.push([s.key, sql`${nameText(s.constant)}::text`]);
      else pairs.push([s.key, this.relation(view, a, s)]);
    }
    return pairs;
  }

  relation(
    view: View,
    a: Sql,
    s: { relation: string; selection: Selection } | { relation: string; page: PageRequest; shape: PageShape },
  ): Value {
    const rel = view.relations?.[s.relation];
    if (!rel) throw new Error(`${view.name} has no relation ${s.relation}`);
    const target = rel.view();
    const parentId = sql`${a}.${idColumn(view)}`;
    if ("page" in s) {
      if (rel.kind !== "connection") throw new Error(`${view.name}.${s.relation} is not a connection`);
      const where = (b: Sql) => sql`${b}.${ident(rel.foreignKey)} = ${parentId}`;
      return page(this, { view: target, sort: sortOf(rel), where }, s.page, s.shape);
    }
    switch (rel.kind) {
      case "embedded":
        return this.obj(target, a, s.selection);
      case "object": {
        const b = this.alias();
        const value = this.scalar(this.obj(target, b, s.selection));
        return cat(
          sql`(SELECT ${value} FROM ${tableOf(target)} ${b} `,
          sql`WHERE ${b}.${idColumn(target)} = ${a}.${ident(rel.localKey)} AND ${this.bytes.spend(b)})`,
        );
      }
      case "list": {
        const b = this.alias();
        const rows = this.rowValues(b);
        const node = rows.beside(this.obj(target, b, s.selection));
        const source = cat(
          sql`(SELECT ${b}.* FROM ${tableOf(target)} ${b} WHERE ${b}.${ident(rel.foreignKey)} = ${parentId}`,
          sql` AND ${this.bytes.spend(b)}) ${b}`,
        );
        return sql`ARRAY(SELECT ${node} FROM ${rows.from(source)} ORDER BY ${b}.${ident(rel.orderBy)}, ${b}.${
          idColumn(target)
        })`;
      }
      case "connection": {
        // A connection without page arguments (REST's field lists never name one).
        const where = (b: Sql) => sql`${b}.${ident(rel.foreignKey)} = ${parentId}`;
        return page(this, { view: target, sort: sortOf(rel), where }, {}, {
          kind: "array",
          node: s.selection,
        });
      }
    }
  }

  /** One root as a FROM item yielding one row: `v` its JSON, `m` the index of its first missing step. */
  root(root: Root, n: number): Sql {
    const r = sql`r${int(n)}`;
    if ("view" in root) {
      const b = this.alias();
      const id = this.param(rowId(root.id), "text");
      const value = this.scalar(this.obj(root.view, b, root.selection));
      return cat(
        sql`(SELECT (SELECT ${value} FROM ${tableOf(root.view)} ${b} `,
        sql`WHERE ${b}.${idColumn(root.view)} = ${id} AND ${this.bytes.spend(b)}) AS v, NULL::int AS m) ${r}`,
      );
    }
    const { read } = root;
    const from = viewOf(read.from.view);
    if (!from.workspaceColumn) {
      throw new Error(`${read.name}: ${from.name} is not listed under the workspace`);
    }
    const ws = ident(from.workspaceColumn);
    const steps = stepsOf(read);
    if (steps.length === 0) {
      // A page of the workspace's rows (agents, members, invites, API tokens): oldest first unless
      // the read says otherwise (approvals: newest first).
      if (!("page" in root)) throw new Error(`${read.name} names no row`);
      const sort = sortOf({ order: read.from.order ?? "asc", sortKey: read.from.sortKey });
      const value = page(
        this,
        { view: from, sort, where: (b) => sql`${b}.${ws} = $1`, filters: read.filters },
        root.page,
        root.shape,
      );
      return sql`(SELECT ${value} AS v, NULL::int AS m) ${r}`;
    }
    const joins: Sql[] = [];
    const aliases: Sql[] = [];
    let view = from;
    for (const [i, step] of steps.entries()) {
      const b = this.alias();
      const id = this.param(rowId(root.params[step.idParam]), "text");
      if (i === 0) {
        joins.push(
          sql`LEFT JOIN ${tableOf(from)} ${b} ON ${b}.${ws} = $1 AND ${b}.${idColumn(from)} = ${id}`,
        );
      } else {
        const rel = view.relations?.[step.relation!];
        if (!rel || (rel.kind !== "connection" && rel.kind !== "list")) {
          throw new Error(`${read.name}: ${view.name}.${step.relation} is not a relation to many`);
        }
        const target = rel.view();
        const parent = aliases[i - 1];
        joins.push(cat(
          sql`LEFT JOIN ${tableOf(target)} ${b} ON ${b}.${ident(rel.foreignKey)} = ${parent}.${
            idColumn(view)
          } `,
          sql`AND ${b}.${idColumn(target)} = ${id}`,
        ));
        view = target;
      }
      aliases.push(b);
    }
    const leaf = aliases[aliases.length - 1];
    let value: Sql;
    if ("page" in root) {
      const tail = read.path?.[read.path.length - 1];
      const rel = tail && !tail.idParam ? view.relations?.[tail.relation] : undefined;
      if (!rel || rel.kind !== "connection") throw new Error(`${read.name} does not end in a connection`);
      const parentId = sql`${leaf}.${idColumn(view)}`;
      const where = (b: Sql) => sql`${b}.${ident(rel.foreignKey)} = ${parentId}`;
      value = page(
        this,
        { view: rel.view(), sort: sortOf(rel), where, filters: read.filters },
        root.page,
        root.shape,
      );
    } else {
      value = this.scalar(this.obj(view, leaf, root.selection));
    }
    const views = viewsOf(read);
    const missing = join(
      aliases.map((b, i) => sql`WHEN ${b}.${idColumn(views[i])} IS NULL THEN ${int(i)}`),
      sql` `,
    );
    // A page's rows count themselves; one row counts here.
    const shown = "page" in root ? sql`ELSE ${value}` : sql`WHEN ${this.bytes.spend(leaf)} THEN ${value}`;
    return cat(
      sql`(SELECT CASE WHEN ${leaf}.${idColumn(view)} IS NULL THEN NULL ${shown} END AS v, `,
      sql`CASE ${missing} END AS m FROM (SELECT 1) x ${join(joins, sql` `)}) ${r}`,
    );
  }
}

/**
 * The statement of `roots`: the answer's JSON text measured against the round trip's budget, each
 * root's first missing step, and the reset of the rows' count. `planValues`: see Compiler.
 */
export function compile(
  ctx: ActorContext,
  roots: readonly Root[],
  planValues: number,
): { sql: string; values: unknown[] } {
  const c = new Compiler(ctx, planValues);
  c.param(ctx.actor.workspaceId, "text");
  c.param(ctx.actor.userId, "text");
  const from = roots.map((root, n) => c.root(root, n));
  const items: Sql[] = [];
  const data = c.build({ pairs: roots.map((root, n) => [root.key, sql`r${int(n)}.v`]) }, items);
  const missing = join(roots.map((_, n) => sql`r${int(n)}.m AS m${int(n)}`), sql`, `);
  const outer = join(roots.map((_, n) => sql`a.m${int(n)}`), sql`, `);
  // PostgreSQL measures the JSON it built and sends it only within the budget (OFFSET 0 keeps it
  // built once, not per reference). The running count is reset once the answer is built, for a
  // next read in the same transaction. `$1` (the workspace) and `$2` (the member) are named once in
  // the select list too: a request that does not use them would leave them untyped, which
  // PostgreSQL refuses.
  const statement = cat(
    sql`SELECT CASE WHEN octet_length(a.data) <= ${c.budget} THEN a.data END AS data, `,
    sql`octet_length(a.data) AS bytes, ${outer}, ${resetSpent} AS "spent$", ${c.cutOff} AS "cut$" `,
    sql`FROM (SELECT to_json(${data})::text AS data, $1::text AS ws, $2::text AS member, ${missing} FROM ${
      join([...from, ...items], sql`, `)
    } OFFSET 0) a`,
  );
  return { sql: statement.text, values: c.values };
}
