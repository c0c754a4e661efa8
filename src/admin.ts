/**
 * `deno task admin <command>`: operator tasks on the configured database (DATABASE_URL, or the
 * embedded one under DATA_DIR).
 *
 *   create-user --email E --password P [--name N]
 *   create-workspace --owner-email E --name N
 *   add-member --email E --workspace-id W --role OWNER|MANAGER|AGENT|VIEWER
 *   rotate-secrets   reseals every stored secret under SECRETS_KEY (after it, the keys in
 *                    SECRETS_KEY_PREVIOUS can be dropped)
 */
import { parseArgs } from "node:util";
import { startApp } from "./startup.ts";
import { createUser, createWorkspaceFor } from "./workspaces/mod.ts";
import { AppError } from "./shared/errors.ts";
import { createLogger } from "./shared/logger.ts";
import { sealStoredSecrets } from "./db/seal_secrets.ts";

const USAGE = `usage: deno task admin <command> [options]
  create-user --email E --password P [--name N]
  create-workspace --owner-email E --name N
  add-member --email E --workspace-id W --role OWNER|MANAGER|AGENT|VIEWER
  rotate-secrets   reseal every stored secret under SECRETS_KEY`;

const [command, ...rest] = Deno.args;
if (!command || ["--help", "-h", "help"].includes(command)) {
  console.log(USAGE);
  Deno.exit(command ? 0 : 2);
}
const COMMANDS = ["create-user", "create-workspace", "add-member", "rotate-secrets"];
if (!COMMANDS.includes(command)) {
  console.error(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
  Deno.exit(2);
}
const { values } = parseArgs({
  args: rest,
  options: {
    email: { type: "string" },
    password: { type: "string" },
    name: { type: "string" },
    "owner-email": { type: "string" },
    "workspace-id": { type: "string" },
    role: { type: "string" },
  },
});

// An operator task, not a server: no first-owner set-up and no job workers (a running server
// delivers whatever these commands enqueue).
const app = await startApp({
  bootstrap: false,
  workers: false,
  logger: createLogger("warn"),
});
const { db } = app.deps;
try {
  switch (command) {
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
  }
} catch (e) {
  console.error(e instanceof AppError ? `${e.code}: ${e.message}` : String(e));
  Deno.exitCode = 1;
} finally {
  await app.stop();
}
// Explicitly: once the app has stopped, the process otherwise ends with 0 whatever Deno.exitCode says.
Deno.exit(Deno.exitCode);
