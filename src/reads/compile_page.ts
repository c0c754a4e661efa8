/**
 * A page of rows in SQL: keyset conditions on (sort key, id) from shared/pagination.ts cursors and
 * a LIMIT per parent row, so a nested page never reads rows it does not show; one extra row, when
 * the page must tell whether there is more (./page_window.ts isCounted).
 */
import type { View } from "../shared/view.ts";
import { isReadFilter, type ReadCapability } from "../shared/capability.ts";
import { CALLER } from "./caller.ts";
import type { EdgePart, PageRequest, PageShape, Selection } from "./selection.ts";
import { afterCommas, type Obj, type Records, type Value } from "./records.ts";
import type { RowBytes } from "./row_bytes.ts";
import { isCounted, maxPageOf, pageWindow } from "./page_window.ts";
import { cursorSql, idColumn, type Sort, sortColumn, tableOf } from "./view_columns.ts";
import { cat, ident, int, nameText, type ParamType, type Sql, sql } from "../shared/sql_fragment.ts";

const utf8 = new TextEncoder();

/** What a page takes of the compiler (./compile.ts): aliases, parameters, rows' bytes, objects. */
export interface PageCompiler extends Records {
  readonly bytes: RowBytes;
  param(value: unknown, type?: ParamType): Sql;
  obj(view: View, a: Sql, selection: Selection): Obj;
}

/** Whose rows a page shows: `view`'s matching `where` (of the rows aliased `b`), in `sort` order. */
export interface PageOf {
  view: View;
  sort: Sort;
  where: (b: Sql) => Sql;
  /** The read's declared filters (a ReadFilter's condition is its own; an enum pins its field). */
  filters?: ReadCapability["filters"];
}

/**
 * A page of `of.view`'s rows matching `of.where`, by (sort key, id) in its order. Parameters are
 * taken in this order (see ./bind.ts bindPage): cursor time, cursor id, size, filters.
 */
