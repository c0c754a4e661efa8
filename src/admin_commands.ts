/**
 * The commands of `deno task admin` (src/admin.ts reads the command line and loads this module
 * only for a command to run).
 */
import { startApp } from "./startup.ts";
import { createUser, createWorkspaceFor, resetPassword } from "./workspaces/mod.ts";
import { AppError } from "./shared/errors.ts";
import { createLogger } from "./shared/logger.ts";
import { sealStoredSecrets } from "./db/seal_secrets.ts";

export interface AdminOptions {
  email?: string;
  password?: string;
  name?: string;
  "owner-email"?: string;
  "workspace-id"?: string;
  role?: string;
}

/** Runs one command against the configured database; returns the process' exit code. */
export async function runAdminCommand(command: string, values: AdminOptions): Promise<number> {
  // An operator task, not a server: no first-owner set-up and no job workers (a running server
  // delivers whatever these commands enqueue).
  const app = await startApp({
    bootstrap: false,
    workers: false,
    logger: createLogger("warn"),
  });
  const { db } = app.deps;
  let code = 0;
  try {
    switch (command) {
      case "reset-password": {
        const { user, password, revokedSessions } = await resetPassword(app.deps, values.email ?? "");
        // To stdout alone, once: the password is in no log and nowhere else.
        console.log(JSON.stringify({ email: user.email, password, revokedSessions }));
        break;
      }
      case "create-user": {
        const user = await createUser(app.deps, {
          email: values.email,
          password: values.password,
          name: values.name,
        });
        console.log(JSON.stringify(user));
        break;
      }
      case "create-workspace": {
        const owner = await db.user.findUnique({
          where: { email: (values["owner-email"] ?? "").toLowerCase() },
        });
        if (!owner) throw new Error(`no user with email ${values["owner-email"]}`);
        console.log(JSON.stringify(await createWorkspaceFor(app.deps, owner.id, values.name ?? "")));
        break;
      }
      case "add-member": {
        const role = values.role as "OWNER" | "MANAGER" | "AGENT" | "VIEWER";
        if (!["OWNER", "MANAGER", "AGENT", "VIEWER"].includes(role)) {
          throw new Error("--role must be OWNER, MANAGER, AGENT or VIEWER");
        }
        const user = await db.user.findUnique({ where: { email: (values.email ?? "").toLowerCase() } });
        if (!user) throw new Error(`no user with email ${values.email}`);
        const workspaceId = values["workspace-id"] ?? "";
        await db.membership.upsert({
          where: { userId_workspaceId: { userId: user.id, workspaceId } },
          create: { userId: user.id, workspaceId, role },
          update: { role },
        });
        console.log(JSON.stringify({ userId: user.id, workspaceId, role }));
        break;
      }
      case "rotate-secrets": {
        const resealed = await sealStoredSecrets(db, app.deps.secrets, "rotate");
        console.log(JSON.stringify({ kid: app.deps.secrets.kid, resealed }));
        break;
      }
      default:
        throw new Error(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (e) {
    console.error(e instanceof AppError ? `${e.code}: ${e.message}` : String(e));
    code = 1;
  } finally {
    await app.stop();
  }
  return code;
}
