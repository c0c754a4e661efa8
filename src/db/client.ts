/**
 * The Prisma client on a pg driver adapter. One client per app instance; `Db` is what services
 * receive, and `Tx` the same inside a transaction.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.ts";
import { throwIfClientGone } from "../shared/request_scope.ts";

export type Db = PrismaClient;
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

export interface PrismaOptions {
  /** Pool size. */
  max?: number;
  /** Called once per SQL statement Prisma sends (tests that count statements to catch N+1). */
  onQuery?: (sql: string) => void;
}

export function createPrisma(databaseUrl: string, options: PrismaOptions = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.max ?? 10 });
  if (!options.onQuery) return stopWhenClientGone(new PrismaClient({ adapter }));
  const onQuery = options.onQuery;
  const client = new PrismaClient({ adapter, log: [{ emit: "event", level: "query" }] });
  client.$on("query", (e) => onQuery(e.query));
  return stopWhenClientGone(client);
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
