/**
 * The embedded PostgreSQL's backends run with glibc's allocator settings of src/db/embedded.ts
 * (large answers built from the heap instead of a fresh mmap each run): the postmaster, and so
 * every backend it forks, has them in its environment.
 */
import assert from "node:assert/strict";
import { startEmbeddedPostgres } from "../src/db/embedded.ts";

Deno.test("the embedded PostgreSQL starts with the allocator settings for large answers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-allocator-" });
  // As root the cluster belongs to the postgres user, who must reach it.
  await Deno.chmod(dir, 0o755);
  const db = await startEmbeddedPostgres({
    dir: `${dir}/postgres`,
    database: "switchboard",
    persistent: false,
  });
  try {
    const pid = Number((await Deno.readTextFile(`${dir}/postgres/postmaster.pid`)).split("\n")[0]);
    const environment = (await Deno.readTextFile(`/proc/${pid}/environ`)).split("\0");
    assert.ok(environment.includes(`MALLOC_MMAP_THRESHOLD_=${4 * 2 ** 20}`), "mmap threshold");
    assert.ok(environment.includes(`MALLOC_TRIM_THRESHOLD_=${8 * 2 ** 20}`), "trim threshold");
  } finally {
    await db.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
