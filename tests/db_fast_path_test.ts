/**
 * The fast path beside Prisma's $queryRaw (src/db/fast_path.ts): a declared statement run on the
 * client (the fast path) and in a transaction (Prisma's raw path) answers the same values of every
 * column type, a command the same count, and statement counters see both. A transaction of raw
 * statements (sqlTransaction) runs on it too: it answers the same, commits, rolls back on a throw or
 * a failed statement, runs its after-commit callbacks only once committed, and gives its connection back.
 * Its BEGIN goes ahead of its first statement, in that statement's round trip (GuardedClient.sendAhead).
 */
import assert from "node:assert/strict";
import { Prisma } from "../src/generated/prisma/client.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { createPrisma } from "../src/db/client.ts";
import { fastPathOf } from "../src/db/fast_path.ts";
import { col, command, query } from "../src/db/statement.ts";
import { afterCommit, sqlTransaction } from "../src/db/transaction.ts";
import { GuardedClient } from "../src/db/pool.ts";

const everyType = query(
  {
    text: col.text,
    none: col.text.null,
    integer: col.integer,
    bigint: col.bigint,
    float: col.float,
    flag: col.boolean,
    at: col.timestamptz,
    json: col.json<{ a: number[] }>(),
    jsonb: col.jsonb<{ b: string }>(),
    status: col.enum<"OPEN" | "HUMAN" | "CLOSED">("ConversationStatus"),
  },
  ({ n, at, ids }: { n: number; at: Date; ids: string[] }) =>
    Prisma.sql`
      SELECT ${"ação ✓"}::text AS text, NULL::text AS none, ${n}::int AS integer,
             (${n}::bigint * 4000000000) AS bigint, 1.5::float8 AS float, true AS flag,
             ${at}::timestamptz AS at, json_build_object('a', ARRAY[1, 2]) AS json,
             jsonb_build_object('b', ${ids}::text[]::text) AS jsonb, 'HUMAN'::"ConversationStatus" AS status`,
  [{ n: 1, at: new Date(0), ids: [] }],
);

const touch = command(
  ({ names }: { names: string[] }) =>
    Prisma.sql`UPDATE "Workspace" SET name = name WHERE name = ANY(${names}::text[])`,
  [{ names: [] }],
);

Deno.test("the fast path answers as Prisma's raw path does, for every column type, and is counted", async () => {
  const database = await createTestDatabase();
  const statements: string[] = [];
  const db = createPrisma(database.url, { max: 2, onQuery: (sql) => statements.push(sql) });
  try {
    assert.ok(fastPathOf(db), "the client has a fast path");
    const args = { n: 7, at: new Date("2026-11-27T15:04:05.678Z"), ids: ["x", "y"] };
    const fast = await everyType.rows(db, args);
    const counted = statements.length;
    const viaPrisma = await db.$transaction(async (tx) => {
      assert.equal(fastPathOf(tx), undefined, "a transaction runs through Prisma");
      return await everyType.rows(tx, args);
    });
    assert.deepEqual(fast, viaPrisma);
    assert.deepEqual(fast, [{
      text: "ação ✓",
      none: null,
      integer: 7,
      bigint: 28_000_000_000n,
      float: 1.5,
      flag: true,
      at: new Date("2026-11-27T15:04:05.678Z"),
      json: { a: [1, 2] },
      jsonb: { b: "{x,y}" },
      status: "HUMAN",
    }]);
    assert.ok(
      counted >= 1 && statements[0].includes("ação") === false,
      "the text is counted, not its values",
    );

    await db.workspace.createMany({ data: [{ name: "a" }, { name: "b" }] });
    assert.equal(await touch.run(db, { names: ["a", "b", "c"] }), 2);
    assert.equal(await db.$transaction((tx) => touch.run(tx, { names: ["a", "b", "c"] })), 2);
  } finally {
    await db.$disconnect();
    await database.drop();
  }
});

Deno.test("a client used through the fast path alone leaves no connection once disconnected and closed", async () => {
  const database = await createTestDatabase();
  const db = createPrisma(database.url, { max: 2 });
  const admin = createPrisma(database.adminUrl, { max: 1 });
  const name = new URL(database.url).pathname.slice(1);
  const connections = async () =>
    (await admin.$queryRawUnsafe<Array<{ n: number }>>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1",
      name,
    ))[0].n;
  try {
    await everyType.rows(db, { n: 1, at: new Date(0), ids: [] });
    assert.equal(await connections(), 1);
    await db.$disconnect();
    await fastPathOf(db)!.close();
    // The backend ends right after its client has gone.
    for (let i = 0; i < 100 && await connections() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await connections(), 0);
  } finally {
    await admin.$disconnect();
    await fastPathOf(admin)?.close();
    await database.drop();
  }
});

