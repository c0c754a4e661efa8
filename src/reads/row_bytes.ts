/**
 * The read budget inside the statement: every row the statement reads for the answer adds a lower
 * bound of its bytes to a running count, and the statement stops once past the request's
 * allowance (the cut-off parameter), so a refused read costs PostgreSQL about the budget in rows
 * read and built, not the whole answer, and never builds the JSON (./budget.ts then answers 400).
 */
import { cat, int, join, type Sql, sql } from "../shared/sql_fragment.ts";

/** The transaction-local setting in which a read statement adds up what its rows count. */
const SPENT = sql`'switchboard.read_bytes'`;

/** What the rows counted so far; read once the answer is built, to reset it for a next read. */
export const resetSpent: Sql = sql`set_config(${SPENT}, '', true)`;

/** Stored strings longer than this (in bytes) count their JSON's length rather than their own. */
const EXACT_FROM = int(4096);

/**
 * A stored string's bytes: its length, from the stored value's header (not detoasted); a long
 * one's JSON, escapes included (each control character takes 6 bytes there), so that it counts
 * what it costs to build.
 */
export const storedTextBytes = (value: Sql): Sql =>
  cat(
    sql`coalesce(CASE WHEN octet_length(${value}) > ${EXACT_FROM} THEN octet_length(to_json(${value})::text) `,
    sql`ELSE octet_length(${value}) END, 0)`,
  );

/**
 * Per row alias: SQL terms (and bytes) adding up to at most what that row's values take in the
 * answer's JSON (its own fields and keys; the rows of its relations count themselves).
 */
export class RowBytes {
  private readonly sizes = new Map<string, { terms: Sql[]; bytes: number }>();
  /** `cutOff`: the placeholder of the request's allowance. */
  constructor(private readonly cutOff: Sql) {}

  /** Counts `term` (SQL of an integer, or a number of bytes) for the row aliased `a`. */
  count(a: Sql, term: Sql | number): void {
    let size = this.sizes.get(a.text);
    if (!size) this.sizes.set(a.text, size = { terms: [], bytes: 0 });
    if (typeof term === "number") size.bytes += term;
    else size.terms.push(term);
  }

  /**
   * A condition on the row aliased `a`, true for every row, evaluated before the row's values are
   * built: it adds what the row counted (then forgotten, so a row shown twice counts twice) to the
   * statement's running total, and stops the statement with SQLSTATE 54SB1 once that total passes
   * the cut-off. The total is a lower bound of the answer's bytes (keys, stored text as stored, a
   * long text's JSON). (About a microsecond a row: a setting read and written.)
   */
  spend(a: Sql): Sql {
    const size = this.sizes.get(a.text) ?? { terms: [], bytes: 0 };
    this.sizes.delete(a.text);
    const sum = join([...size.terms, int(size.bytes + 2)], sql` + `);
    const spent = sql`coalesce(nullif(current_setting(${SPENT}, true), ''), '0')::bigint`;
    return cat(
      sql`CASE WHEN set_config(${SPENT}, (${spent} + ${sum})::text, true)::bigint <= ${this.cutOff} `,
      sql`THEN true ELSE switchboard_read_over_budget(${spent}) END`,
    );
  }
}
