/** The SQL of the auth domain's hot paths (declared statements: src/db/statement.ts). */
import { Prisma } from "../generated/prisma/client.ts";
import { col, query } from "../db/statement.ts";

/**
 * Counts one hit on `key` and returns the count in the current window. One statement: the upsert
 * is atomic across processes, and up to 100 expired rows of other keys are deleted on the way (SKIP LOCKED,
 * so concurrent hits never wait on each other's cleanup).
 */
export const rateLimitHit = query(
  { count: col.integer, windowEnd: col.timestamptz },
  ({ key, now, end }: { key: string; now: Date; end: Date }) =>
    Prisma.sql`
    WITH expired AS (
      DELETE FROM "RateLimit" WHERE "key" IN (
        SELECT "key" FROM "RateLimit" WHERE "windowEnd" <= ${now} AND "key" <> ${key}
        LIMIT 100 FOR UPDATE SKIP LOCKED
      )
    )
    INSERT INTO "RateLimit" ("key", "count", "windowEnd") VALUES (${key}, 1, ${end})
    ON CONFLICT ("key") DO UPDATE SET
      "count" = CASE WHEN "RateLimit"."windowEnd" <= ${now} THEN 1 ELSE "RateLimit"."count" + 1 END,
      "windowEnd" = CASE WHEN "RateLimit"."windowEnd" <= ${now} THEN ${end} ELSE "RateLimit"."windowEnd" END
    RETURNING "count", "windowEnd"`,
  [{ key: "k", now: new Date(0), end: new Date(0) }],
);
