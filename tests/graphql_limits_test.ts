/**
 * GraphQL document limits (src/graphql/limits.ts): bombs within 1 MiB are refused before
 * validation while the server keeps answering, the boundaries of each limit, introspection only
 * outside production, a code on every error, and cursors (BAD_CURSOR; another workspace's cursor
 * answers like an unknown one) over GraphQL and REST.
 */
import assert from "node:assert/strict";
import { getIntrospectionQuery } from "graphql";
import { type Reply, startTestApp, type TestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus } from "./_helpers/problem.ts";
import { MAX_BODY_BYTES } from "../src/shared/http_body.ts";
import { ConfigError, loadConfig } from "../src/config.ts";
import { GraphQLError } from "graphql";
import { PothosValidationError } from "@pothos/core";
import { createMaskError } from "../src/graphql/errors.ts";
import { AppError } from "../src/shared/errors.ts";
import { encodeCursor } from "../src/shared/pagination.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { DATE_INTENT } from "./_helpers/fixtures.ts";

async function withApp(env: Record<string, string>, fn: (t: TestApp) => Promise<void>) {
  const t = await startTestApp(env);
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

/** The one error of a GraphQL answer: its status and `extensions.code`. */
function assertRefused(res: Reply, status: number, code: string) {
  const where = JSON.stringify(res.body).slice(0, 500);
  assert.equal(res.status, status, where);
  assert.ok(Array.isArray(res.body.errors), where);
  assert.deepEqual(
    res.body.errors.map((e: { extensions?: { code?: string } }) => e.extensions?.code),
    [code],
    where,
  );
  assert.equal(res.body.data ?? null, null, where);
}

function assertAnswered(res: Reply) {
  assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 500));
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
}

/** `{ a { a { ... } } }`, n fields deep. */
const nested = (n: number, leaf = "a") => "{ a ".repeat(n - 1) + `{ ${leaf} }` + " }".repeat(n - 1);

const INTENT = DATE_INTENT;

