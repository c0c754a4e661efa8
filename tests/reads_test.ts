/**
 * The read planner (src/reads/): nested pages read only their rows (a LIMIT per parent, measured
 * with EXPLAIN ANALYZE), keyset pages continue across a deleted cursor row, webhook headers and
 * URLs are presented per role on every path, another workspace's ids answer as unknown ones, and
 * a GraphQL read is one data statement after the credential's.
 */
import assert from "node:assert/strict";
import { Client, startTestApp, type TestApp } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { createPrisma } from "../src/db/client.ts";
import { statementNames } from "../src/db/statement_names.ts";
import { authenticateActor } from "../src/auth/authenticate.ts";
import type { ActorContext } from "../src/context.ts";
import { plan, type Root, runReads } from "../src/reads/plan.ts";
import { restRead, restRow } from "../src/reads/rest.ts";
import { agent as agentCap, agents, promptVersions } from "../src/agents/capabilities.ts";
import { agentView } from "../src/agents/views.ts";
import { webhookView } from "../src/webhooks/views.ts";
import { webhook, webhookDelivery, webhooks } from "../src/webhooks/capabilities.ts";
import { members } from "../src/workspaces/capabilities.ts";
import { intent } from "../src/intents/capabilities.ts";
import { HOOK, INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { MASK, maskUrlSecrets } from "../src/shared/url_secrets.ts";
import { AppError } from "../src/shared/errors.ts";
import { viewOf } from "../src/reads/views.ts";
import { newApproval } from "./_helpers/approvals.ts";

async function withApp(fn: (t: TestApp) => Promise<void>, options?: Parameters<typeof startTestApp>[1]) {
  const t = await startTestApp({}, options);
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

async function actorOf(t: TestApp, token: string, workspaceId: string): Promise<ActorContext> {
  return { ...t.app.deps, actor: await authenticateActor(t.app.deps, `Bearer ${token}`, () => workspaceId) };
}

// deno-lint-ignore no-explicit-any
async function gqlData(c: Client, query: string, variables?: Record<string, unknown>): Promise<any> {
  const res = await c.graphql(query, variables);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
  return res.body.data;
}

/** Rows produced by the plan nodes scanning `table`, over all their loops (EXPLAIN ANALYZE). */
function rowsScanned(node: Record<string, unknown>, table: string): number {
  let n = node["Relation Name"] === table ? Number(node["Actual Rows"]) * Number(node["Actual Loops"]) : 0;
  for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) {
    n += rowsScanned(child, table);
  }
  return n;
}

Deno.test("a nested page reads its rows only: a LIMIT per parent, whatever the parent's other rows", () =>
  withApp(async (t) => {
    const { workspaceId, owner } = await t.seed.workspace();
    const big = await t.seed.agent(owner.client, { name: "Big" });
    const small = await t.seed.agent(owner.client, { name: "Small" });
    const db = t.app.deps.db;
    // Distinct times, as real versions have.
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000);
    await db.promptVersion.createMany({
      data: [
        ...Array.from({ length: 500 }, (_, i) => ({
          agentId: big.id,
          systemPrompt: `p${i}`,
          rationale: "r",
          authorLabel: "seed",
          createdAt: at(i),
        })),
        ...Array.from({ length: 3 }, (_, i) => ({
          agentId: small.id,
          systemPrompt: `p${i}`,
          rationale: "r",
          authorLabel: "seed",
          createdAt: at(i),
        })),
      ],
    });
    const query = `{ agents { edges { node { name promptVersions(first: 2) {
      edges { node { systemPrompt } } pageInfo { hasNextPage } } } } } }`;
    const data = await gqlData(owner.client, query);
    const versions = data.agents.edges.map((e: { node: { name: string; promptVersions: unknown } }) => [
      e.node.name,
      e.node.promptVersions,
    ]);
    // Newest first.
    assert.deepEqual(versions, [
      ["Big", {
        edges: [{ node: { systemPrompt: "p499" } }, { node: { systemPrompt: "p498" } }],
        pageInfo: { hasNextPage: true },
      }],
      ["Small", {
        edges: [{ node: { systemPrompt: "p2" } }, { node: { systemPrompt: "p1" } }],
        pageInfo: { hasNextPage: true },
      }],
    ]);

    const ctx = await actorOf(t, owner.token, workspaceId);
    const roots: Root[] = [{
      key: "agents",
      read: agents,
      params: {},
      page: {},
      shape: {
        kind: "connection",
        parts: [{
          key: "edges",
          edges: [{
            key: "node",
            node: [{
              key: "promptVersions",
              relation: "promptVersions",
              page: { first: 2 },
              shape: {
                kind: "connection",
                parts: [{ key: "edges", edges: [{ key: "cursor", cursor: true }] }],
              },
            }],
          }],
        }],
      },
    }];
    const { sql, values } = plan(ctx, roots);
    // Statistics as autovacuum keeps them after a bulk insert.
    await db.$executeRawUnsafe(`ANALYZE "PromptVersion"`);
    const [explained] = await db.$queryRawUnsafe<{ "QUERY PLAN": [{ Plan: Record<string, unknown> }] }[]>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
      ...values,
      // The cut-off and the byte budget fetchBounded binds last.
      1 << 25,
      1 << 20,
    );
    const scanned = rowsScanned(explained["QUERY PLAN"][0].Plan, "PromptVersion");
    const shape = (n: Record<string, unknown>): unknown => [
      n["Node Type"],
      n["Relation Name"] ?? n["Index Name"] ?? "",
      n["Actual Rows"],
      ...((n.Plans as Record<string, unknown>[] | undefined) ?? []).map(shape),
    ];
    // 2 agents x 2 rows, read in order from the (agentId, createdAt, id) index: no page info is
    // asked, so not even the row that would tell "more". Whatever Big's 500 versions.
    assert.equal(
      scanned,
      2 * 2,
      `PromptVersion rows scanned\n${JSON.stringify(shape(explained["QUERY PLAN"][0].Plan))}`,
    );
  }));

