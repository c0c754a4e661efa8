/**
 * The two executors of /graphql (docs/development.md "Types"): a read in an operation the fast
 * path does not take (beside `viewer`, or `__typename` at the root) runs through plugin-prisma and
 * answers exactly as the same read alone (the planner's fast path), per role; a write's answer is
 * its row resolved by the declared type's resolvers, plugin-prisma loading what the row lacks.
 */
import assert from "node:assert/strict";
import { type Client, startTestApp } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { createPrisma } from "../src/db/client.ts";

const SECRET_URL = "https://example.com/hook?token=s3cr3t&page=2";
const HEADERS = { "X-Key": "hunter2" };

/** The data of a GraphQL answer, failing the test on any error. */
// deno-lint-ignore no-explicit-any
async function gqlData(client: Client, query: string, variables?: Record<string, unknown>): Promise<any> {
  const res = await client.graphql(query, variables);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const body = res.body as { data: unknown; errors?: unknown };
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

const READ = `agents(first: 5) {
  edges { cursor node {
    id name counts { intents }
    intents(first: 2) { edges { cursor node { id name webhookUrl } } pageInfo { hasNextPage } }
    webhooks { edges { node { id url headers } } }
  } }
  pageInfo { hasNextPage endCursor }
}`;

Deno.test("a read beside viewer or __typename answers as the same read alone does, for each role", async () => {
  const ta = await startTestApp();
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    for (const name of ["A", "B"]) {
      const agent = await ta.seed.agent(owner.client, { name });
      for (const intent of ["Uno", "Dos", "Tres"]) {
        await owner.client.post(`/api/agents/${agent.id}/intents`, {
          ...INTENT_FIELDS,
          name: `${intent} ${name}`,
          webhookUrl: SECRET_URL,
        });
      }
      await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
        event: "message.sent",
        url: SECRET_URL,
        headers: HEADERS,
      });
    }
    const members = {
      OWNER: owner.client.in(workspaceId),
      AGENT: (await ta.seed.member(workspaceId, "AGENT")).client,
      VIEWER: (await ta.seed.member(workspaceId, "VIEWER")).client,
    };
    for (const [role, client] of Object.entries(members)) {
      const alone = await gqlData(client, `{ ${READ} }`);
      const besideViewer = await gqlData(client, `{ viewer { user { id } } ${READ} }`);
      const besideTypename = await gqlData(client, `{ __typename ${READ} }`);
      assert.deepEqual(besideViewer.agents, alone.agents, role);
      assert.deepEqual(besideTypename.agents, alone.agents, role);
      assert.equal(besideTypename.__typename, "Query");
      // Presented once on each path: opened for OWNER, masked for the others.
      const hook = alone.agents.edges[0].node.webhooks.edges[0].node;
      const intent = alone.agents.edges[0].node.intents.edges[0].node;
      if (role === "OWNER") {
        assert.deepEqual([hook.headers, hook.url, intent.webhookUrl], [HEADERS, SECRET_URL, SECRET_URL]);
      } else {
        assert.notEqual(hook.headers["X-Key"], HEADERS["X-Key"], role);
        assert.ok(!hook.url.includes("s3cr3t") && !intent.webhookUrl.includes("s3cr3t"), role);
      }
      assert.equal(alone.agents.edges.length, 2);
      assert.equal(alone.agents.edges[0].node.intents.pageInfo.hasNextPage, true);
    }
  } finally {
    await ta.close();
  }
});

/** The planner's statement (src/reads/plan.ts): the answer's JSON measured against the byte budget. */
const isPlanner = (sql: string) => sql.includes("octet_length(a.data)");

Deno.test("a write's answer with nested relations, and a read beside viewer, are resolved by plugin-prisma; headers opened for MANAGER", async () => {
  const database = await createTestDatabase();
  let statements: string[] = [];
  const db = createPrisma(database.url, { onQuery: (sql) => statements.push(sql) });
  const ta = await startTestApp({}, { db });
  try {
    const { workspaceId } = await ta.seed.workspace();
    const manager = (await ta.seed.member(workspaceId, "MANAGER")).client;
    const agent = await ta.seed.agent(manager);
    await manager.post(`/api/agents/${agent.id}/intents`, { ...INTENT_FIELDS, name: "Pedido" });

    statements = [];
    const created = (await gqlData(
      manager,
      `mutation($agentId: ID!, $input: CreateWebhookInput!) {
        createWebhook(agentId: $agentId, input: $input) {
          signingSecret
          webhook { id url headers deliveries(first: 5) { edges { node { id } } } }
        }
      }`,
      { agentId: agent.id, input: { event: "message.sent", url: SECRET_URL, headers: HEADERS } },
    )).createWebhook;
    assert.match(created.signingSecret, /^whsec_/);
    // The stored values, presented once by the Webhook type's resolvers: MANAGER sees them opened.
    assert.deepEqual(created.webhook.headers, HEADERS);
    assert.equal(created.webhook.url, SECRET_URL);
    assert.deepEqual(created.webhook.deliveries.edges, []);
    assert.ok(!statements.some(isPlanner), statements.join("\n"));
    assert.ok(statements.some((s) => /"WebhookDelivery"/.test(s)), "plugin-prisma read the deliveries");

    statements = [];
    const updated = (await gqlData(
      manager,
      `mutation($id: ID!) {
        setAgentStatus(id: $id, input: { status: PAUSED }) {
          id status counts { intents }
          intents { edges { node { name } } }
          webhooks { edges { node { headers } } }
        }
      }`,
      { id: agent.id },
    )).setAgentStatus;
    assert.equal(updated.status, "PAUSED");
    assert.deepEqual(updated.counts, { intents: 1 });
    assert.deepEqual(updated.intents.edges, [{ node: { name: "Pedido" } }]);
    assert.deepEqual(updated.webhooks.edges, [{ node: { headers: HEADERS } }]);
    assert.ok(!statements.some(isPlanner), statements.join("\n"));

    // A read beside viewer runs through plugin-prisma too; the same read alone is the planner's.
    statements = [];
    const mixed = await gqlData(manager, `{ viewer { user { id } } ${READ} }`);
    assert.ok(!statements.some(isPlanner), statements.join("\n"));
    statements = [];
    assert.deepEqual((await gqlData(manager, `{ ${READ} }`)).agents, mixed.agents);
    assert.ok(statements.some(isPlanner), "the fast path answered the read alone");

    // The VIEWER sees the same webhook masked (its read goes through the planner's fast path).
    const viewer = (await ta.seed.member(workspaceId, "VIEWER")).client;
    const read = await gqlData(
      viewer,
      `query($id: ID!) { agent(id: $id) { webhooks { edges { node { headers } } } } }`,
      {
        id: agent.id,
      },
    );
    assert.notDeepEqual(read.agent.webhooks.edges[0].node.headers, HEADERS);
  } finally {
    await ta.close();
    await db.$disconnect();
    await database.drop();
  }
});
