/** The SQL of the event bus (declared statements: src/db/statement.ts). */
import { Prisma } from "../generated/prisma/client.ts";
import { col, query } from "../db/statement.ts";

/**
 * One batch's statement: every listener's share (its CTEs, and one expression over them) as one
 * statement; `results` holds the value of each share's expression, in the shares' order.
 */
export const publishBatch = query(
  { results: col.json<unknown[]>() },
  ({ shares }: { shares: ReadonlyArray<{ ctes: Prisma.Sql; result: Prisma.Sql }> }) =>
    Prisma.sql`
        WITH ${Prisma.join(shares.map((share) => share.ctes), ", ")}
        SELECT json_build_array(${Prisma.join(shares.map((share) => share.result), ", ")}) AS results`,
  [{
    shares: [{ ctes: Prisma.sql`one AS (SELECT 1 AS n)`, result: Prisma.sql`(SELECT count(*) FROM one)` }],
  }],
);
