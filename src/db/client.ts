/**
 * The Prisma client on a pg driver adapter. One client per app instance; `Db` is what services
 * receive, and `Tx` the same inside a transaction.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import type pg from "pg";
import { PrismaClient } from "../generated/prisma/client.ts";
import { throwIfClientGone } from "../shared/request_scope.ts";
import { createPool } from "./pool.ts";
import { statementNames } from "./statement_names.ts";
import { addFastPath } from "./fast_path.ts";
import { withAfterCommit } from "./after_commit.ts";

export type Db = PrismaClient;
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

/** A transaction of raw statements only (see fast_path.ts). */
export type { SqlTx } from "./fast_path.ts";

export interface PrismaOptions {
  /** Pool size. */
  max?: number;
  /** Called once per SQL statement Prisma sends (tests that count statements to catch N+1). */
  onQuery?: (sql: string) => void;
  /** A pool made by ./pool.ts' createPool (its clients observable); default: one of `max`. */
  pool?: pg.Pool;
  /** false: commits do not wait for the disk (the job workers' client, app.ts workerDeps). */
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
  const onQuery = options.onQuery;
  let client: Db;
  if (!onQuery) client = stopWhenClientGone(new PrismaClient({ adapter }));
  else {
    const logged = new PrismaClient({ adapter, log: [{ emit: "event", level: "query" }] });
    logged.$on("query", (e) => onQuery(e.query));
    client = stopWhenClientGone(logged);
  }
  client = withAfterCommit(client);
  addFastPath(client, pool, onQuery);
  return client;
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
