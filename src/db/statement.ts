/**
 * Declared raw SQL statements. A statement holds its text (a function from its arguments to a
 * Prisma.Sql, so it can take fixed fragments: optional CTEs, a caller's guard) and, for one that
 * returns rows, its result columns with their PostgreSQL types, from which its row type is
 * inferred. It runs on the app's Prisma client: in a transaction through it ($queryRaw /
 * $executeRaw), outside one on its pool's fast path (fast_path.ts); either way on the shared pool,
 * as a named prepared statement, with the client-gone check.
 * tests/sql_statements_test.ts prepares every declared statement against the migrated database and
 * checks the declaration (column names, types and their schema.prisma columns, parameter count).
 */
import type { Prisma } from "../generated/prisma/client.ts";
import type { SqlTx } from "./client.ts";
import { fastPathOf } from "./fast_path.ts";

/**
 * A result column: its type as PostgreSQL's format_type() names it, whether it may be null, and
 * (phantom) the value Prisma's raw queries give for it.
 */
export interface Column<T> {
  readonly type: string;
  readonly nullable: boolean;
  readonly value?: T;
}

/** A column that is never null; `.null` is the same column when it may be. */
export interface NotNullColumn<T> extends Column<T> {
  readonly null: Column<T | null>;
}

function column<T>(type: string): NotNullColumn<T> {
  return { type, nullable: false, null: { type, nullable: true } };
}

/** Column types, as $queryRaw returns them (json and jsonb parsed, to the shape the SQL builds). */
export const col = {
  text: column<string>("text"),
  integer: column<number>("integer"),
  bigint: column<bigint>("bigint"),
  boolean: column<boolean>("boolean"),
  float: column<number>("double precision"),
  timestamptz: column<Date>("timestamp with time zone"),
  json: <T>() => column<T>("json"),
  jsonb: <T>() => column<T>("jsonb"),
  /** A column of a schema.prisma enum (T: its generated type). */
  enum: <T extends string>(name: string) => column<T>(`"${name}"`),
};

export type Columns = Record<string, Column<unknown>>;

/** The row a statement with these columns returns. */
export type RowOf<C extends Columns> = { -readonly [K in keyof C]: C[K] extends Column<infer T> ? T : never };

/** What a statement runs on: the client or a transaction. */
export type Runner = Pick<SqlTx, "$queryRaw" | "$executeRaw">;

interface Declared<A> {
  /** Its text and parameters for these arguments (the same text for the same shape of arguments). */
  sql(args: A): Prisma.Sql;
  /** Arguments giving every shape of its text, for the statements test (values do not matter). */
  readonly shapes: readonly A[];
}

/** A statement that returns rows. */
export interface Query<A, C extends Columns> extends Declared<A> {
  readonly kind: "query";
  /** The result columns, in the statement's order. */
  readonly columns: C;
  rows(db: Runner, args: A): Promise<RowOf<C>[]>;
}

/** A statement run for its effect: returns the number of rows it changed. */
export interface Command<A> extends Declared<A> {
  readonly kind: "command";
  run(db: Runner, args: A): Promise<number>;
}

/** Any declared statement, as the statements test sees it. */
export type Statement =
  | {
    readonly kind: "query";
    readonly columns: Columns;
    sql(args: never): Prisma.Sql;
    readonly shapes: readonly unknown[];
  }
  | { readonly kind: "command"; sql(args: never): Prisma.Sql; readonly shapes: readonly unknown[] };

/** Declares a statement that returns rows with these columns. */
export function query<A, C extends Columns>(
  columns: C,
  sql: (args: A) => Prisma.Sql,
  shapes: readonly [NoInfer<A>, ...NoInfer<A>[]],
): Query<A, C> {
  const bigints = Object.keys(columns).filter((name) => columns[name].type === "bigint");
  return {
    kind: "query",
    columns,
    sql,
    shapes,
    rows: (db, args) => {
      const fast = fastPathOf(db);
      return fast ? fast.rows<RowOf<C>>(sql(args), bigints) : db.$queryRaw<RowOf<C>[]>(sql(args));
    },
  };
}

/** Declares a statement run for its effect (no rows back). */
export function command<A>(
  sql: (args: A) => Prisma.Sql,
  shapes: readonly [NoInfer<A>, ...NoInfer<A>[]],
): Command<A> {
  return {
    kind: "command",
    sql,
    shapes,
    run: (db, args) => fastPathOf(db)?.run(sql(args)) ?? db.$executeRaw(sql(args)),
  };
}

/** Whether `value` is a declared statement (the statements test collects a module's exports). */
export function isStatement(value: unknown): value is Statement {
  const kind = (value as { kind?: unknown } | null)?.kind;
  return typeof value === "object" && (kind === "query" || kind === "command") &&
    typeof (value as { sql?: unknown }).sql === "function";
}
