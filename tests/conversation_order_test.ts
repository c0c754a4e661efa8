/**
 * The agent's conversations are listed newest activity first, so an active conversation is at the top:
 * ordered by (lastMessageAt, id) descending on REST and GraphQL alike, with cursors of that key. A
 * conversation that receives a message moves to the top; cursor walks cover every conversation
 * once when nothing changes; a walk during which one moves never repeats a row. The status filter
 * and the unfiltered list read their page from the (agentId[, status], lastMessageAt, id) indexes.
 */
import assert from "node:assert/strict";
import { Client, startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { assertStatus } from "./_helpers/problem.ts";
import { authenticateActor } from "../src/auth/authenticate.ts";
import { plan } from "../src/reads/plan.ts";
import { conversations } from "../src/conversations/capabilities.ts";
import { restSelection } from "../src/reads/rest.ts";
import { viewOf } from "../src/reads/views.ts";
import { conversationView } from "../src/conversations/views.ts";

type Row = { contact: { externalId: string } };

// deno-lint-ignore no-explicit-any
async function gqlData(c: Client, query: string, variables?: Record<string, unknown>): Promise<any> {
  const res = await c.graphql(query, variables);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
  return res.body.data;
}

async function setup() {
  const clock = new ManualClock();
  const ta = await startTestApp({}, { clock });
  const { workspaceId, owner } = await ta.seed.workspace();
  const c = owner.client;
  const agent = await ta.seed.agent(c);
  const channel = (await c.post(`/api/agents/${agent.id}/channels`, { type: "API", label: "App" })).body;
  /** A customer message one second after the previous one. */
  const say = async (externalId: string) => {
    clock.advance(1000);
    const res = await c.post(`/api/channels/${channel.id}/messages`, {
      contact: { externalId },
      type: "TEXT",
      content: `hello from ${externalId}`,
    });
    assertStatus(res, 201);
  };
  return { ta, c, agent, say, workspaceId, owner };
}

/** Every page of the REST list, `limit` at a time, following nextCursor; `between` runs between pages. */
async function restWalk(c: Client, base: string, limit: number, between?: (page: number) => Promise<void>) {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const res = await c.get(
      `${base}${base.includes("?") ? "&" : "?"}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
    );
    assertStatus(res, 200);
    pages.push(res.body.data.map((r: Row) => r.contact.externalId));
    cursor = res.body.nextCursor;
    if (cursor && between) await between(pages.length);
  } while (cursor);
  return pages;
}

const QUERY = `query($a: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  conversations(agentId: $a, first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { contact { externalId } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
  agent(id: $a) { conversations(first: 100) { edges { node { contact { externalId } lastMessageAt } } } }
}`;

const names = (edges: { node: Row }[]) => edges.map((e) => e.node.contact.externalId);

Deno.test("conversations are listed newest activity first; a new message moves one to the top", async (t) => {
  const { ta, c, agent, say } = await setup();
  try {
    for (const n of [1, 2, 3, 4, 5]) await say(`u${n}`);
    const base = `/api/agents/${agent.id}/conversations`;

    await t.step("REST and GraphQL (root and Agent.conversations): last activity first", async () => {
      const res = await c.get(base);
      assertStatus(res, 200);
      assert.deepEqual(res.body.data.map((r: Row) => r.contact.externalId), ["u5", "u4", "u3", "u2", "u1"]);
      const data = await gqlData(c, QUERY, { a: agent.id });
      assert.deepEqual(names(data.conversations.edges), ["u5", "u4", "u3", "u2", "u1"]);
      assert.deepEqual(names(data.agent.conversations.edges), ["u5", "u4", "u3", "u2", "u1"]);
    });

    await t.step("cursor walks cover every conversation once when nothing changes", async () => {
      assert.deepEqual(await restWalk(c, base, 2), [["u5", "u4"], ["u3", "u2"], ["u1"]]);
      // GraphQL forwards (first/after) and backwards (last/before).
      const forward: string[][] = [];
      let after: string | undefined;
      for (;;) {
        const page = (await gqlData(c, QUERY, { a: agent.id, first: 2, after })).conversations;
        forward.push(names(page.edges));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      assert.deepEqual(forward, [["u5", "u4"], ["u3", "u2"], ["u1"]]);
      const backward: string[][] = [];
      let before: string | undefined;
      for (;;) {
        const page = (await gqlData(c, QUERY, { a: agent.id, last: 2, before })).conversations;
        backward.push(names(page.edges));
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
      }
      assert.deepEqual(backward, [["u2", "u1"], ["u4", "u3"], ["u5"]]);
    });

    await t.step(
      "a customer message moves its conversation to the top (REST, GraphQL, status filter)",
      async () => {
        await say("u2");
        const res = await c.get(base);
        assert.deepEqual(res.body.data.map((r: Row) => r.contact.externalId), ["u2", "u5", "u4", "u3", "u1"]);
        const open = await c.get(`${base}?status=OPEN`);
        assert.deepEqual(open.body.data.map((r: Row) => r.contact.externalId), [
          "u2",
          "u5",
          "u4",
          "u3",
          "u1",
        ]);
        const data = await gqlData(c, QUERY, { a: agent.id });
        assert.deepEqual(names(data.conversations.edges), ["u2", "u5", "u4", "u3", "u1"]);
        assert.deepEqual(names(data.agent.conversations.edges), ["u2", "u5", "u4", "u3", "u1"]);
        const times = data.agent.conversations.edges.map((e: { node: { lastMessageAt: string } }) =>
          e.node.lastMessageAt
        );
        assert.deepEqual(times, [...times].sort().reverse(), "lastMessageAt descending");
      },
    );

    await t.step(
      "a walk while conversations move: no row twice; one moved above the cursor is not met again",
      async () => {
        // Order now u2 u5 u4 u3 u1. After the first page [u2, u5]: u5 (already shown) and u3 (not
        // yet shown) get messages and move above the cursor; the rest of the walk shows u4, u1.
        const pages = await restWalk(c, base, 2, async (page) => {
          if (page === 1) {
            await say("u5");
            await say("u3");
          }
        });
        assert.deepEqual(pages, [["u2", "u5"], ["u4", "u1"]]);
        // A new walk sees the new order.
        assert.deepEqual(await restWalk(c, base, 2), [["u3", "u5"], ["u2", "u4"], ["u1"]]);
      },
    );
  } finally {
    await ta.close();
  }
});

Deno.test("a page of an agent's conversations, filtered by status or not, reads its rows from an index", async () => {
  const { ta, agent, workspaceId, owner } = await setup();
  try {
    const db = ta.app.deps.db;
    const channel = await db.channel.findFirstOrThrow({ where: { agentId: agent.id } });
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000);
    // 2 000 conversations, one in 100 OPEN (the others CLOSED), activity in another order than creation.
    const contacts = await db.contact.createManyAndReturn({
      data: Array.from({ length: 2000 }, (_, i) => ({ workspaceId, externalId: `c${i}`, name: `C${i}` })),
      select: { id: true },
    });
    await db.conversation.createMany({
      data: contacts.map((contact, i) => ({
        workspaceId,
        agentId: agent.id,
        channelId: channel.id,
        contactId: contact.id,
        status: i % 100 === 0 ? "OPEN" as const : "CLOSED" as const,
        createdAt: at(i),
        lastMessageAt: at((i * 7919) % 2000),
      })),
    });
    await db.$executeRawUnsafe(`ANALYZE "Conversation"`);
    const ctx = {
      ...ta.app.deps,
      actor: await authenticateActor(ta.app.deps, `Bearer ${owner.token}`, () => workspaceId),
    };
    const node = restSelection(viewOf(conversationView), conversations.rest?.fields);
    for (const where of [undefined, { status: "OPEN" }]) {
      const { sql, values } = plan(ctx, [{
        key: "v",
        read: conversations,
        params: { agentId: agent.id },
        page: { first: 10, where },
        shape: { kind: "rest", node },
      }]);
      const [explained] = await db.$queryRawUnsafe<{ "QUERY PLAN": [{ Plan: Record<string, unknown> }] }[]>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
        ...values,
        // The cut-off and the byte budget fetchBounded binds last.
        1 << 25,
        1 << 20,
      );
      const scanned = rowsScanned(explained["QUERY PLAN"][0].Plan, "Conversation");
      // 10 rows and the one that tells "more", read in order from the index (not 2 000, nor 20 OPEN
      // ones sorted after a scan of all).
      assert.equal(scanned, 11, `${JSON.stringify(where)}: ${scanned} rows scanned`);
      const [page] = await db.$queryRawUnsafe<{ data: string }[]>(sql, ...values, 1 << 25, 1 << 20);
      const data = JSON.parse(page.data).v.data as { lastMessageAt: string; status: string }[];
      assert.equal(data.length, 10);
      const times = data.map((r) => r.lastMessageAt);
      assert.deepEqual(times, [...times].sort().reverse());
      if (where) assert.ok(data.every((r) => r.status === "OPEN"));
    }
  } finally {
    await ta.close();
  }
});

/** Rows produced by the plan nodes scanning `table` (its indexes included), over all their loops. */
function rowsScanned(node: Record<string, unknown>, table: string): number {
  let n = node["Relation Name"] === table ? Number(node["Actual Rows"]) * Number(node["Actual Loops"]) : 0;
  for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) {
    n += rowsScanned(child, table);
  }
  return n;
}
