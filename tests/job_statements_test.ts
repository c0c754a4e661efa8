/**
 * pg-boss's statements go named (jobs/named_statements_db.ts): PostgreSQL prepares each text once
 * per connection and, with the pool's plan_cache_mode, keeps one generic plan for it, where sent
 * unnamed every fetch and completion was parsed and planned again. A statement without parameters
 * (the schema's multi-command migrations) still goes unnamed, as PostgreSQL cannot prepare it.
 */
import assert from "node:assert/strict";
import { createTestDatabase } from "./_helpers/db.ts";
import { NamedStatementsDb } from "../src/jobs/named_statements_db.ts";
import { startTestApp } from "./_helpers/app.ts";
import type { Jobs } from "../src/jobs/boss.ts";

Deno.test("a parameterized statement is prepared once and run on its generic plan; a multi-command one runs unnamed", async () => {
  const database = await createTestDatabase();
  // One connection, so every statement below meets the session that prepared the earlier ones.
  const db = new NamedStatementsDb({
    connectionString: database.url,
    max: 1,
    options: "-c plan_cache_mode=force_generic_plan",
  });
  await db.open();
  try {
    const text = "SELECT $1::int + 1 AS n";
    for (let i = 0; i < 3; i++) assert.equal((await db.executeSql(text, [i])).rows[0].n, i + 1);
    const { rows } = await db.executeSql(
      "SELECT name, generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE statement = $1",
      [text],
    );
    assert.deepEqual(rows.map((r) => [r.generic, r.custom]), [[3, 0]]);
    assert.match(rows[0].name, /^s\d+$/);

    await db.executeSql("CREATE TABLE named_probe (n int); INSERT INTO named_probe VALUES (7)");
    assert.deepEqual((await db.executeSql("SELECT n FROM named_probe WHERE n = $1", [7])).rows, [{ n: 7 }]);
  } finally {
    await db.close();
    await database.drop();
  }
});

Deno.test("the app's job queue sends pg-boss's statements named, on generic plans", async () => {
  const t = await startTestApp();
  try {
    const db = (t.app.deps.jobs as Jobs).boss.getDb();
    assert.ok(db instanceof NamedStatementsDb);
    const { rows } = await db.executeSql("SELECT current_setting('plan_cache_mode') AS mode WHERE $1", [
      true,
    ]);
    assert.deepEqual(rows, [{ mode: "force_generic_plan" }]);
  } finally {
    await t.close();
  }
});