Deno.test("keyset pages continue after a deleted cursor row, over GraphQL and REST alike", () =>
  withApp(async (t) => {
    const { workspaceId, owner } = await t.seed.workspace();
    const c = owner.client;
    const ids: string[] = [];
    for (const name of ["A", "B", "C", "D"]) ids.push((await t.seed.agent(c, { name })).id);
    const page = `query($after: String) { agents(first: 2, after: $after) {
      edges { node { name } } pageInfo { hasNextPage endCursor } } }`;
    const first = (await gqlData(c, page)).agents;
    assert.deepEqual(first.edges.map((e: { node: { name: string } }) => e.node.name), ["A", "B"]);
    assert.equal(first.pageInfo.hasNextPage, true);
    assert.equal((await c.delete(`/api/agents/${ids[1]}`)).status, 204);
    const next = (await gqlData(c, page, { after: first.pageInfo.endCursor })).agents;
    assert.deepEqual(next.edges.map((e: { node: { name: string } }) => e.node.name), ["C", "D"]);
    assert.equal(next.pageInfo.hasNextPage, false);

    // REST's page through the planner: the same cursor continues the same way.
    const ctx = await actorOf(t, owner.token, workspaceId);
    const rest = JSON.parse(
      await restRead(ctx, agents, {}, { limit: "1", cursor: first.pageInfo.endCursor }),
    );
    assert.deepEqual(rest.data.map((a: { name: string }) => a.name), ["C"]);
    assert.equal(typeof rest.nextCursor, "string");
    const last = JSON.parse(await restRead(ctx, agents, {}, { limit: "5", cursor: rest.nextCursor }));
    assert.deepEqual(last, {
      data: [{
        id: ids[3],
        name: "D",
        status: "ACTIVE",
        template: "SUPORTE",
        model: last.data[0].model,
        _count: { conversations: 0, intents: 0, numbers: 0 },
      }],
      nextCursor: null,
    });
    // An unpaged list (members) and one row answer as REST does.
    const list = JSON.parse(await restRead(ctx, members, {}, {})).data;
    assert.deepEqual(Object.keys(list[0]), ["id", "name", "email", "role", "joinedAt"]);
    assert.match(list[0].joinedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await assert.rejects(
      () => restRead(ctx, agents, {}, { cursor: "nope" }),
      (e: AppError) => e.code === "BAD_CURSOR",
    );
  }));

Deno.test("webhook headers and URLs are presented per role on every path; no sealed value leaves", () =>
  withApp(async (t) => {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const url = "https://example.com/w?token=abc&x=1";
    const created = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      ...HOOK,
      url,
      headers: { "X-Key": "k", Authorization: "Bearer s3cret" },
    });
    assert.equal(created.status, 201);
    const hook = created.body.webhook?.id ?? created.body.id;
    const made = await owner.client.post(`/api/agents/${agent.id}/intents`, {
      ...INTENT_FIELDS,
      name: "Pedido",
      webhookUrl: "https://example.com/i?api_key=zzz",
    });
    assert.equal(made.status, 201);
    // Stored sealed (the secret box), so the SQL alone could only ever show the sealed text.
    const stored = await t.app.deps.db.eventWebhook.findUniqueOrThrow({ where: { id: hook } });
    assert.match(JSON.stringify(stored.headers), /sb1:/);

    const query = `query($a: ID!, $w: ID!) {
      webhook(agentId: $a, id: $w) { url headers }
      webhooks(agentId: $a) { edges { node { url headers } } }
      agent(id: $a) { webhooks { edges { node { headers } } } intents { edges { node { webhookUrl } } } }
      intents(agentId: $a) { edges { node { webhookUrl } } }
    }`;
    for (const role of ["OWNER", "MANAGER", "AGENT", "VIEWER"] as const) {
      const client = role === "OWNER" ? owner.client : (await t.seed.member(workspaceId, role)).client;
      const res = await client.graphql(query, { a: agent.id, w: hook });
      assert.equal(res.status, 200);
      const text = JSON.stringify(res.body);
      assert.ok(!text.includes("sb1:"), `${role}: ${text}`);
      const d = res.body.data;
      const opened = role === "OWNER" || role === "MANAGER";
      const headers = opened
        ? { "X-Key": "k", Authorization: "Bearer s3cret" }
        : { "X-Key": MASK, Authorization: MASK };
      const shown = opened ? url : maskUrlSecrets(url);
      assert.notEqual(maskUrlSecrets(url), url);
      assert.deepEqual(d.webhook, { url: shown, headers }, role);
      assert.deepEqual(d.webhooks.edges[0].node, { url: shown, headers }, role);
      assert.deepEqual(d.agent.webhooks.edges[0].node.headers, headers, role);
      const intentUrl = opened
        ? "https://example.com/i?api_key=zzz"
        : maskUrlSecrets("https://example.com/i?api_key=zzz");
      assert.deepEqual(d.agent.intents.edges[0].node.webhookUrl, intentUrl, role);
      assert.deepEqual(d.intents.edges[0].node.webhookUrl, intentUrl, role);
      // And over REST's reads.
      const ctx = { ...t.app.deps, actor: { ...(await actorOf(t, owner.token, workspaceId)).actor, role } };
      const one = JSON.parse(await restRead(ctx, webhook, { agentId: agent.id, webhookId: hook }, {}));
      assert.deepEqual([one.url, one.headers], [shown, headers], role);
      const page = await restRead(ctx, webhooks, { agentId: agent.id }, {});
      assert.ok(!page.includes("sb1:"), role);
    }

    // A stored string that looks like the planner's marker is shown as it is.
    const lookalike = `["\\u00000", "x"] \u2028 "\\u0000`;
    const odd = await owner.client.post(`/api/agents/${agent.id}/intents`, {
      ...INTENT_FIELDS,
      name: "Odd",
      description: lookalike,
    });
    assert.equal(odd.status, 201);
    const got = await gqlData(
      owner.client,
      `query($a: ID!, $i: ID!) { intent(agentId: $a, id: $i) { description } }`,
      {
        a: agent.id,
        i: odd.body.id,
      },
    );
    assert.equal(got.intent.description, lookalike);
  }));

