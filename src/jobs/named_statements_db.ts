/**
 * pg-boss's own database adapter with its statements sent named. pg-boss sends each statement
 * unnamed, so PostgreSQL parses and plans it on every call: fetching and completing jobs cost more
 * to plan than to run (about 1.4 ms of PostgreSQL's time per conversation in `deno task bench
 * inbound`). Named, each statement text is prepared once per connection, as the app's own are
 * (db/statement_names.ts). Everything else (the pool, LISTEN, transactions) is pg-boss's adapter unchanged.
 */
import { Db, poolOf } from "./pgboss_internals.ts";
import type pg from "pg";
import { statementNames } from "../db/statement_names.ts";

export class NamedStatementsDb extends Db {
  readonly #nameOf = statementNames();

  override executeSql(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    if (!this.opened) throw new Error("Database not opened. Call open() before executing SQL.");
    const pool = poolOf(this);
    // A statement without parameters may hold several commands (the schema's migrations), which
    // PostgreSQL refuses to prepare: it goes as pg-boss sends it. Every hot statement has values.
    if (values === undefined || values.length === 0) return pool.query(text);
    return pool.query({ name: this.#nameOf({ sql: text }), text, values });
  }
}
