/**
 * Raw statements on the Prisma client's own pg pool, beside `$queryRaw`: Prisma's raw path costs
 * two to three times pg's in this process' CPU per statement (its query interpreter, the
 * conversion of every argument and value), which the reply path (about 15 statements a
 * conversation) and every planned read pay. The declared statements (statement.ts) and the read
 * planner take this path when they run outside a transaction; inside one, the transaction's
 * connection is Prisma's, so they run through it. Values come back as `$queryRaw` gives them: the
 * same pg parsers (json and jsonb parsed, timestamptz as Date), with a declared bigint column
 * turned into a BigInt. tests/db_fast_path_test.ts checks both paths answer alike.
 */
import type pg from "pg";
import type { Prisma } from "../generated/prisma/client.ts";
import { throwIfClientGone } from "../shared/request_scope.ts";
import { statementNames } from "./statement_names.ts";

export interface FastPath {
  /** The rows of a statement (`bigints`: the columns to turn into BigInt). */
  rows<R>(sql: Prisma.Sql | { text: string; values: unknown[] }, bigints?: readonly string[]): Promise<R[]>;
  /** The number of rows a statement changed. */
  run(sql: Prisma.Sql): Promise<number>;
  /**
   * Ends the pool unless Prisma's $disconnect did: it does only when Prisma itself connected, and a
   * client used through this path alone never does.
   */
  close(): Promise<void>;
}

const paths = new WeakMap<object, FastPath>();

/** The fast path of a client made by createPrisma; undefined for a transaction (or any other runner). */
export const fastPathOf = (db: object): FastPath | undefined => paths.get(db);

/** Gives `client` (what createPrisma returns) its fast path on `pool`, the pool its adapter uses. */
export function addFastPath(client: object, pool: pg.Pool, onQuery?: (sql: string) => void): void {
  // Its own names: a name is bound to one text per connection, and Prisma's adapter names its own.
  const nameOf = statementNames(undefined, "f");
  const send = async (text: string, values: unknown[]) => {
    // As the Prisma client's extension does (client.ts): a gone client's request stops here.
    throwIfClientGone();
    onQuery?.(text);
    return await pool.query({ name: nameOf({ sql: text }), text, values });
  };
  paths.set(client, {
    async rows<R>(sql: Prisma.Sql | { text: string; values: unknown[] }, bigints: readonly string[] = []) {
      const { rows } = await send(sql.text, sql.values);
      for (const row of rows) {
        for (const column of bigints) if (row[column] != null) row[column] = BigInt(row[column]);
      }
      return rows as R[];
    },
    async run(sql) {
      return (await send(sql.text, sql.values)).rowCount ?? 0;
    },
    async close() {
      if (!pool.ended) await pool.end();
    },
  });
}
