/**
 * The Prisma client on a pg driver adapter. One client per app instance; `Db` is what services
 * receive, and `Tx` the same inside a transaction.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import type pg from "pg";
import { PrismaClient } from "../generated/prisma/client.ts";
import { throwIfClientGone } from "../shared/request_scope.ts";
import { createPool } from "./pool.ts";

export type Db = PrismaClient;
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

export interface PrismaOptions {
  /** Pool size. */
  max?: number;
  /** Called once per SQL statement Prisma sends (tests that count statements to catch N+1). */
  onQuery?: (sql: string) => void;
  /** A pool made by ./pool.ts' createPool (its clients observable); default: one of `max`. */
  pool?: pg.Pool;
  /** false: commits do not wait for the disk (the job workers' client, Deps.jobDb). */
  synchronousCommit?: boolean;
}

/** How long an idle pooled connection is kept (the app's pool and pg-boss's). */
export const POOL_IDLE_MS = 5 * 60_000;

export function createPrisma(databaseUrl: string, options: PrismaOptions = {}): Db {
  // Connections stay open through a lull of a few minutes (pg's default closes them after 10 s
  // idle): a new one costs a backend start and re-preparing every named statement.
  const pool = options.pool ??
    createPool(databaseUrl, {
      max: options.max ?? 10,
      idleTimeoutMillis: POOL_IDLE_MS,
      synchronousCommit: options.synchronousCommit,
    });
  const adapter = new PrismaPg(pool, { statementNameGenerator: statementNames(), disposeExternalPool: true });
  if (!options.onQuery) return stopWhenClientGone(new PrismaClient({ adapter }));
  const onQuery = options.onQuery;
  const client = new PrismaClient({ adapter, log: [{ emit: "event", level: "query" }] });
  client.$on("query", (e) => onQuery(e.query));
  return stopWhenClientGone(client);
}

/** How many distinct statement texts get a name; later ones run unnamed (parsed and planned each time). */
const MAX_NAMED_STATEMENTS = 1_000;

/**
 * Names each distinct SQL text (`s0`, `s1`, ... in order of first use), so `pg` prepares it once
 * per connection and PostgreSQL keeps its plan: the read planner's statements are long and the
 * same per query shape (plan.ts caches them), and parsing and planning one cost about as much as
 * running it. A name always means the same text (names are never reused), as `pg` requires. The
 * map is bounded: a statement text first seen after MAX_NAMED_STATEMENTS stays unnamed (""), so an
 * endless variety of texts cannot grow this process or the server's prepared statements.
 */
export function statementNames(max = MAX_NAMED_STATEMENTS): (query: { sql: string }) => string {
  const names = new Map<string, string>();
  return ({ sql }) => {
    let name = names.get(sql);
    if (name === undefined && names.size < max) {
      name = `s${names.size}`;
      names.set(sql, name);
    }
    // `pg` sends a statement with an empty name unnamed, as it does one without a name.
    return name ?? "";
  };
}

/**
 * Every operation (in or out of a transaction, raw ones too) first checks the request scope: when
 * the request's client has gone, it throws ClientGoneError instead of sending the next statement,
 * so an abandoned request stops there (a transaction rolls back). Outside requests it is a no-op.
 */
function stopWhenClientGone(client: PrismaClient): Db {
  const extended = client.$extends({
    name: "stopWhenClientGone",
    query: {
      $allOperations({ args, query }) {
        throwIfClientGone();
        return query(args);
      },
    },
  });
  // The extension adds no API, only the check: the extended client is used as the plain one.
  return extended as unknown as Db;
}
