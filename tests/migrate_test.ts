/**
 * The start-up migration runner (src/db/migrate.ts) against a real, empty PostgreSQL database: it
 * applies the migrations, is a no-op the second time, serialises concurrent runs, refuses edited or
 * failed migrations, and leaves Prisma's bookkeeping such that `prisma migrate status` (through
 * tools/schema-engine) reports the database up to date.
 *
 * Needs TEST_PG_ADMIN_URL (set by `deno task test`): an admin URL of a server where it may create and drop a database.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { applyMigrations } from "../src/db/migrate.ts";

const adminUrl = Deno.env.get("TEST_PG_ADMIN_URL") ?? Deno.env.get("TEST_DATABASE_URL");
const repoRoot = new URL("..", import.meta.url).pathname;

async function migrationNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(new URL("../prisma/migrations", import.meta.url))) {
    if (e.isDirectory) names.push(e.name);
  }
  return names.sort();
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

Deno.test({
  name: "applyMigrations: empty database -> migrated, idempotent, and prisma migrate status agrees",
  ignore: !adminUrl,
  fn: async (t) => {
    const name = `migrate_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    await withAdmin((c) => c.query(`CREATE DATABASE "${name}"`));
    const url = new URL(adminUrl!);
    url.pathname = `/${name}`;
    const databaseUrl = url.toString();
    const db = new pg.Client({ connectionString: databaseUrl });
    try {
      await db.connect();
      const expected = await migrationNames();
      assert.ok(expected.length >= 1 && expected[0].endsWith("_init"));

      await t.step(
        "two runners at once: one applies everything, the other waits and finds nothing",
        async () => {
          const [a, b] = await Promise.all([applyMigrations(databaseUrl), applyMigrations(databaseUrl)]);
          assert.deepEqual([...a.applied, ...b.applied], expected);
          const { rows } = await db.query(
            `SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations"
           ORDER BY migration_name`,
          );
          assert.deepEqual(rows.map((r) => r.migration_name), expected);
          for (const row of rows) {
            assert.match(row.checksum, /^[0-9a-f]{64}$/);
            assert.ok(row.finished_at instanceof Date);
            assert.equal(row.applied_steps_count, 1);
          }
          const tables = await db.query(`SELECT to_regclass('"Workspace"') IS NOT NULL AS ok`);
          assert.equal(tables.rows[0].ok, true);
        },
      );

      await t.step("second run applies nothing", async () => {
        assert.deepEqual(await applyMigrations(databaseUrl), { applied: [] });
      });

      await t.step("prisma migrate status (via tools/schema-engine) reports up to date", async () => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["task", "db:migrate:status"],
          cwd: repoRoot,
          env: { DATABASE_URL: databaseUrl, NO_COLOR: "1" },
          stdout: "piped",
          stderr: "piped",
        }).output();
        const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
        assert.equal(out.code, 0, text);
        assert.match(text, /Database schema is up to date!/);
      });

      await t.step("prisma migrate dev --create-only writes the migration of a schema change", async () => {
        // A copy of prisma/ with one column more, so the repository's migrations stay untouched.
        const dir = await Deno.makeTempDir({ prefix: "migrate-new-" });
        try {
          await Deno.mkdir(`${dir}/prisma/migrations`, { recursive: true });
          for (const m of [...expected, "migration_lock.toml"]) {
            await new Deno.Command("cp", {
              args: ["-r", `${repoRoot}/prisma/migrations/${m}`, `${dir}/prisma/migrations/`],
            }).output();
          }
          const schema = await Deno.readTextFile(`${repoRoot}/prisma/schema.prisma`);
          const changed = schema.replace(/model Workspace \{\n/, "model Workspace {\n  probeNote String?\n");
          assert.notEqual(changed, schema);
          await Deno.writeTextFile(`${dir}/prisma/schema.prisma`, changed);
          await Deno.writeTextFile(
            `${dir}/prisma.config.ts`,
            `export default { schema: "./prisma/schema.prisma", migrations: { path: "./prisma/migrations" },
               datasource: { url: ${JSON.stringify(databaseUrl)} } };\n`,
          );
          const out = await new Deno.Command(Deno.execPath(), {
            args: [
              "run",
              "-A",
              "--config",
              `${repoRoot}/deno.json`,
              "npm:prisma@7.10.1",
              "migrate",
              "dev",
              "--create-only",
              "--name",
              "probe",
            ],
            cwd: dir,
            env: { PRISMA_SCHEMA_ENGINE_BINARY: `${repoRoot}/tools/schema-engine`, NO_COLOR: "1" },
            stdout: "piped",
            stderr: "piped",
          }).output();
          const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
          assert.equal(out.code, 0, text);
          const created = [];
          for await (const e of Deno.readDir(`${dir}/prisma/migrations`)) {
            if (e.name.endsWith("_probe")) created.push(e.name);
          }
          assert.equal(created.length, 1, text);
          const sql = await Deno.readTextFile(`${dir}/prisma/migrations/${created[0]}/migration.sql`);
          assert.match(sql, /ALTER TABLE "Workspace" ADD COLUMN\s+"probeNote" TEXT;/);
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      });

      await t.step("refuses an applied migration whose file changed", async () => {
        await db.query(
          `UPDATE "_prisma_migrations" SET checksum = repeat('0', 64) WHERE migration_name = $1`,
          [
            expected[0],
          ],
        );
        await assert.rejects(applyMigrations(databaseUrl), /was modified after it was applied/);
        await db.query(`UPDATE "_prisma_migrations" SET checksum = $2 WHERE migration_name = $1`, [
          expected[0],
          await sha256Hex(`../prisma/migrations/${expected[0]}/migration.sql`),
        ]);
        assert.deepEqual(await applyMigrations(databaseUrl), { applied: [] });
      });

      await t.step("refuses while a migration is recorded as failed", async () => {
        await db.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, logs) VALUES ($1, $2, $3, 'boom')`,
          [crypto.randomUUID(), "0".repeat(64), "29990101000000_broken"],
        );
        await assert.rejects(applyMigrations(databaseUrl), /29990101000000_broken is recorded as failed/);
      });
    } finally {
      await db.end().catch(() => {});
      await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    }
  },
});

async function sha256Hex(relativePath: string): Promise<string> {
  const bytes = await Deno.readFile(new URL(relativePath, import.meta.url));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
