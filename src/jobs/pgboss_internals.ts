/**
 * Every private part of pg-boss this app relies on, in one place. They were read in pg-boss
 * PGBOSS_VERIFIED; tests/pgboss_internals_test.ts fails when deno.lock holds another version (read
 * them again, then move the constant), and checks the shapes below against the installed package.
 *
 * - `dist/plans.js` `insertJobs(schema, { table, name, returnId, notify })`: the text of pg-boss's
 *   insert of a queue's jobs, whose jobs are JSON in its one parameter, written `$1::text::json`
 *   (pg-boss itself replaces it in insertFlowJobs). With `notify` it is
 *   `WITH ins AS (<insert> RETURNING id, start_after), notified AS (<pg_notify ... FROM ins ...>)
 *   SELECT id FROM ins WHERE (SELECT count(*) FROM notified) ...` (keyedInsertSql, insertParts).
 * - `dist/db.js` `Db`: its database adapter, with `opened` and its pg `pool` (NamedStatementsDb).
 * - The channel of its NOTIFY: `pgboss_` and 24 hex digits of the schema's SHA-224 (Jobs' wake-up of
 *   another process' workers).
 * - Its job table's columns `name`, `singleton_key`, `state`, `policy` and `start_after`
 *   (BRING_FORWARD_SQL), and `id` and `started_on` (markStartedSql).
 * - A job's `retry_count` goes up when it is fetched again after a start (`started_on` set: its
 *   fetch statement, `CASE WHEN started_on IS NOT NULL THEN retry_count + 1`), not when it fails
 *   (markStartedSql).
 */
import { insertJobs } from "pg-boss/dist/plans.js";
import Db from "pg-boss/dist/db.js";
import type pg from "pg";

export { Db, insertJobs };

/** The pg-boss version whose private parts were read (deno.lock's must be the same). */
export const PGBOSS_VERIFIED = "12.35.0";

/** Where pg-boss's insert takes its jobs (JSON text in its one parameter). */
const JOBS_PARAMETER = "$1::text::json";

/**
 * pg-boss's insert of a queue's jobs, cut where its jobs go, so that they can come from a SQL
 * expression of type json instead of its parameter: `before` + `(expression)` + `after` is the
 * insert, `RETURNING id` (and `start_after` with NOTIFY). `notified(from)`: with NOTIFY, pg-boss's
 * query that sends it (once, when a job inserted is due now) over the inserted rows named `from`;
 * it runs only as far as it is read. Throws when pg-boss's text is not the shape read.
 */
export interface InsertParts {
  before: string;
  after: string;
  notified: ((from: string) => string) | null;
}

export function insertParts(
  schema: string,
  queue: { name: string; table: string; notify: boolean },
): InsertParts {
  const text = insertJobs(schema, {
    table: queue.table,
    name: queue.name,
    returnId: true,
    notify: queue.notify,
  });
  let insert = text;
  let notified: InsertParts["notified"] = null;
  if (queue.notify) {
    const wrapper = text.match(
      /^\s*WITH ins AS \(([\s\S]*)\),\s*notified AS \(([\s\S]*?)\)\s*SELECT id FROM ins WHERE \(SELECT count\(\*\) FROM notified\) >= 0\s*$/,
    );
    const query = wrapper?.[2].trim();
    if (!wrapper || !query || query.split(/\bFROM ins\b/).length !== 2 || !query.includes("pg_notify(")) {
      throw new Error(`pg-boss ${PGBOSS_VERIFIED}'s insert with NOTIFY was read; this one differs:\n${text}`);
    }
    insert = wrapper[1];
    notified = (from) => query.replace(/\bFROM ins\b/, `FROM ${from}`);
  }
  const cut = insert.split(JOBS_PARAMETER);
  if (cut.length !== 2 || /\$\d/.test(cut.join("")) || !/RETURNING id\b/.test(cut[1])) {
    throw new Error(`pg-boss ${PGBOSS_VERIFIED}'s insert was read; this one differs:\n${text}`);
  }
  return { before: cut[0].trim(), after: cut[1].trimEnd(), notified };
}

/**
 * Marks the jobs of queue $1 with the ids $2 (still created: run here, never fetched) as started,
 * so that pg-boss counts the run as an attempt: failed after this, their next fetch is a retry.
 */
export function markStartedSql(schema: string): string {
  return `UPDATE ${schema}.job SET started_on = ${schema}.job_now()
   WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'created' AND started_on IS NULL`;
}

/** The pg pool of pg-boss' adapter (`pool`, private in its types, made by its open()). */
export const poolOf = (db: Db): pg.Pool => (db as unknown as { pool: pg.Pool }).pool;
