/**
 * The app's pg clients (db/pool.ts GuardedClient) send a query's messages in one socket write:
 * pg corks the socket around them, and the corked batch is joined rather than sent through
 * node:net's writev path. Queries of every kind still answer (a named one, a failing one, a
 * transaction), and an uncorked write (pg's end message) goes as written.
 */
import assert from "node:assert/strict";
import { Socket } from "node:net";
import { createTestDatabase } from "./_helpers/db.ts";
import { createPool } from "../src/db/pool.ts";
import { POOL_IDLE_MS } from "../src/db/client.ts";

Deno.test("a query's messages leave in one write, and queries answer as before", async () => {
  const database = await createTestDatabase();
  const pool = createPool(database.url, { max: 1, idleTimeoutMillis: POOL_IDLE_MS });
  const proto = Socket.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const counts = { write: 0, writev: 0 };
  const spied = { write: proto.write, _writev: proto._writev };
  proto.write = function (this: unknown, ...args: unknown[]) {
    counts.write++;
    return spied.write.apply(this, args);
  };
  proto._writev = function (this: unknown, ...args: unknown[]) {
    counts.writev++;
    return spied._writev.apply(this, args);
  };
  try {
    await pool.query("SELECT 1"); // connected and warm
    counts.write = counts.writev = 0;
    const { rows } = await pool.query({ name: "p", text: "SELECT $1::int + 1 AS n", values: [41] });
    assert.deepEqual(rows, [{ n: 42 }]);
    assert.deepEqual(counts, { write: 1, writev: 0 }, "parse, bind, describe, execute and sync in one write");
    counts.write = 0;
    assert.deepEqual((await pool.query({ name: "p", text: "SELECT $1::int + 1 AS n", values: [1] })).rows, [{
      n: 2,
    }]);
    assert.deepEqual(counts, { write: 1, writev: 0 }, "a prepared one too");
    await assert.rejects(pool.query("SELECT $1::int", ["x"]), /invalid input syntax/);
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("CREATE TABLE t (n int)");
      await client.query("INSERT INTO t VALUES ($1)", [5]);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    assert.deepEqual((await pool.query("SELECT n FROM t")).rows, [{ n: 5 }]);
  } finally {
    proto.write = spied.write;
    proto._writev = spied._writev;
    await pool.end();
    await database.drop();
  }
});