Deno.test("another workspace's ids answer as unknown ones, with the label of the first missing step", () =>
  withApp(async (t) => {
    const mine = await t.seed.workspace("Mine");
    const theirs = await t.seed.workspace("Theirs");
    const myAgent = await t.seed.agent(mine.owner.client);
    const theirAgent = await t.seed.agent(theirs.owner.client);
    const theirHook = (await theirs.owner.client.post(`/api/agents/${theirAgent.id}/webhooks`, HOOK)).body;
    const theirHookId = theirHook.webhook?.id ?? theirHook.id;
    const unknown = `c${"0".repeat(24)}`;
    const c = mine.owner.client;
    const answer = async (query: string, variables: Record<string, unknown>) => {
      const res = await c.graphql(query, variables);
      assert.equal(res.status, 200);
      return res.body;
    };
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string, string]> = [
      [
        `query($a: ID!) { agent(id: $a) { id } }`,
        { a: theirAgent.id },
        { a: unknown },
        "agent",
        "Agent not found.",
      ],
      [
        `query($a: ID!, $w: ID!) { webhook(agentId: $a, id: $w) { id } }`,
        { a: myAgent.id, w: theirHookId },
        { a: myAgent.id, w: unknown },
        "webhook",
        "Webhook not found.",
      ],
      [
        `query($a: ID!, $w: ID!) { webhook(agentId: $a, id: $w) { id } }`,
        { a: theirAgent.id, w: theirHookId },
        { a: unknown, w: unknown },
        "webhook",
        // The webhook is looked up with its agent (as the services always have).
        "Webhook not found.",
      ],
      [
        `query($a: ID!) { webhooks(agentId: $a) { edges { cursor } } }`,
        { a: theirAgent.id },
        { a: unknown },
        "webhooks",
        "Agent not found.",
      ],
      [
        `query($a: ID!, $w: ID!, $d: ID!) { webhookDelivery(agentId: $a, webhookId: $w, id: $d) { id } }`,
        { a: myAgent.id, w: theirHookId, d: unknown },
        { a: myAgent.id, w: unknown, d: unknown },
        "webhookDelivery",
        "Webhook not found.",
      ],
    ];
    for (const [query, foreign, none, field, message] of cases) {
      const [a, b] = [await answer(query, foreign), await answer(query, none)];
      assert.deepEqual(a, b, query);
      assert.equal(a.data, null);
      assert.equal(a.errors.length, 1);
      assert.deepEqual(
        [a.errors[0].message, a.errors[0].extensions.code, a.errors[0].path],
        [message, "NOT_FOUND", [field]],
        query,
      );
    }
    // Pages list the workspace's own rows only.
    const list = await gqlData(c, `{ agents { edges { node { id } } } }`);
    assert.deepEqual(list.agents.edges, [{ node: { id: myAgent.id } }]);
    // The planner itself: one statement for several roots, each missing one reported with its label.
    const ctx = await actorOf(t, mine.owner.token, mine.workspaceId);
    const res = await runReads(ctx, [
      { key: "a", read: intent, params: { agentId: myAgent.id, intentId: unknown }, selection: [] },
      {
        key: "b",
        read: webhookDelivery,
        params: { agentId: myAgent.id, webhookId: theirHookId, deliveryId: unknown },
        selection: [{ key: "id", field: "id" }],
      },
      {
        key: "c",
        read: promptVersions,
        params: { agentId: myAgent.id },
        page: { first: 1 },
        shape: { kind: "rest", node: [] },
      },
    ]);
    assert.deepEqual(JSON.parse(res.json), { a: null, b: null, c: { data: [], nextCursor: null } });
    assert.deepEqual([...res.missing].map(([k, e]) => [k, e.message]), [["a", "Intent not found."], [
      "b",
      "Webhook not found.",
    ]]);
  }));

