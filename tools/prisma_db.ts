/**
 * Runs the Prisma CLI with the wasm schema engine (tools/schema-engine) against DATABASE_URL or,
 * when it is unset, against the same embedded PostgreSQL the server uses (DATA_DIR/postgres).
 * Used by the db:migrate:* tasks: `deno run -A tools/prisma_db.ts migrate status`.
 */
import { startEmbeddedPostgres } from "../src/db/embedded.ts";

const root = new URL("..", import.meta.url).pathname;
let databaseUrl = Deno.env.get("DATABASE_URL");
let stop = () => Promise.resolve();
if (!databaseUrl) {
  const dataDir = Deno.env.get("DATA_DIR") ?? `${root}.data`;
  const embedded = await startEmbeddedPostgres({ dir: `${dataDir}/postgres`, database: "switchboard" });
  databaseUrl = embedded.url;
  stop = embedded.stop;
}
const { code } = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "npm:prisma@7.10.1", ...Deno.args],
  cwd: root,
  env: { DATABASE_URL: databaseUrl, PRISMA_SCHEMA_ENGINE_BINARY: `${root}tools/schema-engine` },
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
}).spawn().status;
await stop();
Deno.exit(code);
