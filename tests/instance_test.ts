/**
 * A server process as the database knows it (src/db/instance.ts): its lock is seen as alive while
 * it is registered and gone the moment it stops, in another session's view; its lock connection
 * has PostgreSQL's keepalives set short, so a host that vanishes is dropped in about 25 s.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { createTestDatabase } from "./_helpers/db.ts";
import { LIVE_INSTANCES, registerInstance } from "../src/db/instance.ts";
import { silentLogger } from "../src/shared/logger.ts";

Deno.test("an instance's lock is alive while it runs and gone once it stops; its session keeps short keepalives", async () => {
  const db = await createTestDatabase();
  const other = new pg.Client({ connectionString: db.url });
  await other.connect();
  const live = async () => (await other.query<{ id: number }>(LIVE_INSTANCES)).rows.map((r) => r.id);
  try {
    const a = await registerInstance(db.url, silentLogger);
    const b = await registerInstance(db.url, silentLogger);
    assert.notEqual(a.id, b.id);
    assert.deepEqual((await live()).sort(), [a.id, b.id].sort());
    const settings = await a.probe<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name LIKE 'tcp_keepalives_%' ORDER BY name`,
    );
    assert.deepEqual(settings?.map((s) => `${s.name}=${s.setting}`), [
      "tcp_keepalives_count=3",
      "tcp_keepalives_idle=10",
      "tcp_keepalives_interval=5",
    ]);
    await a.stop();
    assert.deepEqual(await live(), [b.id]);
    assert.equal(await a.probe("SELECT 1"), null, "a stopped instance runs nothing");
    await b.stop();
    assert.deepEqual(await live(), []);
  } finally {
    await other.end();
    await db.drop();
  }
});