Deno.test("a GraphQL read is one data statement after the credential's, its text sent as PostgreSQL built it", async () => {
  const database = await createTestDatabase();
  let statements: string[] = [];
  const db = createPrisma(database.url, { onQuery: (sql) => statements.push(sql) });
  try {
    await withApp(async ({ app, seed }) => {
      const { owner } = await seed.workspace();
      for (const name of ["A", "B", "C"]) {
        const a = await seed.agent(owner.client, { name });
        await owner.client.post(`/api/agents/${a.id}/intents`, { ...INTENT_FIELDS, name: "Pedido" });
        await owner.client.post(`/api/agents/${a.id}/webhooks`, HOOK);
      }
      const query = `{
        agents(first: 10) { pageInfo { hasNextPage endCursor } edges { cursor node {
          id name counts { intents numbers }
          intents(first: 5) { edges { node { id tag requiredFields { name } } } }
          webhooks(last: 5) { edges { node { id url headers deliveries(first: 2) { edges { node { id attempts { number } } } } } } }
          promptVersions { edges { node { id } } }
        } } }
        members { edges { node { id email } } }
      }`;
      statements = [];
      const data = await gqlData(owner.client, query);
      assert.equal(data.agents.edges.length, 3);
      // The credential (session and membership) and the data.
      assert.equal(statements.length, 2, statements.join("\n"));
      assert.match(statements[1], /^SELECT CASE WHEN octet_length\(a\.data\) <= \$\d+::int THEN a\.data END/);
      // Not parsed and stringified again: PostgreSQL's own text (to_json of records: `"key":value`, no
      // spaces) reaches the client, in a body that is exactly {"data": <that text>}.
      const res = await app.fetch(
        new Request("http://test.local/graphql", {
          method: "POST",
          headers: {
            authorization: `Bearer ${owner.token}`,
            "x-workspace-id": owner.client.workspaceId!,
            "content-type": "application/json",
          },
          body: JSON.stringify({ query: `{ agents(first: 1) { edges { node { name } } } }` }),
        }),
      );
      assert.equal(await res.text(), `{"data":{"agents":{"edges":[{"node":{"name":"A"}}]}}}`);
      // Response keys past PostgreSQL's 63-byte names (a row's column names would be cut) stay whole.
      const [at63, at64] = ["k".repeat(63), "k".repeat(64)];
      const long = await gqlData(
        owner.client,
        `{ agents(first: 1) { edges { node { ${at63}: name } } }
        more: agents(first: 1) { edges { node { ${at64}: name id: name } } } }`,
      );
      assert.deepEqual(long.agents.edges[0].node, { [at63]: "A" });
      assert.deepEqual(long.more.edges[0].node, { [at64]: "A", id: "A" });
    }, { db });
  } finally {
    await db.$disconnect();
    await database.drop();
  }
});