const names = query(
  { name: col.text },
  ({ prefix }: { prefix: string }) =>
    Prisma.sql`SELECT name FROM "Workspace" WHERE name LIKE ${prefix + "%"} ORDER BY name`,
  [{ prefix: "" }],
);
const addWorkspace = command(
  ({ id, name }: { id: string; name: string }) =>
    Prisma.sql`INSERT INTO "Workspace" (id, name) VALUES (${id}, ${name})`,
  [{ id: "w", name: "n" }],
);

Deno.test("a transaction of raw statements runs on the fast path: same answers, commit, rollback, callbacks", async () => {
  const database = await createTestDatabase();
  const statements: string[] = [];
  const db = createPrisma(database.url, { max: 2, onQuery: (sql) => statements.push(sql) });
  const order: string[] = [];
  try {
    const args = { n: 3, at: new Date("2026-11-27T15:04:05.678Z"), ids: ["x"] };
    const viaPrisma = await db.$transaction((tx) => everyType.rows(tx, args));
    const counted = statements.length;
    const here = await sqlTransaction(db, async (tx) => {
      assert.ok(fastPathOf(tx), "its statements take the fast path");
      afterCommit(tx, () => order.push("after commit"));
      const rows = await everyType.rows(tx, args);
      await addWorkspace.run(tx, { id: "w1", name: "tx committed" });
      order.push("body");
      return rows;
    });
    assert.deepEqual(here, viaPrisma);
    assert.deepEqual(order, ["body", "after commit"]);
    assert.ok(statements.length > counted, "its statements are counted");
    assert.deepEqual(await names.rows(db, { prefix: "tx " }), [{ name: "tx committed" }]);

    // A throw rolls everything back; the callbacks never run; the error reaches the caller.
    order.length = 0;
    await assert.rejects(
      sqlTransaction(db, async (tx) => {
        afterCommit(tx, () => order.push("after commit"));
        await addWorkspace.run(tx, { id: "w2", name: "tx rolled back" });
        throw new Error("changed my mind");
      }),
      /changed my mind/,
    );
    // A failed statement too (the id is taken), and the connection is usable again afterwards.
    await assert.rejects(
      sqlTransaction(db, async (tx) => {
        await addWorkspace.run(tx, { id: "w3", name: "tx also rolled back" });
        await addWorkspace.run(tx, { id: "w1", name: "tx duplicate" });
      }),
      /unique|duplicate/i,
    );
    assert.deepEqual(order, []);
    assert.deepEqual(await names.rows(db, { prefix: "tx " }), [{ name: "tx committed" }]);
    // The first statement, sent with BEGIN ahead of it, failing: rolled back as well.
    statements.length = 0;
    await assert.rejects(
      sqlTransaction(db, (tx) => addWorkspace.run(tx, { id: "w1", name: "tx first fails" })),
      /unique|duplicate/i,
    );
    assert.equal(statements.length, 2, statements.join("\n"));
    assert.match(statements[0], /^BEGIN; SET LOCAL [^\n]*;\nINSERT INTO "Workspace"/);
    assert.equal(statements[1], "ROLLBACK");
    // Both of the pool's two connections are free: two transactions at once both finish.
    const both = await Promise.all(
      ["a", "b"].map((k) =>
        sqlTransaction(db, async (tx) => {
          await addWorkspace.run(tx, { id: `p${k}`, name: `tx parallel ${k}` });
          return (await names.rows(tx, { prefix: `tx parallel ${k}` })).length;
        })
      ),
    );
    assert.deepEqual(both, [1, 1]);
  } finally {
    await db.$disconnect();
    await fastPathOf(db)?.close();
    await database.drop();
  }
});

Deno.test("statements sent ahead of a query go in its round trip; one that fails fails the query, which never runs", async () => {
  const database = await createTestDatabase();
  const client = new GuardedClient({ connectionString: database.url });
  await client.connect();
  try {
    const insert = (id: string) => ({
      text: `INSERT INTO "Workspace" (id, name) VALUES ($1, $2) RETURNING name`,
      values: [id, `ahead ${id}`],
    });
    client.sendAhead(["SELECT 1", "SET application_name = 'sent ahead'"]);
    assert.equal(client.sendingAhead, true);
    const done = await client.query(insert("a1"));
    assert.equal(client.sendingAhead, false);
    // The query's own answer, not one of those ahead of it.
    assert.deepEqual(done.rows, [{ name: "ahead a1" }]);
    assert.equal(done.command, "INSERT");
    const { rows: [setting] } = await client.query("SHOW application_name");
    assert.equal(setting.application_name, "sent ahead");

    client.sendAhead(["SELECT 1 / 0"]);
    await assert.rejects(client.query(insert("a2")), /division by zero/);
    // Skipped by the server with the rest of the batch.
    const { rows } = await client.query(`SELECT id FROM "Workspace" WHERE id LIKE 'a%' ORDER BY id`);
    assert.deepEqual(rows, [{ id: "a1" }]);
    // And the connection goes on as usual.
    assert.deepEqual((await client.query({ text: "SELECT $1::int AS n", values: [7] })).rows, [{ n: 7 }]);
  } finally {
    await client.end();
    await database.drop();
  }
});
