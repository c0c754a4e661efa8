/**
 * Keyset pagination of the REST lists: deleting the row a cursor names does
 * not end or skip the walk (oldest-first and newest-first lists), rows sharing a createdAt are
 * ordered by id and neither skipped nor repeated, cursors are opaque, cursors that are not ours are
 * 400 BAD_CURSOR, and another workspace's (or list's) cursor is only a position, never its rows.
 */
import assert from "node:assert/strict";
import { type Client, startTestApp } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { createPrisma } from "../src/db/client.ts";
import { assertProblem, assertStatus, snapshot } from "./_helpers/problem.ts";

const b64url = (text: string) => btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);
const day = (n: number, ms = 0) => new Date(Date.UTC(2020, 0, n) + ms);

/** Walks `path` page by page: the ids seen, in order, and the number of pages. */
async function walk(c: Client, path: string, limit: number) {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await c.get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    assertStatus(res, 200);
    assert.ok(res.body.data.length <= limit);
    seen.push(...ids(res.body.data));
    cursor = res.body.nextCursor;
    pages++;
  } while (cursor && pages < 100);
  return { seen, pages };
}

/** The whole list in one page. */
async function all(c: Client, path: string): Promise<string[]> {
  const res = await c.get(`${path}?limit=500`);
  assertStatus(res, 200);
  assert.equal(res.body.nextCursor, null);
  return ids(res.body.data);
}

