/**
 * One real PostgreSQL database per test file (cloned from a migrated template), so test files
 * run in parallel and nothing truncates a shared database. Under `deno task test` the server is
 * started by tests/_helpers/run.ts; a bare `deno test` starts one for its own process.
 */
import pg from "pg";
import { ensureDatabase, startEmbeddedPostgres } from "../../src/db/embedded.ts";
import { applyMigrations } from "../../src/db/migrate.ts";

let server: Promise<{ adminUrl: string; template: string }> | undefined;

function testServer() {
  return server ??= (async () => {
    const adminUrl = Deno.env.get("TEST_PG_ADMIN_URL");
    const template = Deno.env.get("TEST_PG_TEMPLATE");
    if (adminUrl && template) return { adminUrl, template };
    const dir = await Deno.makeTempDir({ prefix: "switchboard-test-pg-" });
    await Deno.chmod(dir, 0o755);
    const started = await startEmbeddedPostgres({
      dir: `${dir}/data`,
      database: "postgres",
      persistent: false,
    });
    globalThis.addEventListener("unload", () => void started.stop());
    await ensureDatabase(started.adminUrl, "switchboard_template");
    await applyMigrations(started.adminUrl.replace(/\/postgres$/, "/switchboard_template"));
    return { adminUrl: started.adminUrl, template: "switchboard_template" };
  })();
}

export interface TestDatabase {
  url: string;
  adminUrl: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const { adminUrl, template } = await testServer();
  const name = `t_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  // CREATE DATABASE ... TEMPLATE needs the template to have no other sessions; retry briefly when
  // two files clone at the same moment.
  for (let attempt = 0;; attempt++) {
    try {
      await ensureDatabase(adminUrl, name, template);
      break;
    } catch (e) {
      if (attempt > 50 || !String(e).includes("being accessed")) throw e;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
    }
  }
  const url = adminUrl.replace(/\/postgres$/, `/${name}`);
  return {
    url,
    adminUrl,
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Every row of every table of the database at `url` (pgboss's too), as text: what a dump would hold. */
export async function dumpDatabase(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    const schemas = new Set(tables.map((t) => t.schema));
    if (!schemas.has("public") || !schemas.has("pgboss")) throw new Error(`schemas: ${[...schemas]}`);
    const parts: string[] = [];
    for (const t of tables) {
      const name = `${client.escapeIdentifier(t.schema)}.${client.escapeIdentifier(t.name)}`;
      const { rows } = await client.query<{ row: string }>(`SELECT t::text AS row FROM ${name} t`);
      parts.push(`${name}\n${rows.map((r) => r.row).join("\n")}`);
    }
    return parts.join("\n");
  } finally {
    await client.end();
  }
}