export function page(c: PageCompiler, of: PageOf, req: PageRequest, shape: PageShape): Sql {
  const { view, sort, where } = of;
  const b = c.alias();
  const table = tableOf(view);
  const id = sql`${b}.${idColumn(view)}`;
  const key = sql`${b}.${sortColumn(view, sort)}`;
  const { order } = sort;
  if (shape.kind === "array") {
    const dir = order === "asc" ? sql`ASC` : sql`DESC`;
    const rows = c.rowValues(b);
    const node = rows.beside(c.obj(view, b, shape.node));
    const source = sql`(SELECT ${b}.* FROM ${table} ${b} WHERE ${where(b)} AND ${c.bytes.spend(b)}) ${b}`;
    return sql`ARRAY(SELECT ${node} FROM ${rows.from(source)} ORDER BY ${key} ${dir}, ${id} ${dir})`;
  }
  const w = pageWindow(req, maxPageOf(shape));
  const ascending = (order === "asc") !== w.backward;
  const dir = ascending ? sql`ASC` : sql`DESC`;
  let keyset = sql``;
  if (w.cursor) {
    // Milliseconds rather than an ISO string: years past 9999 are cursors' too (no 500 for them).
    const at = sql`('epoch'::timestamptz + ${
      c.param(w.cursor.at.getTime(), "bigint")
    } * interval '1 millisecond')`;
    const cid = c.param(w.cursor.id, "text");
    keyset = sql` AND (${key}, ${id}) ${ascending ? sql`>` : sql`<`} (${at}, ${cid})`;
  }
  const size = c.param(w.size, "int");
  // The declared filters narrow the rows like the keyset does (after the size: see bindPage).
  keyset = sql`${keyset}${filters(c, view, b, req, of.filters)}`;
  const orderBy = sql`${key} ${dir}, ${id} ${dir}`;
  const edge = (edges: readonly EdgePart[]): Obj => ({
    pairs: edges.map((e): [string, Value] => {
      // An edge's keys count for its row (a cursor takes at least 16 bytes).
      c.bytes.count(b, utf8.encode(e.key).length + ("cursor" in e ? 22 : 6));
      if ("constant" in e) return [e.key, sql`${nameText(e.constant)}::text`];
      if ("cursor" in e) return [e.key, cursorSql(b, view, sort)];
      return [e.key, c.obj(view, b, e.node)];
    }),
  });

  // (A page without edges takes the counted form below, which names every bound parameter.)
  if (shape.kind === "connection" && !isCounted(w, shape) && shape.parts.some((p) => "edges" in p)) {
    // Only the rows are shown: exactly `size` of them, no numbering; their values built beside them.
    const out = order === "asc" ? sql`ASC` : sql`DESC`;
    const shown = cat(
      sql`(SELECT ${b}.* FROM ${table} ${b} WHERE ${where(b)}${keyset} ORDER BY ${orderBy} `,
      sql`LIMIT ${size}) ${b}`,
    );
    // Counted above the LIMIT (the rows shown); named once their values were compiled (what they count).
    const source = () => sql`(SELECT ${b}.* FROM ${shown} WHERE ${c.bytes.spend(b)}) ${b}`;
    const parts = shape.parts.map((p): [string, Value] => {
      if ("constant" in p) return [p.key, sql`${nameText(p.constant)}::text`];
      if ("edges" in p) {
        const rows = c.rowValues(b);
        const value = rows.beside(edge(p.edges));
        return [
          p.key,
          sql`ARRAY(SELECT ${value} FROM ${rows.from(source())} ORDER BY ${key} ${out}, ${id} ${out})`,
        ];
      }
      // Decided by the arguments alone (see isCounted).
      return [p.key, {
        pairs: p.pageInfo.map((i): [string, Value] => {
          if ("constant" in i) return [i.key, sql`${nameText(i.constant)}::text`];
          if (i.info === "hasNextPage") return [i.key, w.hasBefore ? sql`true` : sql`false`];
          if (i.info === "hasPreviousPage") return [i.key, w.hasAfter ? sql`true` : sql`false`];
          return [i.key, sql`NULL::text`];
        }),
      }];
    });
    return c.scalar({ pairs: parts });
  }

  // One more row than shown tells whether there is a next page; `rn$` numbers them in fetch order.
  // The values of the rows are built in the aggregates (so not for the extra row); the answer's
  // record is built over the aggregates' one row `g`.
  const g = c.alias();
  const aggregates: Sql[] = [];
  const aggregate = (value: Sql) => {
    const n = int(aggregates.length);
    aggregates.push(sql`${value} AS a${n}`);
    return sql`${g}.a${n}`;
  };
  const kept = sql`FILTER (WHERE ${b}."rn$" <= ${size})`;
  const rows = (value: Value) =>
    aggregate(
      sql`COALESCE(array_agg(${c.scalar(value)} ORDER BY ${b}."rn$" ${
        w.backward ? sql`DESC` : sql`ASC`
      }) ${kept}, '{}')`,
    );
  const full = sql`(count(*) > ${size})`;
  const cursorAt = (rn: Sql) =>
    sql`min(${cursorSql(b, view, sort)}) FILTER (WHERE ${b}."rn$" = ${rn} AND ${b}."rn$" <= ${size})`;
  const lastKept = sql`least(${b}."n$", ${size})`;
  const first = w.backward ? lastKept : sql`1`;
  const last = w.backward ? sql`1` : lastKept;
  let answer: Obj;
  if (shape.kind === "rest") {
    answer = {
      pairs: [
        ["data", rows(c.obj(view, b, shape.node))],
        ["nextCursor", aggregate(sql`CASE WHEN ${full} THEN ${cursorAt(size)} END`)],
      ],
    };
  } else {
    answer = {
      pairs: shape.parts.map((p): [string, Value] => {
        if ("constant" in p) return [p.key, sql`${nameText(p.constant)}::text`];
        if ("edges" in p) return [p.key, rows(edge(p.edges))];
        return [p.key, {
          pairs: p.pageInfo.map((i): [string, Value] => {
            if ("constant" in i) return [i.key, sql`${nameText(i.constant)}::text`];
            switch (i.info) {
              case "hasNextPage":
                return [i.key, w.hasBefore ? sql`true` : w.hasLast ? sql`false` : aggregate(full)];
              case "hasPreviousPage":
                return [i.key, w.hasAfter ? sql`true` : w.backward ? aggregate(full) : sql`false`];
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
  const items: Sql[] = [];
  const top = c.build(answer, items);
  // The rows shown count (not the extra row), named once their values were compiled.
  const numbered = cat(
    sql`(SELECT ${b}.*, count(*) OVER () AS "n$" FROM (SELECT ${b}.*, row_number() OVER (ORDER BY ${orderBy}) `,
    sql`AS "rn$" FROM ${table} ${b} WHERE ${where(b)}${keyset} ORDER BY ${orderBy} LIMIT ${size} + 1) ${b} `,
    sql`WHERE ${b}."rn$" > ${size} OR ${c.bytes.spend(b)}) ${b} GROUP BY ()`,
  );
  // (GROUP BY (): one row even when there are no rows, or no aggregate, `pageInfo { __typename }`.)
  return sql`(SELECT ${top} FROM (SELECT count(*) AS n${afterCommas(aggregates)} FROM ${numbered}) ${g}${
    afterCommas(items)
  })`;
}

/**
 * The page's filters, in name order (bindPage binds them so). An enum's value takes the column's
 * own type, so an index on the column serves it; a ReadFilter's is text. Values are checked by both
 * transports before they get here (filterValue).
 */
function filters(c: PageCompiler, view: View, b: Sql, req: PageRequest, declared?: PageOf["filters"]): Sql {
  const conditions: Sql[] = [];
  for (const name of Object.keys(req.where ?? {}).sort()) {
    const filter = declared?.[name];
    if (filter && isReadFilter(filter)) {
      conditions.push(sql` AND ${filter.sql(b, c.param(req.where![name], "text"), CALLER)}`);
      continue;
    }
    const spec = view.fields[name];
    if (!spec || spec.sql) throw new Error(`${view.name} has no stored field ${name} to filter on`);
    conditions.push(sql` AND ${b}.${ident(spec.column ?? name)} = ${c.param(req.where![name])}`);
  }
  return cat(...conditions);
}
