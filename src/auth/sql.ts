/** The SQL of the auth domain's hot paths (declared statements: src/db/statement.ts). */
import { Prisma } from "../generated/prisma/client.ts";
import { col, command, query } from "../db/statement.ts";
import type { Role } from "../generated/prisma/enums.ts";

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

/** An API token by the SHA-256 of its value (readCredential). */
export const apiTokenByHash = query(
  {
    id: col.text,
    workspaceId: col.text,
    label: col.text,
    revokedAt: col.timestamptz.null,
    lastUsedAt: col.timestamptz.null,
  },
  ({ tokenHash }: { tokenHash: string }) =>
    Prisma.sql`
      SELECT id, "workspaceId", label, "revokedAt", "lastUsedAt" FROM "ApiToken" WHERE "tokenHash" = ${tokenHash}`,
  [{ tokenHash: "h" }],
);

/** Records an API token's use (at most once a minute per token: readCredential decides). */
export const touchApiToken = command(
  ({ id, now }: { id: string; now: Date }) =>
    Prisma.sql`UPDATE "ApiToken" SET "lastUsedAt" = ${now} WHERE id = ${id}`,
  [{ id: "t", now: new Date(0) }],
);

/** A login session that is still live (not revoked; its user not deleted): one row or none. */
export const liveSession = query(
  { id: col.text },
  ({ sessionId, userId }: { sessionId: string; userId: string }) =>
    Prisma.sql`
      SELECT id FROM "Session" WHERE id = ${sessionId} AND "userId" = ${userId} AND "revokedAt" IS NULL`,
  [{ sessionId: "s", userId: "u" }],
);

/**
 * A live session's user and their role in a workspace (null: not a member there), in one
 * statement; no row when the session has ended.
 */
export const sessionMembership = query(
  { email: col.text, role: col.enum<Role>("Role").null },
  ({ sessionId, userId, workspaceId }: { sessionId: string; userId: string; workspaceId: string | null }) =>
    Prisma.sql`
      SELECT u.email, m.role
        FROM "Session" s
        JOIN "User" u ON u.id = s."userId"
        LEFT JOIN "Membership" m ON m."userId" = s."userId" AND m."workspaceId" = ${workspaceId}::text
       WHERE s.id = ${sessionId} AND s."userId" = ${userId} AND s."revokedAt" IS NULL`,
  [{ sessionId: "s", userId: "u", workspaceId: null }],
);
