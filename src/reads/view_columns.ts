/**
 * A view's rows in SQL: its table, its id column, the column a page is ordered by and the cursor
 * of a row. Identifiers come only from the views (src/shared/view.ts), quoted by `ident`.
 */
import type { Order, View } from "../shared/view.ts";
import { ident, type Sql, sql } from "../shared/sql_fragment.ts";

export const idColumn = (view: View): Sql => ident(view.fields.id?.column ?? "id");

export function tableOf(view: View): Sql {
  if (!view.table) throw new Error(`View ${view.name} has no table`);
  return ident(view.table);
}

/** How a page's rows are ordered: by (key, id), ascending or descending. `key` is a DateTime field. */
export interface Sort {
  order: Order;
  key: string;
}

/** A connection's order: its declared sort key (createdAt unless named) and direction. */
export const sortOf = (rel: { order: Order; sortKey?: string }): Sort => ({
  order: rel.order,
  key: rel.sortKey ?? "createdAt",
});

/** The column of a sort key: its field's, or a column of that name the view does not show (Membership.createdAt). */
export function sortColumn(view: View, sort: Sort): Sql {
  const spec = view.fields[sort.key];
  if (spec && (spec.sql || spec.type !== "DateTime" || spec.nullable)) {
    throw new Error(`${view.name}.${sort.key} is not a stored, non-null DateTime to sort by`);
  }
  return ident(spec?.column ?? sort.key);
}

/** The opaque cursor of shared/pagination.ts (base64url of `k1.<ms>.<id>`), computed in SQL. */
export const cursorSql = (a: Sql, view: View, sort: Sort): Sql =>
  sql`rtrim(translate(encode(convert_to('k1.' || (extract(epoch FROM ${a}.${
    sortColumn(view, sort)
  }) * 1000)::bigint || '.' || ${a}.${idColumn(view)}, 'UTF8'), 'base64'), '+/' || chr(10), '-_'), '=')`;
