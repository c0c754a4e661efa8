/**
 * Raw statements on the Prisma client's own pg pool, beside `$queryRaw`: Prisma's raw path costs
 * two to three times pg's in this process' CPU per statement (its query interpreter, the
 * conversion of every argument and value), which the reply path (about 15 statements a
 * conversation) and every planned read pay. The declared statements (statement.ts) and the read
 * planner take this path when they run outside a transaction; inside one, the transaction's
 * connection is Prisma's, so they run through it. Values come back as `$queryRaw` gives them: the
 * same pg parsers (json and jsonb parsed, timestamptz as Date), with a declared bigint column
 * turned into a BigInt. tests/db_fast_path_test.ts checks both paths answer alike.
 *
 * A transaction of raw statements only (the reply path's: declared statements and job inserts) runs
 * here too, on one of the pool's connections (`transaction`), instead of Prisma's interactive
 * transaction, whose every statement takes the raw path.
 */
import type pg from "pg";
import type { Prisma } from "../generated/prisma/client.ts";
import { throwIfClientGone } from "../shared/request_scope.ts";
import { statementNames } from "./statement_names.ts";
import { GuardedClient } from "./pool.ts";

/**
 * A transaction of raw statements only: what db/transaction.ts `sqlTransaction` gives (on this
 * path), and what a Prisma `Tx` has too. Code that takes a SqlTx writes through declared
 * statements (statement.ts) and job inserts, never through Prisma's models.
 */
export interface SqlTx {
  $queryRaw<T = unknown>(sql: Prisma.Sql): Promise<T>;
  $executeRaw(sql: Prisma.Sql): Promise<number>;
  $queryRawUnsafe<T = unknown>(text: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(text: string, ...values: unknown[]): Promise<number>;
}

export interface FastPath {
  /**
   * The rows of a statement (`bigints`: the columns to turn into BigInt; `types`: pg's parsers of
   * its values, such as pool.ts TEXT_AS_BYTES).
   */
  rows<R>(sql: Statement, bigints?: readonly string[]): Promise<R[]>;
  /** The number of rows a statement changed. */
  run(sql: Prisma.Sql): Promise<number>;
  /**
   * `fn` in a transaction on one connection: committed when it resolves, rolled back when it
   * throws. Statements on its `tx` take this path too (fastPathOf(tx) is the connection's).
   */
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  /**
   * Ends the pool unless Prisma's $disconnect did: it does only when Prisma itself connected, and a
   * client used through this path alone never does.
   */
  close(): Promise<void>;
}

type Statement = Prisma.Sql | { text: string; values: unknown[]; types?: pg.CustomTypesConfig };

const paths = new WeakMap<object, FastPath>();

/** The fast path of a client made by createPrisma; undefined for a transaction (or any other runner). */
export const fastPathOf = (db: object): FastPath | undefined => paths.get(db);

/** Gives `client` (what createPrisma returns) its fast path on `pool`, the pool its adapter uses. */
export function addFastPath(client: object, pool: pg.Pool, onQuery?: (sql: string) => void): void {
  // Its own names: a name is bound to one text per connection, and Prisma's adapter names its own.
  const nameOf = statementNames(undefined, "f");
  // `before`: what must go ahead of the statement (a transaction's BEGIN), and how to list it.
  const on = (runner: pg.Pool | pg.PoolClient, before?: Before): Send => async (text, values, types) => {
    // As the Prisma client's extension does (client.ts): a gone client's request stops here.
    throwIfClientGone();
    const ahead = await before?.(values);
    onQuery?.(ahead ? `${ahead};\n${text}` : text);
    // A text without parameters may hold several commands, which a named (extended) query cannot.
    return await runner.query(values.length ? { name: nameOf({ sql: text }), text, values, types } : text);
  };
  const send = on(pool);
  paths.set(client, {
    rows: (sql, bigints) => rowsOf(send, sql, bigints),
    async run(sql) {
      return (await send(sql.text, sql.values)).rowCount ?? 0;
    },
    async transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T> {
      const connection = await pool.connect();
      const control = (text: string) => {
        onQuery?.(text);
        return connection.query(text);
      };
      // BEGIN goes with the transaction's first statement, in its round trip, when that statement
      // has parameters (GuardedClient.sendAhead); otherwise on its own. None when `fn` sends nothing.
      let begun = false;
      const sendHere = on(connection, async (values) => {
        if (begun) return null;
        begun = true;
        if (values.length && connection instanceof GuardedClient) {
          connection.sendAhead(BEGIN);
          return BEGIN.join("; ");
        }
        await control(BEGIN.join("; "));
        return null;
      });
      const tx = sqlTxOn(sendHere);
      paths.set(tx, {
        rows: (sql, bigints) => rowsOf(sendHere, sql, bigints),
        run: tx.$executeRaw,
        // One already open: `fn` joins it.
        transaction: (inner) => inner(tx),
        close: () => Promise.resolve(),
      });
      let broken: Error | undefined;
      try {
        const result = await fn(tx);
        if (begun) await control("COMMIT");
        return result;
      } catch (error) {
        if (begun) {
          await control("ROLLBACK").catch((e) => {
            broken = e instanceof Error ? e : new Error(String(e));
          });
        }
        throw error;
      } finally {
        // A connection that could not roll back is discarded, never handed to the next caller; so
        // is one whose BEGIN never left (its statement failed before it was sent).
        const unsent = connection instanceof GuardedClient && connection.sendingAhead;
        connection.release(broken ?? (unsent ? new Error("statements left unsent") : undefined));
      }
    },
    async close() {
      if (!pool.ended) await pool.end();
    },
  });
}

/** How long a transaction here may sit idle between statements before PostgreSQL ends it. */
const IDLE_IN_TRANSACTION = "15s";

/** A transaction's start: as Prisma's interactive transactions are bounded, one left open is ended. */
const BEGIN = ["BEGIN", `SET LOCAL idle_in_transaction_session_timeout = '${IDLE_IN_TRANSACTION}'`];

type Send = (text: string, values: unknown[], types?: pg.CustomTypesConfig) => Promise<pg.QueryResult>;

/** Run before a statement is sent: the statements sent ahead of it (to list with it), or null. */
type Before = (values: unknown[]) => Promise<string | null>;

async function rowsOf<R>(send: Send, sql: Statement, bigints: readonly string[] = []): Promise<R[]> {
  const { rows } = await send(sql.text, sql.values, "types" in sql ? sql.types : undefined);
  for (const row of rows) {
    for (const column of bigints) if (row[column] != null) row[column] = BigInt(row[column]);
  }
  return rows as R[];
}

/**
 * The raw methods of a Prisma transaction, on one connection. Undeclared statements answer pg's
 * values (a bigint as text): declared ones (statement.ts) convert theirs as Prisma's raw path does.
 */
function sqlTxOn(send: Send): SqlTx {
  return {
    $queryRaw: async <T>(sql: Prisma.Sql) => (await send(sql.text, sql.values)).rows as T,
    $executeRaw: async (sql: Prisma.Sql) => (await send(sql.text, sql.values)).rowCount ?? 0,
    $queryRawUnsafe: async <T>(text: string, ...values: unknown[]) => (await send(text, values)).rows as T,
    $executeRawUnsafe: async (text: string, ...values: unknown[]) => (await send(text, values)).rowCount ?? 0,
  };
}
