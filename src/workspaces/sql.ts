/** The SQL of the workspaces domain (declared statements: src/db/statement.ts). */
import { Prisma } from "../generated/prisma/client.ts";
import type { Role } from "../generated/prisma/enums.ts";
import { col, query } from "../db/statement.ts";

/**
 * A user's workspaces with their role, oldest membership first. One statement (one snapshot): a
 * workspace deleted meanwhile is gone with its membership, never a membership without its workspace.
 */
export const membershipsOfUser = query(
  { id: col.text, name: col.text, role: col.enum<Role>("Role") },
  ({ userId }: { userId: string }) =>
    Prisma.sql`
      SELECT w.id, w.name, m.role FROM "Membership" m JOIN "Workspace" w ON w.id = m."workspaceId"
       WHERE m."userId" = ${userId} ORDER BY m."createdAt", m.id`,
  [{ userId: "u" }],
);
