/**
 * `deno task admin <command>`: operator tasks on the configured database (DATABASE_URL, or the
 * embedded one under DATA_DIR). The usage, and the answer to a mistyped command, come from the
 * arguments alone: the app (its database, migrations and job engine, and the modules behind them)
 * is loaded only for a command that needs it.
 */
import { parseArgs } from "node:util";

const USAGE = `usage: deno task admin <command> [options]
  reset-password EMAIL   print a new password for EMAIL (shown only now) and log them out everywhere
  create-user --email E --password P [--name N]
  create-workspace --owner-email E --name N
  add-member --email E --workspace-id W --role OWNER|MANAGER|AGENT|VIEWER
  rotate-secrets   reseal every stored secret under SECRETS_KEY (after it, the keys in
                   SECRETS_KEY_PREVIOUS can be dropped)`;

/** Exit code of a command line that cannot be run (sysexits' EX_USAGE is 64; 2 as shells use). */
const BAD_USAGE = 2;

const [command, ...rest] = Deno.args;
if (!command || ["--help", "-h", "help"].includes(command)) {
  console.log(USAGE);
  Deno.exit(command ? 0 : BAD_USAGE);
}
const COMMANDS = ["reset-password", "create-user", "create-workspace", "add-member", "rotate-secrets"];
if (!COMMANDS.includes(command)) {
  console.error(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
  Deno.exit(BAD_USAGE);
}
let parsed;
try {
  parsed = parseArgs({
    args: rest,
    allowPositionals: command === "reset-password",
    options: {
      email: { type: "string" },
      password: { type: "string" },
      name: { type: "string" },
      "owner-email": { type: "string" },
      "workspace-id": { type: "string" },
      role: { type: "string" },
    },
  });
} catch (e) {
  console.error(`${e instanceof Error ? e.message : e}\n${USAGE}`);
  Deno.exit(BAD_USAGE);
}
const { values, positionals } = parsed;
if (
  command === "reset-password" &&
  (positionals.length > 1 || (positionals.length ? values.email : !values.email))
) {
  console.error(`reset-password takes one EMAIL\n${USAGE}`);
  Deno.exit(BAD_USAGE);
}

// The app's modules include the generated Prisma client, which `deno task setup` writes (the image
// has it from its build).
try {
  await Deno.stat(new URL("./generated/prisma/client.ts", import.meta.url));
} catch {
  console.error("The Prisma client is not generated: run `deno task setup` first.");
  Deno.exit(78);
}
const { runAdminCommand } = await import("./admin_commands.ts");
Deno.exit(await runAdminCommand(command, { ...values, email: values.email ?? positionals[0] }));
