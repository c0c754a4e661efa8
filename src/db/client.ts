/**
 * The Prisma client on a pg driver adapter. One client per app instance; `Db` is what services
 * receive, and `Tx` the same inside a transaction.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.ts";

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
  if (!options.onQuery) return new PrismaClient({ adapter });
  const onQuery = options.onQuery;
  const client = new PrismaClient({ adapter, log: [{ emit: "event", level: "query" }] });
  client.$on("query", (e) => onQuery(e.query));
  return client;
}