Deno.test("bombs within 1 MiB are refused with QUERY_TOO_COMPLEX while /healthz keeps answering", () =>
  withApp({ PORT: "0" }, async ({ app }) => {
    const { port } = await app.start();
    const base = `http://127.0.0.1:${port}`;
    // A generous bound, only so that a stalled server fails the test instead of hanging it.
    const signal = () => AbortSignal.timeout(30_000);
    const post = async (query: string) => {
      const body = JSON.stringify({ query });
      assert.ok(new TextEncoder().encode(body).length <= MAX_BODY_BYTES, `${body.length} bytes`);
      const res = await fetch(`${base}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        signal: signal(),
      });
      return { status: res.status, headers: res.headers, body: await res.json() };
    };
    const fragments = Array.from(
      { length: 40 },
      (_, i) => `fragment F${i + 1} on Query { ...F${i} ...F${i} }`,
    );
    const bombs = {
      typename: `{ ${"__typename ".repeat(95_000)} }`,
      aliases: `{ ${Array.from({ length: 50_000 }, (_, i) => `a${i}: __typename`).join(" ")} }`,
      depth: nested(5_000),
      // Few tokens, 2^40 fields once the fragments are expanded.
      fragments: `{ ...F40 } fragment F0 on Query { __typename } ${fragments.join(" ")}`,
      // 40 aliases once the fragment is spread twice.
      fragmentAliases: `{ ...A ... on Query { ...A } } fragment A on Query { ${
        Array.from({ length: 20 }, (_, i) => `b${i}: __typename`).join(" ")
      } }`,
    };
    for (const [name, query] of Object.entries(bombs)) {
      const bomb = post(query);
      const health = Array.from({ length: 5 }, () => fetch(`${base}/healthz`, { signal: signal() }));
      const statuses = await Promise.all(health.map(async (p) => {
        const res = await p;
        await res.body?.cancel();
        return res.status;
      }));
      assert.deepEqual(statuses, [200, 200, 200, 200, 200], name);
      const res = await bomb;
      assertRefused(res, 400, "QUERY_TOO_COMPLEX");
      assert.match(res.headers.get("content-type") ?? "", /json/, name);
    }
  }));

Deno.test("limits: depth 12, 30 aliases, page size 100, cost, introspection in development", () =>
  withApp({ APP_ENV: "development" }, async ({ seed }) => {
    const { owner } = await seed.workspace("Acme");
    const c = owner.client;
    await seed.agent(c, { name: "A" });

    // The deepest path of the schema (11 fields) answers.
    const deepest = `{ agents(first: 2) { edges { node { webhooks(first: 2) { edges { node {
      deliveries(first: 2) { edges { node { attempts { number } } } } } } } } } } }`;
    assertAnswered(await c.graphql(deepest));
    // Depth 12 passes the limits (and fails validation: no such field); 13 is refused before it.
    assertRefused(await c.graphql(nested(12)), 400, "GRAPHQL_VALIDATION_FAILED");
    assertRefused(await c.graphql(nested(13)), 400, "QUERY_TOO_COMPLEX");
    assertRefused(await c.graphql(nested(5_000)), 400, "QUERY_TOO_COMPLEX");
    // Inline fragments do not count as depth; their fields do.
    const inline = (n: number) => "{ ... { a ".repeat(n - 1) + "{ a }" + " } }".repeat(n - 1);
    assertRefused(await c.graphql(inline(12)), 400, "GRAPHQL_VALIDATION_FAILED");
    assertRefused(await c.graphql(inline(13)), 400, "QUERY_TOO_COMPLEX");

    const aliases = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(" ")} }`;
    const thirty = await c.graphql(aliases(30));
    assertAnswered(thirty);
    assert.equal(Object.keys(thirty.body.data).length, 30);
    assertRefused(await c.graphql(aliases(31)), 400, "QUERY_TOO_COMPLEX");

    const page = (n: number) => `{ agents(first: ${n}) { edges { node { id } } } }`;
    assertAnswered(await c.graphql(page(100)));
    assertRefused(await c.graphql(page(101)), 400, "QUERY_TOO_COMPLEX");
    assertRefused(
      await c.graphql(`{ agents(last: 101) { edges { node { id } } } }`),
      400,
      "QUERY_TOO_COMPLEX",
    );
    const byVariable = `query($n: Int) { agents(first: $n) { edges { node { id } } } }`;
    assertAnswered(await c.graphql(byVariable, { n: 100 }));
    assertRefused(await c.graphql(byVariable, { n: 101 }), 400, "QUERY_TOO_COMPLEX");
    assertRefused(
      await c.graphql(`query($n: Int = 101) { agents(first: $n) { edges { node { id } } } }`),
      400,
      "QUERY_TOO_COMPLEX",
    );
    // Nested pages multiply: 100 agents x 100 intents fit the default cost; a third level does not.
    assertAnswered(
      await c.graphql(`{ agents { edges { node { intents { edges { node { id } } } } } } }`),
    );
    assertRefused(await c.graphql(deepest.replaceAll("(first: 2)", "")), 400, "QUERY_TOO_COMPLEX");

    const introspection = await c.graphql(getIntrospectionQuery());
    assertAnswered(introspection);
    assert.ok(introspection.body.data.__schema.types.some((t: { name: string }) => t.name === "Agent"));
    // Introspection may nest deep, but lists of lists no more than the standard query does.
    assertAnswered(
      await c.graphql(`{ __type(name: "Agent") { fields { type { ofType { ofType { name } } } } } }`),
    );
    assertRefused(
      await c.graphql(`{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }`),
      400,
      "QUERY_TOO_COMPLEX",
    );
    const graphiql = await c.get("/graphql", { accept: "text/html" });
    assert.equal(graphiql.status, 200);
    assert.match(graphiql.headers.get("content-type") ?? "", /text\/html/);
  }));

Deno.test("production: no introspection, no GraphiQL, __typename works; GRAPHQL_MAX_COST", () =>
  withApp({ APP_ENV: "production", GRAPHQL_MAX_COST: "100" }, async ({ anon, seed }) => {
    assertRefused(await anon.graphql(getIntrospectionQuery()), 400, "INTROSPECTION_DISABLED");
    assertRefused(await anon.graphql(`{ __type(name: "Agent") { name } }`), 400, "INTROSPECTION_DISABLED");
    assertRefused(
      await anon.graphql(`{ ...F } fragment F on Query { __schema { queryType { name } } }`),
      400,
      "INTROSPECTION_DISABLED",
    );
    const typename = await anon.graphql(`{ __typename }`);
    assertAnswered(typename);
    assert.deepEqual(typename.body.data, { __typename: "Query" });
    const graphiql = await anon.get("/graphql", { accept: "text/html" });
    assert.doesNotMatch(graphiql.headers.get("content-type") ?? "", /text\/html/);
    assert.notEqual(graphiql.status, 200);

    // Nodes: 100 agents, the limit, whatever scalars they show; one page more below them is over.
    const { owner } = await seed.workspace("Acme");
    assertAnswered(
      await owner.client.graphql(`{ agents(first: 100) { edges { node { id name systemPrompt } } } }`),
    );
    const over = await owner.client.graphql(
      `{ agents(first: 100) { edges { node { id intents(first: 1) { edges { node { id } } } } } } }`,
    );
    assertRefused(over, 400, "QUERY_TOO_COMPLEX");
    assert.match(over.body.errors[0].message, /may return 200 nodes .*; at most 100\./);
  }));

Deno.test("every GraphQL error carries a code", () =>
  withApp({}, async ({ anon, seed }) => {
    const { owner } = await seed.workspace("Acme");
    const c = owner.client;
    const cases: Array<[string, Promise<Reply>, number, string]> = [
      ["syntax", c.graphql(`{ agents { `), 400, "GRAPHQL_PARSE_FAILED"],
      ["empty document", c.graphql(``), 400, "GRAPHQL_PARSE_FAILED"],
      ["unknown field", c.graphql(`{ nope }`), 400, "GRAPHQL_VALIDATION_FAILED"],
      ["missing variable", c.graphql(`query($id: ID!) { agent(id: $id) { id } }`), 400, "BAD_USER_INPUT"],
      [
        "variable of the wrong type",
        c.graphql(`query($n: Int) { agents(first: $n) { edges { cursor } } }`, {
          n: "many",
        }),
        400,
        "BAD_USER_INPUT",
      ],
      [
        "unknown operation",
        c.request("POST", "/graphql", { query: `query A { __typename }`, operationName: "B" }),
        400,
        "OPERATION_RESOLUTION_FAILURE",
      ],
      ["negative page", c.graphql(`{ agents(first: -1) { edges { cursor } } }`), 200, "VALIDATION_FAILED"],
      ["unauthenticated", anon.graphql(`{ viewer { user { id } } }`), 200, "UNAUTHENTICATED"],
    ];
    for (const [name, reply, status, code] of cases) {
      const res = await reply;
      assert.equal(res.status, status, `${name}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(
        res.body.errors.map((e: { extensions?: { code?: string } }) => e.extensions?.code),
        [code],
        `${name}: ${JSON.stringify(res.body)}`,
      );
    }
  }));

Deno.test("bad cursors are BAD_CURSOR; another workspace's cursor answers like an unknown one", () =>
  withApp({}, async ({ seed }) => {
    const mine = await seed.workspace("Mine");
    const theirs = await seed.workspace("Theirs");
    const c = mine.owner.client;
    const agents = [await seed.agent(c, { name: "A" }), await seed.agent(c, { name: "B" })];
    const foreignAgent = await seed.agent(theirs.owner.client, { name: "X" });
    for (const a of [...agents, foreignAgent]) {
      const client = a === foreignAgent ? theirs.owner.client : c;
      assertStatus(await client.post(`/api/agents/${a.id}/intents`, INTENT), 201);
      assertStatus(await client.post(`/api/agents/${a.id}/intents`, { ...INTENT, name: "Outra" }), 201);
    }
    const foreignIntent =
      (await theirs.owner.client.get(`/api/agents/${foreignAgent.id}/intents`)).body.data[0].id;
    // Keyset cursors (shared/pagination.ts): the same position, naming a foreign row or no row.
    const cursor = (id: string) => encodeCursor({ at: new Date(0), id });

    const badCursors: unknown[] = [
      "",
      "\u0000",
      "not-a-cursor",
      btoa("GPC:S:\u0000"),
      btoa("GPC:S:a\u0000b"),
      btoa("GPC:S:"),
      btoa("GPC:N:1"),
      btoa('GPC:J:{"id":1}'),
      btoa("GPC:S:x".padEnd(80, "y")),
      btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(24)))),
      "%%%",
      1,
      1.5,
      true,
      { id: agents[0].id },
      [cursor(agents[0].id)],
    ];
    const list = `query($c: String) { agents(first: 1, after: $c) { edges { node { id } } } }`;
    const nestedList =
      `query($id: ID!, $c: String) { agent(id: $id) { intents(first: 1, before: $c) { edges { cursor } } } }`;
    for (const bad of badCursors) {
      assertRefused(await c.graphql(list, { c: bad }), 400, "BAD_CURSOR");
      assertRefused(await c.graphql(nestedList, { id: agents[0].id, c: bad }), 400, "BAD_CURSOR");
      if (typeof bad === "string") {
        assertRefused(
          await c.graphql(`{ agents(after: ${JSON.stringify(bad)}) { edges { cursor } } }`),
          400,
          "BAD_CURSOR",
        );
      }
    }
    assertRefused(await c.graphql(`{ agents(after: 5) { edges { cursor } } }`), 400, "BAD_CURSOR");
    assertRefused(await c.graphql(`{ agents(after: { id: "x" }) { edges { cursor } } }`), 400, "BAD_CURSOR");
    assertAnswered(await c.graphql(list, { c: null }));

    const restLists = [
      "/api/agents",
      `/api/agents/${agents[0].id}/intents`,
      `/api/agents/${agents[0].id}/webhooks`,
      `/api/agents/${agents[0].id}/prompt-versions`,
      `/api/workspaces/${mine.workspaceId}/invites`,
      `/api/workspaces/${mine.workspaceId}/api-tokens`,
    ];
    for (const path of restLists) {
      for (const bad of ["%00", "a%00", "%7B%7D", "a%20b", "x".repeat(65), "%E2%80%A8", btoa("GPC:S:x")]) {
        assertProblem(await c.get(`${path}?cursor=${bad}`), 400, "BAD_CURSOR");
      }
    }

    // A well-formed id of another workspace answers exactly as an id that names no row.
    const unknownId = "c" + "0".repeat(24);
    const same = async (request: (id: string) => Promise<Reply>) => {
      const [foreign, unknown] = [await request(foreignAgent.id), await request(unknownId)];
      assert.equal(foreign.status, unknown.status);
      assert.deepEqual(foreign.body, unknown.body);
      return foreign;
    };
    const listOnly = `query($c: String) { agents(after: $c) { edges { node { id } } } }`;
    const withMore = `query($c: String) { agents(after: $c) { edges { node { id jobName } } } }`;
    for (const q of [listOnly, withMore]) {
      const res = await same((id) => c.graphql(q, { c: cursor(id) }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const backwards = await same((id) => c.graphql(q.replace("after", "before"), { c: cursor(id) }));
      assert.equal(backwards.status, 200, JSON.stringify(backwards.body));
    }
    // REST cursors are keysets: the same position naming their row or no row answers the same.
    const restCursor = (id: string) => encodeCursor({ at: new Date(0), id });
    await same((id) => c.get(`/api/agents?cursor=${restCursor(id)}`));
    const nestedIntents = `query($id: ID!, $c: String) {
      agent(id: $id) { intents(after: $c) { edges { node { id } } } } }`;
    const intentCursor = async (id: string, direction: string) => {
      const q = nestedIntents.replace("after", direction);
      const [foreign, unknown] = [
        await c.graphql(q, { id: agents[0].id, c: cursor(id) }),
        await c.graphql(q, { id: agents[0].id, c: cursor(unknownId) }),
      ];
      assert.deepEqual(foreign.body, unknown.body);
    };
    await intentCursor(foreignIntent, "after");
    await intentCursor(foreignIntent, "before");
    const topIntents =
      `query($a: ID!, $c: String) { intents(agentId: $a, before: $c) { edges { node { id } } } }`;
    const [foreignTop, unknownTop] = [
      await c.graphql(topIntents, { a: agents[0].id, c: cursor(foreignIntent) }),
      await c.graphql(topIntents, { a: agents[0].id, c: cursor(unknownId) }),
    ];
    assert.deepEqual(foreignTop.body, unknownTop.body);
    const [foreignRest, unknownRest] = [
      await c.get(`/api/agents/${agents[0].id}/intents?cursor=${restCursor(foreignIntent)}`),
      await c.get(`/api/agents/${agents[0].id}/intents?cursor=${restCursor(unknownId)}`),
    ];
    assert.equal(foreignRest.status, unknownRest.status);
    assert.deepEqual(foreignRest.body, unknownRest.body);
  }));

/** A dashboard: 100 agents with every field, and 100 intents and 100 webhooks of each with every field. */
const DASHBOARD = `{ agents(first: 100) { edges { cursor node {
  id name status template model systemPrompt trainingContext temperature jobName jobSite jobDescription
  enabledHumanTransfer enabledReminder splitMessages enabledEmoji signMessages messageGroupingTime
  maxDailyMessages autoCloseMinutes createdAt updatedAt counts { conversations intents numbers }
  intents(first: 100) { edges { node { id agentId name tag description triggerOnTypes
    requiredFields { name type description } webhookUrl webhookMethod createdAt updatedAt } }
    pageInfo { hasNextPage endCursor } }
  webhooks(first: 100) { edges { node { id agentId event url method headers lastError createdAt updatedAt } }
    pageInfo { hasNextPage endCursor } }
} } pageInfo { hasNextPage endCursor } } }`;

Deno.test("the default node limit admits a dashboard (20 100 nodes) and refuses a third level of pages", () =>
  withApp({}, async ({ seed }) => {
    const { owner } = await seed.workspace("Acme");
    const agent = await seed.agent(owner.client, { name: "A" });
    assert.equal((await owner.client.post(`/api/agents/${agent.id}/intents`, INTENT)).status, 201);
    const dashboard = await owner.client.graphql(DASHBOARD);
    assertAnswered(dashboard);
    const [edge] = dashboard.body.data.agents.edges;
    assert.equal(edge.node.name, "A");
    assert.equal(edge.node.intents.edges[0].node.name, "Agendar");
    assert.deepEqual(edge.node.webhooks.edges, []);
    // 100 + 100 x 100 intents + 100 x 100 webhooks + 100 x 100 x 100 deliveries: over 100 000.
    const deeper = await owner.client.graphql(
      DASHBOARD.replace("lastError", "lastError deliveries(first: 100) { edges { node { id } } }"),
    );
    assertRefused(deeper, 400, "QUERY_TOO_COMPLEX");
    assert.match(deeper.body.errors[0].message, /may return 1020100 nodes/);
  }));

Deno.test("GRAPHQL_MAX_COST: default 100000 nodes, a positive integer", () => {
  assert.equal(loadConfig({}).graphqlMaxCost, 100_000);
  assert.equal(loadConfig({ GRAPHQL_MAX_COST: "5000" }).graphqlMaxCost, 5_000);
  for (const bad of ["0", "-1", "1.5", "lots"]) {
    assert.throws(() => loadConfig({ GRAPHQL_MAX_COST: bad }), (e) => {
      assert.ok(e instanceof ConfigError);
      assert.deepEqual(e.problems.map((p) => p.split(":")[0]), ["GRAPHQL_MAX_COST"]);
      return true;
    });
  }
});

Deno.test("every path of the error masking gives a code", () => {
  const mask = createMaskError(silentLogger);
  const inResolver = (original: Error) =>
    new GraphQLError(original.message, { path: ["agents"], originalError: original });
  const cases: Array<[string, unknown, string]> = [
    ["AppError", inResolver(new AppError("NOT_FOUND", 404, "Agent not found.")), "NOT_FOUND"],
    ["Pothos argument", inResolver(new PothosValidationError("first must be positive")), "VALIDATION_FAILED"],
    ["Pothos cursor", inResolver(new PothosValidationError("Invalid cursor: x")), "BAD_CURSOR"],
    [
      "coded GraphQLError",
      new GraphQLError("x", { extensions: { code: "GRAPHQL_PARSE_FAILED" } }),
      "GRAPHQL_PARSE_FAILED",
    ],
    [
      "request error without code",
      new GraphQLError('Variable "$id" of required type "ID!" was not provided.'),
      "BAD_USER_INPUT",
    ],
    [
      "resolver GraphQLError without code",
      inResolver(new GraphQLError("Int cannot represent 1.5")),
      "INTERNAL",
    ],
    ["bug", inResolver(new TypeError("x is undefined")), "INTERNAL"],
    ["bug outside a resolver", new RangeError("Maximum call stack size exceeded"), "INTERNAL"],
  ];
  for (const [name, error, code] of cases) {
    const masked = mask(error, "Unexpected error.") as GraphQLError;
    assert.equal(masked.extensions.code, code, name);
  }
});