Deno.test("a planned read is a named statement: PostgreSQL parses and plans it once per connection", async () => {
  const database = await createTestDatabase();
  // One connection, so the session that prepared the statement is the one asked about it.
  const db = createPrisma(database.url, { max: 1 });
  try {
    await withApp(async ({ seed }) => {
      const { owner } = await seed.workspace();
      await seed.agent(owner.client, { name: "A" });
      const query =
        `{ agents(first: 5) { edges { node { id name intents(first: 2) { edges { node { id } } } } } } }`;
      for (let i = 0; i < 3; i++) assert.equal((await gqlData(owner.client, query)).agents.edges.length, 1);
      const prepared = await db.$queryRawUnsafe<{ name: string; statement: string }[]>(
        `SELECT name, statement FROM pg_prepared_statements WHERE statement LIKE 'SELECT CASE WHEN octet_length(a.data)%"agents"%'`,
      );
      // Three requests, one prepared statement (the same text each time).
      assert.equal(prepared.length, 1);
      assert.match(prepared[0].name, /^f\d+$/, "named by the fast path");
    }, { db });
  } finally {
    await db.$disconnect();
    await database.drop();
  }
});

Deno.test("statement names: one per distinct text, never reused for another, none past the bound", () => {
  const name = statementNames(2);
  assert.equal(name({ sql: "SELECT 1" }), "s0");
  assert.equal(name({ sql: "SELECT 2" }), "s1");
  assert.equal(name({ sql: "SELECT 1" }), "s0");
  // Past the bound: unnamed (pg sends it as the unnamed statement), and it stays so.
  assert.equal(name({ sql: "SELECT 3" }), "");
  assert.equal(name({ sql: "SELECT 3" }), "");
  assert.equal(name({ sql: "SELECT 2" }), "s1");
});