Deno.test("REST lists: keyset cursors", async (t) => {
  const ta = await startTestApp();
  const db = ta.app.deps.db;
  try {
    const { workspaceId, owner } = await ta.seed.workspace("Keyset");
    const c = owner.client;
    const agents: string[] = [];
    for (let i = 0; i < 25; i++) agents.push((await ta.seed.agent(c, { name: `A${i}` })).id);
    const hostAgent = agents[0];

    await t.step("agents, oldest first: the cursor's row deleted before each next page", async () => {
      const before = await all(c, "/api/agents");
      assert.deepEqual(before.toSorted(), agents.toSorted());
      const deleted: string[] = [];
      const { seen, pages } = await walkDeleting(c, "/api/agents", 10, async (id) => {
        assertStatus(await c.delete(`/api/agents/${id}`), 204);
        deleted.push(id);
      });
      // The deleted rows were the last of their pages, so the walk still shows every row once.
      assert.equal(pages, 3);
      assert.deepEqual(seen, before);
      assert.deepEqual(deleted, [before[9], before[19]]);
      assert.deepEqual(await all(c, "/api/agents"), before.filter((id) => !deleted.includes(id)));
    });

    // Newest-first lists get their rows by SQL with spread-out createdAt values.
    const versions: string[] = [];
    for (let i = 0; i < 25; i++) {
      const v = await db.promptVersion.create({
        data: {
          agentId: hostAgent,
          systemPrompt: `p${i}`,
          rationale: "r",
          authorLabel: "t",
          createdAt: day(2, i),
        },
      });
      versions.push(v.id);
    }
    const versionsPath = `/api/agents/${hostAgent}/prompt-versions`;

    await t.step(
      "prompt versions, newest first: the cursor's row deleted before each next page",
      async () => {
        const before = await all(c, versionsPath);
        // Newer than every seeded one: the agent's own versions from its creation (today).
        assert.deepEqual(before.slice(-25), [...versions].reverse());
        const { seen, pages } = await walkDeleting(
          c,
          versionsPath,
          10,
          (id) => db.promptVersion.delete({ where: { id } }),
        );
        assert.equal(pages, Math.ceil(before.length / 10));
        assert.deepEqual(seen, before);
      },
    );

    await t.step("deliveries, newest first: the cursor's row deleted before each next page", async () => {
      const hook = await c.post(`/api/agents/${hostAgent}/webhooks`, {
        event: "message.sent",
        url: "http://127.0.0.1:9/hook",
      });
      assertStatus(hook, 201);
      const made: string[] = [];
      for (let i = 0; i < 25; i++) {
        const event = await db.domainEvent.create({
          data: { workspaceId, agentId: hostAgent, type: "test.keyset", payload: {}, createdAt: day(3, i) },
        });
        const d = await db.webhookDelivery.create({
          data: {
            webhookId: hook.body.id,
            eventId: event.id,
            status: "SUCCEEDED",
            idempotencyKey: `k${i}`,
            createdAt: day(3, i),
          },
        });
        made.push(d.id);
      }
      const path = `/api/agents/${hostAgent}/webhooks/${hook.body.id}/deliveries`;
      const before = await all(c, path);
      assert.deepEqual(before, [...made].reverse());
      const { seen, pages } = await walkDeleting(
        c,
        path,
        10,
        (id) => db.webhookDelivery.delete({ where: { id } }),
      );
      assert.equal(pages, 3);
      assert.deepEqual(seen, before);
      assert.equal(await db.webhookDelivery.count({ where: { webhookId: hook.body.id } }), 23);
    });

    await t.step("rows with the same createdAt: ordered by id, none skipped or repeated", async () => {
      // Groups of four agents share a createdAt; pages of 3 end inside groups.
      const rows = await db.agent.findMany({ where: { workspaceId }, select: { id: true } });
      await db.$transaction(
        rows.map((r, i) =>
          db.agent.update({ where: { id: r.id }, data: { createdAt: day(4, Math.floor(i / 4)) } })
        ),
      );
      const expected =
        (await db.agent.findMany({ where: { workspaceId }, select: { id: true, createdAt: true } }))
          .sort((a, b) =>
            a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
          )
          .map((r) => r.id);
      assert.deepEqual(await all(c, "/api/agents"), expected);
      for (const limit of [1, 3, 4, 5]) {
        const { seen } = await walk(c, "/api/agents", limit);
        assert.deepEqual(seen, expected, `limit ${limit}`);
      }
      // All equal, oldest first through the ORM (API tokens): the id alone orders them.
      const tokensPath = `/api/workspaces/${workspaceId}/api-tokens`;
      for (let i = 0; i < 7; i++) assertStatus(await c.post(tokensPath, { label: `t${i}` }), 201);
      await db.apiToken.updateMany({ where: { workspaceId }, data: { createdAt: day(5) } });
      const byId = (await all(c, tokensPath)).toSorted();
      assert.equal(byId.length, 7);
      assert.deepEqual(await all(c, tokensPath), byId);
      for (const limit of [1, 2, 3]) assert.deepEqual((await walk(c, tokensPath, limit)).seen, byId);
      // All equal, newest first: the id alone orders them, descending.
      await db.promptVersion.updateMany({ where: { agentId: hostAgent }, data: { createdAt: day(5) } });
      const byIdDesc = (await all(c, versionsPath)).toSorted().reverse();
      assert.deepEqual(await all(c, versionsPath), byIdDesc);
      for (const limit of [1, 2, 7]) assert.deepEqual((await walk(c, versionsPath, limit)).seen, byIdDesc);
    });

    await t.step("cursors are opaque: not a row id, no id in clear", async () => {
      const page = await c.get("/api/agents?limit=2");
      const cursor: string = page.body.nextCursor;
      assert.match(cursor, /^[A-Za-z0-9_-]+$/);
      for (const row of page.body.data) {
        assert.notEqual(cursor, row.id);
        assert.ok(!cursor.includes(row.id));
      }
    });

    await t.step("cursors that are not ours: 400 BAD_CURSOR on every list, nothing changes", async () => {
      const good: string = (await c.get("/api/agents?limit=1")).body.nextCursor;
      const [{ id: hookId }] = (await c.get(`/api/agents/${hostAgent}/webhooks`)).body.data;
      const lists = [
        "/api/agents",
        `/api/agents/${hostAgent}/intents`,
        `/api/agents/${hostAgent}/webhooks`,
        `/api/agents/${hostAgent}/webhooks/${hookId}/deliveries`,
        versionsPath,
        `/api/workspaces/${workspaceId}/invites`,
        `/api/workspaces/${workspaceId}/api-tokens`,
      ];
      const bad = [
        "",
        agents[3], // the old format: a bare id
        good + "=",
        good + "A",
        "azEuMS5hYh", // "k1.1.ab" spelt with stray bits in its last character (canonical: azEuMS5hYg)
        b64url("k1.abc.x"),
        b64url("k1.1."),
        b64url("k1..x"),
        b64url("k2.1.x"),
        b64url("k1.1.a b"),
        b64url("k1.1.a\u0000"),
        b64url("k1.01.x"),
        b64url("k1.-1.x"),
        b64url("k1.99999999999999999.x"),
        b64url("k1.8640000000000001.x"),
        b64url(`k1.1.${"x".repeat(65)}`),
        b64url("k1.1.x.y"),
        "x".repeat(200),
        "%00",
        "a%2Bb",
        btoa("k1.1.xy"), // base64 with padding
      ];
      const state = await snapshot(ta.app);
      for (const path of lists) {
        for (const cursor of bad) assertProblem(await c.get(`${path}?cursor=${cursor}`), 400, "BAD_CURSOR");
        assertStatus(await c.get(`${path}?cursor=${good}`), 200);
      }
      assert.equal(await snapshot(ta.app), state);
    });

    await t.step("another workspace's or list's cursor is a position, never its rows", async () => {
      const theirs = await ta.seed.workspace("Theirs");
      const foreign: string[] = [];
      for (let i = 0; i < 3; i++) {
        foreign.push((await ta.seed.agent(theirs.owner.client, { name: `T${i}` })).id);
      }
      // Mine: five agents on day 6; theirs: on day 6 + 2.5 s.
      const mine = [hostAgent, ...(await all(c, "/api/agents")).filter((id) => id !== hostAgent).slice(0, 4)];
      await db.agent.deleteMany({ where: { workspaceId, id: { notIn: mine } } });
      await db.$transaction(
        mine.map((id, i) => db.agent.update({ where: { id }, data: { createdAt: day(6, i * 1000) } })),
      );
      await db.agent.updateMany({ where: { id: { in: foreign } }, data: { createdAt: day(6, 2500) } });
      const theirCursor: string = (await theirs.owner.client.get("/api/agents?limit=1")).body.nextCursor;
      assert.ok(theirCursor);
      const res = await c.get(`/api/agents?cursor=${theirCursor}`);
      assertStatus(res, 200);
      assert.deepEqual(res.body, { data: (await c.get("/api/agents")).body.data.slice(3), nextCursor: null });
      // Their list with my cursor shows their rows only.
      const myCursor: string = (await c.get("/api/agents?limit=1")).body.nextCursor;
      assert.deepEqual(
        ids((await theirs.owner.client.get(`/api/agents?cursor=${myCursor}`)).body.data),
        foreign,
      );
      // A prompt-version cursor on the agent list: a position as well (day 5 is before day 6).
      const versionCursor: string = (await c.get(`${versionsPath}?limit=1`)).body.nextCursor;
      assert.deepEqual(ids((await c.get(`/api/agents?cursor=${versionCursor}`)).body.data), mine);
    });
  } finally {
    await ta.close();
  }
});

