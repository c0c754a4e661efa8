/**
 * Applies prisma/migrations at start-up without Prisma's schema engine (which cannot be downloaded
 * here; the CLI's `migrate` commands use tools/schema-engine instead).
 *
 * It keeps Prisma's own bookkeeping, so `prisma migrate status` and `prisma migrate deploy` agree with
 * it afterwards: the `_prisma_migrations` table with Prisma's columns, the checksum Prisma computes
 * (sha256 hex of migration.sql's bytes), and Prisma's advisory lock key, so this runner and the CLI
 * never migrate one database at the same time (and neither do two servers starting together).
 *
 * Unlike Prisma, each migration runs in an explicit transaction together with its bookkeeping row:
 * a failed migration leaves nothing behind (no half-applied script, no "failed" row), and the next
 * start simply tries again.
 */
import { fileURLToPath } from "node:url";
import pg from "pg";

/** Prisma's advisory lock key for migrations (see prisma-engines, sql-schema-connector). */
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

/** The table exactly as Prisma's schema engine creates it on PostgreSQL. */
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface ApplyMigrationsOptions {
  /** Folder holding `<name>/migration.sql`; defaults to the repository's prisma/migrations. */
  migrationsDir?: string | URL;
  log?: (msg: string) => void;
}

interface LocalMigration {
  name: string;
  sql: string;
  checksum: string;
}

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  started_at: Date;
  logs: string | null;
}

export async function applyMigrations(
  databaseUrl: string,
  options: ApplyMigrationsOptions = {},
): Promise<{ applied: string[] }> {
  const dir = options.migrationsDir ?? new URL("../../prisma/migrations", import.meta.url);
  const log = options.log ?? (() => {});
  const local = await readMigrations(dir);

  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // Session-level lock: held across the per-migration transactions below.
    const { rows: [{ locked }] } = await client.query("SELECT pg_try_advisory_lock($1) AS locked", [
      PRISMA_MIGRATE_LOCK_KEY,
    ]);
    if (!locked) {
      log("waiting for another process to finish migrating (advisory lock 72707369)");
      await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK_KEY]);
    }
    await client.query(CREATE_MIGRATIONS_TABLE);

    // Read only after taking the lock: whoever held it may just have applied what we were about to.
    const { rows } = await client.query<MigrationRow>(
      `SELECT migration_name, checksum, finished_at, rolled_back_at, started_at, logs
         FROM "_prisma_migrations" ORDER BY started_at`,
    );
    const applied = new Map<string, MigrationRow>();
    for (const row of rows) {
      if (row.rolled_back_at) continue; // resolved with `prisma migrate resolve --rolled-back`
      if (!row.finished_at) {
        throw new Error(
          `Migration ${row.migration_name} is recorded as failed in _prisma_migrations (started ` +
            `${row.started_at.toISOString()}${
              row.logs ? `: ${row.logs.trim()}` : ""
            }). Fix the database, then ` +
            `mark it with \`prisma migrate resolve --rolled-back ${row.migration_name}\` (or --applied) ` +
            `before starting again.`,
        );
      }
      applied.set(row.migration_name, row);
    }

    for (const migration of local) {
      const row = applied.get(migration.name);
      if (row && row.checksum !== migration.checksum) {
        throw new Error(
          `Migration ${migration.name} was modified after it was applied: prisma/migrations/` +
            `${migration.name}/migration.sql has checksum ${migration.checksum}, the database recorded ` +
            `${row.checksum}. Restore the file (never edit an applied migration; add a new one instead).`,
        );
      }
    }
    const localNames = new Set(local.map((m) => m.name));
    for (const name of applied.keys()) {
      if (!localNames.has(name)) log(`migration ${name} is applied in the database but missing in ${dir}`);
    }

    const done: string[] = [];
    for (const migration of local.filter((m) => !applied.has(m.name))) {
      log(`applying migration ${migration.name}`);
      const startedAt = new Date();
      await client.query("BEGIN");
      try {
        // Simple-protocol query: the whole multi-statement script at once, as Prisma sends it.
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations"
             (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, $4, clock_timestamp(), 1)`,
          [crypto.randomUUID(), migration.checksum, migration.name, startedAt],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw new Error(
          `Migration ${migration.name} failed and was rolled back: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      done.push(migration.name);
    }
    return { applied: done };
  } finally {
    // Ending the session also releases the advisory lock.
    await client.end();
  }
}

/** `<dir>/<name>/migration.sql`, in name order (the timestamp prefix), like Prisma. */
async function readMigrations(dir: string | URL): Promise<LocalMigration[]> {
  const base = (typeof dir === "string" ? dir : fileURLToPath(dir)).replace(/\/+$/, "");
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(base)) if (entry.isDirectory) names.push(entry.name);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw new Error(`No migrations folder at ${base}`);
    throw error;
  }
  names.sort();
  return await Promise.all(names.map(async (name) => {
    const path = `${base}/${name}/migration.sql`;
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new Error(`Migration folder ${name} has no migration.sql`);
      }
      throw error;
    }
    // Prisma's checksum: sha256 of the file's bytes, lowercase hex.
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
    const checksum = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
    return { name, sql: new TextDecoder().decode(bytes), checksum };
  }));
}