Deno.test("restRead answers every read exactly as today's REST routes do, 404s included", () =>
  withApp(async (t) => {
    // (No workers: the test delivery stays as it is between the two reads.)
    const { workspaceId, owner } = await t.seed.workspace();
    const c = owner.client;
    await t.seed.member(workspaceId, "VIEWER");
    await c.post(`/api/workspaces/${workspaceId}/invites`, { email: "x@y.test", role: "AGENT" });
    await c.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "t" });
    const agent = await t.seed.agent(c, { temperature: 0.25 });
    await c.put(`/api/agents/${agent.id}/prompt`, { systemPrompt: "Nova", rationale: "r" });
    const made = await c.post(`/api/agents/${agent.id}/intents`, {
      ...INTENT_FIELDS,
      name: "Pedido",
      requiredFields: [{ name: "cpf", type: "string", description: "CPF" }],
      triggerOnTypes: ["TEXT", "IMAGE"],
      webhookUrl: "https://example.com/i?token=z",
    });
    const hook = await c.post(`/api/agents/${agent.id}/webhooks`, {
      ...HOOK,
      url: "https://example.com/w?key=1",
    });
    const hookId = hook.body.webhook?.id ?? hook.body.id;
    const sent = await c.post(`/api/agents/${agent.id}/webhooks/${hookId}/test`);
    const deliveryId = sent.body.id ?? sent.body.delivery?.id;
    const channel = await c.post(`/api/agents/${agent.id}/channels`, { type: "API", label: "App" });
    const message = await c.post(`/api/channels/${channel.body.id}/messages`, {
      contact: { externalId: "u1" },
      type: "TEXT",
      content: "hi",
    });
    const approvalId = await newApproval(await actorOf(t, owner.token, workspaceId), agent.id);
    const ids: Record<string, string> = {
      approvalId,
      agentId: agent.id,
      intentId: made.body.id,
      webhookId: hookId,
      deliveryId,
      workspaceId,
      conversationId: message.body.conversationId,
      channelId: channel.body.id,
    };
    const unknown = `c${"0".repeat(24)}`;
    const { CAPABILITIES } = await import("../src/capabilities.ts");
    const ctx = await actorOf(t, owner.token, workspaceId);
    let compared = 0;
    for (const read of CAPABILITIES) {
      if (read.kind !== "read" || !read.http) continue;
      const path = read.http.path.replace(/\{(\w+)\}/g, (_, name) => ids[name]);
      const rest = await c.get(path);
      assert.equal(rest.status, 200, `${path}: ${JSON.stringify(rest.body)}`);
      const mine = JSON.parse(await restRead(ctx, read, ids, {}));
      assert.deepEqual(mine, rest.body, read.name);
      // Each id unknown in turn: the same 404 message.
      for (const param of Object.keys(read.params)) {
        const bad = { ...ids, [param]: unknown };
        const res = await c.get(read.http.path.replace(/\{(\w+)\}/g, (_, name) => bad[name]));
        await assert.rejects(
          () => restRead(ctx, read, bad, {}),
          (e: AppError) => e.code === "NOT_FOUND" && e.status === res.status && e.message === res.body.detail,
          `${read.name} ${param}: ${JSON.stringify(res.body)}`,
        );
      }
      compared++;
    }
    // 19, a channel's templates, an agent's pinned replay cases, the workspace's inbox.
    assert.equal(compared, 22);
    // The inbox's filters, as the route reads them from the query.
    const { inbox } = await import("../src/conversations/inbox_capabilities.ts");
    for (
      const [query, rows] of [
        [{ assignee: "none", agentId: agent.id, status: "OPEN", limit: "5" }, 1],
        [{ search: "nothing like it", limit: "5" }, 0],
      ] as const
    ) {
      const filtered = await c.get(`/api/conversations?${new URLSearchParams(query)}`);
      assert.equal(filtered.body.data.length, rows, JSON.stringify(filtered.body));
      assert.deepEqual(JSON.parse(await restRead(ctx, inbox, {}, query)), filtered.body);
    }
  }, { workers: false }));

Deno.test("objects of more than 50 keys (json_build_object's limit) and rows just written", () =>
  withApp(async (t) => {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { name: "Wide" });
    const ctx = await actorOf(t, owner.token, workspaceId);
    const names = Object.keys(viewOf(agentView).fields);
    const selection = Array.from(
      { length: 120 },
      (_, i) => ({ key: `k${i}`, field: names[i % names.length] }),
    );
    const res = await runReads(ctx, [{ key: "a", read: agentCap, params: { agentId: agent.id }, selection }]);
    const rest = (await owner.client.get(`/api/agents/${agent.id}`)).body;
    const expected = Object.fromEntries(selection.map((s) => [s.key, rest[s.field]]));
    assert.deepEqual(JSON.parse(res.json), { a: expected });
    assert.deepEqual(Object.keys(JSON.parse(res.json).a), selection.map((s) => s.key));

    // A row just written, read back by id as REST answers it (every field, presented).
    const hook = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      ...HOOK,
      url: "https://e.test/?token=1",
    });
    const hookId = hook.body.webhook?.id ?? hook.body.id;
    const viewer = { ...ctx, actor: { ...ctx.actor, role: "VIEWER" as const } };
    for (const who of [ctx, viewer]) {
      const got = JSON.parse(await restRow(who, webhookView, hookId));
      assert.deepEqual(
        got,
        JSON.parse(await restRead(who, webhook, { agentId: agent.id, webhookId: hookId }, {})),
      );
    }
    assert.deepEqual(JSON.parse(await restRow(ctx, webhookView, hookId)).headers, HOOK.headers);
    assert.deepEqual(JSON.parse(await restRow(viewer, webhookView, hookId)).headers, { "X-Key": MASK });
  }));
