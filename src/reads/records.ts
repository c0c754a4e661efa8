/**
 * An answer's values in SQL: a scalar expression (text, number, json...), or an object whose keys
 * map to values. Objects become PostgreSQL records whose column names are the keys, and the whole
 * answer is turned into JSON once, by `to_json` at the top: PostgreSQL then writes every nested
 * record and array straight into one buffer, where JSON built level by level (json_build_object,
 * json_agg) is copied again into each parent (about a sixth of the nested bench's statement).
 */
import { cat, ident, int, join, nameText, Sql, sql } from "../shared/sql_fragment.ts";

export type Value = Sql | Obj;
export interface Obj {
  pairs: [string, Value][];
}

const utf8 = new TextEncoder();

/** `items`, each after a comma: more FROM items after the first. */
export const afterCommas = (items: readonly Sql[]): Sql => cat(...items.map((i) => sql`, ${i}`));

/** json_build_object takes at most 100 arguments: larger objects are joined from chunks. */
function jsonObject(pairs: ReadonlyArray<readonly [string, Sql]>): Sql {
  if (pairs.length === 0) return sql`'{}'::json`;
  const chunks: Sql[] = [];
  for (let i = 0; i < pairs.length; i += 50) {
    const args = pairs.slice(i, i + 50).map(([k, v]) => sql`${nameText(k)}, ${v}`);
    chunks.push(sql`json_build_object(${join(args, sql`, `)})`);
  }
  if (chunks.length === 1) return chunks[0];
  const last = chunks.length - 1;
  const parts = chunks.map((c, i) => {
    const text = sql`${c}::text`;
    if (i === 0) return sql`left(${text}, -1)`;
    return i === last ? sql`substr(${text}, 2)` : sql`substr(left(${text}, -1), 2)`;
  });
  return sql`(${join(parts, sql` || ', ' || `)})::json`;
}

/** Builds values into records; the statement's row aliases (`t<n>`) are numbered here. */
export class Records {
  private aliases = 0;

  alias(): Sql {
    return sql`t${int(this.aliases++)}`;
  }

  /**
   * The SQL of `value` in a query whose FROM list gets `items`: each object is a LATERAL sub-select
   * whose one row is the record (columns named by the keys), after those of its own objects, so the
   * planner flattens them into row constructors. Keys PostgreSQL would cut (names are at most 63
   * bytes) and empty objects are built with json_build_object instead.
   */
  build(value: Value, items: Sql[]): Sql {
    if (value instanceof Sql) return value;
    const { pairs } = value;
    if (pairs.length === 0 || pairs.some(([k]) => utf8.encode(k).length > 63)) {
      return jsonObject(pairs.map(([k, v]) => [k, this.build(v, items)] as const));
    }
    const columns = pairs.map(([k, v]) => sql`${this.build(v, items)} AS ${ident(k)}`);
    const n = this.alias();
    items.push(sql`LATERAL (SELECT ${join(columns, sql`, `)}) ${n}`);
    return n;
  }

  /** `value` as one scalar expression (an object as a sub-select of its record). */
  scalar(value: Value): Sql {
    const items: Sql[] = [];
    const top = this.build(value, items);
    return items.length === 0 ? top : sql`(SELECT ${top} FROM ${join(items, sql`, `)})`;
  }

  /**
   * Values built beside each row of a page's rows (aliased `b`): `beside` gives how the rows' query
   * names a value, `from` wraps the rows' FROM item `source` (aliased `b`) with what they need.
   */
  rowValues(b: Sql): { beside: (value: Value) => Sql; from: (source: Sql) => Sql } {
    const items: Sql[] = [];
    const columns: Sql[] = [];
    return {
      beside: (value: Value): Sql => {
        const n = this.alias();
        columns.push(sql`${this.build(value, items)} AS ${n}`);
        return sql`${b}.${n}`;
      },
      from: (source: Sql): Sql =>
        columns.length === 0
          ? source
          : sql`(SELECT ${b}.*, ${join(columns, sql`, `)} FROM ${source}${afterCommas(items)}) ${b}`,
    };
  }
}
