/** The SQL of the workspace's usage (declared statements: src/db/statement.ts). */
import { Prisma } from "../generated/prisma/client.ts";
import { col, query } from "../db/statement.ts";

/**
 * The workspace's delivered outbound messages (DELIVERED or READ) created in [from, to), counted per
 * channel, UTC day of creation, pricing category and billable. One statement: the workspace's
 * channels, and for each its delivered messages in the range through the partial index
 * "Message_delivered_idx" (migration 20261129141500). The count is grouped inside the LATERAL so it
 * stays one index range per channel: as a plain join the planner may read the range of every
 * workspace's channels and keep this one's (a year of one workspace's 10 of 200 channels over a
 * million messages: 320 ms instead of 120 ms). Ordered byte-wise, the same on any database collation.
 */
export const usageCounts = query(
  {
    channelId: col.text,
    day: col.text,
    category: col.text.null,
    billable: col.boolean.null,
    messages: col.integer,
  },
  ({ workspaceId, from, to }: { workspaceId: string; from: Date; to: Date }) =>
    Prisma.sql`
      SELECT c.id AS "channelId", g.day, g.category, g.billable, g.messages
        FROM "Channel" c
       CROSS JOIN LATERAL (
         SELECT to_char(m."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
                m.pricing ->> 'category' AS category,
                CASE WHEN jsonb_typeof(m.pricing -> 'billable') = 'boolean'
                     THEN (m.pricing -> 'billable')::boolean END AS billable,
                count(*)::int AS messages
           FROM "Message" m
          WHERE m."channelId" = c.id
            AND m.direction = 'OUTBOUND' AND m.status IN ('DELIVERED', 'READ')
            AND m."createdAt" >= ${from} AND m."createdAt" < ${to}
          GROUP BY 1, 2, 3
       ) g
       WHERE c."workspaceId" = ${workspaceId}
       ORDER BY g.day, c.id COLLATE "C", g.category COLLATE "C", g.billable`,
  [{ workspaceId: "w", from: new Date(0), to: new Date(0) }],
);
