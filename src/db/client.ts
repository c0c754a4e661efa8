/**
 * The Prisma client on a pg driver adapter. One client per app instance; `Db` is what services
 * receive, and `Tx` the same inside a transaction.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.ts";

export type Db = PrismaClient;
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

export function createPrisma(databaseUrl: string, options: { max?: number } = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.max ?? 10 });
  return new PrismaClient({ adapter });
}