Deno.test("a page after a cursor costs the same SQL statements as the first page", async () => {
  const database = await createTestDatabase();
  let statements: string[] = [];
  const db = createPrisma(database.url, { onQuery: (sql) => statements.push(sql) });
  const ta = await startTestApp({}, { db });
  try {
    const { owner } = await ta.seed.workspace("Counted");
    const c = owner.client;
    const agent = (await ta.seed.agent(c)).id;
    for (let i = 0; i < 3; i++) await ta.seed.agent(c, { name: `A${i}` });
    for (let i = 0; i < 3; i++) {
      await db.promptVersion.create({
        data: { agentId: agent, systemPrompt: "p", rationale: "r", authorLabel: "t" },
      });
    }
    for (const path of ["/api/agents", `/api/agents/${agent}/prompt-versions`]) {
      const count = async (query: string) => {
        statements = [];
        const res = await c.get(`${path}?${query}`);
        assertStatus(res, 200);
        return { n: statements.length, next: res.body.nextCursor as string };
      };
      await count("limit=1"); // warm-up
      const first = await count("limit=1");
      const after = await count(`limit=1&cursor=${first.next}`);
      console.log(`${path}: ${first.n} statements for the first page, ${after.n} after a cursor`);
      assert.equal(after.n, first.n);
    }
  } finally {
    await ta.close();
    await db.$disconnect();
    await database.drop();
  }
});

/** `walk`, deleting the row named by each next cursor (the last row of the page) before going on. */
async function walkDeleting(
  c: Client,
  path: string,
  limit: number,
  remove: (id: string) => Promise<unknown>,
) {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await c.get(`${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    assertStatus(res, 200);
    seen.push(...ids(res.body.data));
    cursor = res.body.nextCursor;
    pages++;
    if (cursor) await remove(seen[seen.length - 1]);
  } while (cursor && pages < 100);
  return { seen, pages };
}
