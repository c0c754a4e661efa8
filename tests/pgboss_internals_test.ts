/**
 * The private parts of pg-boss the app relies on (src/jobs/pgboss_internals.ts) were read in one
 * version: this fails when deno.lock holds another, and checks the shapes read against the
 * installed package (the cut of its insert, the NOTIFY wrapper and its channel).
 */
import assert from "node:assert/strict";
import { insertJobs, insertParts, PGBOSS_VERIFIED } from "../src/jobs/pgboss_internals.ts";

const squash = (sql: string) => sql.replace(/\s+/g, " ").trim();

Deno.test("deno.lock holds the pg-boss version whose internals were read", () => {
  const lock = JSON.parse(Deno.readTextFileSync(new URL("../deno.lock", import.meta.url)));
  const versions = Object.keys(lock.npm ?? {}).filter((key) => key.startsWith("pg-boss@"))
    .map((key) => key.slice("pg-boss@".length).split("_")[0]);
  assert.deepEqual(versions, [PGBOSS_VERIFIED], "read src/jobs/pgboss_internals.ts again, then update it");
});

Deno.test("pg-boss's insert is cut where its jobs go, with and without its NOTIFY", () => {
  const queue = { name: "q-1", table: "job" };
  const plain = insertParts("pgboss", { ...queue, notify: false });
  assert.equal(plain.notified, null);
  assert.equal(
    squash(`${plain.before}($1::text::json)${plain.after}`),
    squash(insertJobs("pgboss", { ...queue, returnId: true, notify: false })).replace(
      "$1::text::json",
      "($1::text::json)",
    ),
  );
  const notifying = insertParts("pgboss", { ...queue, notify: true });
  assert.match(notifying.after, /RETURNING id, start_after\s*$/);
  assert.equal(
    squash(notifying.notified!("my_jobs")),
    squash(`SELECT pg_notify(('pgboss_' || left(encode(sha224('pgboss'::bytea), 'hex'), 24)), 'q-1')
      FROM my_jobs WHERE start_after <= pgboss.job_now() LIMIT 1`),
  );
});
