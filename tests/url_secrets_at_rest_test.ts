/**
 * A credential in a webhook or intent URL's query (`?token=`) is stored sealed like header values:
 * no row of the database holds it, the receiver is still called with it, OWNER reads the URL as
 * registered and VIEWER reads it masked. Rows stored before in plaintext are sealed at start.
 */
import assert from "node:assert/strict";
import { dumpDatabase } from "./_helpers/db.ts";
import { buildApp } from "../src/app.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { Client, startTestApp, type TestApp, testConfig } from "./_helpers/app.ts";
import { startReceiver } from "./_helpers/receiver.ts";
import { actorOf, newApproval } from "./_helpers/approvals.ts";
import {
  customerMessage,
  seedChannel,
  startGraph,
  startModelServer,
  waitUntil,
} from "./_helpers/conversations.ts";

const INTENT = {
  name: "Agendar",
  description: "marca uma visita",
  triggerOnTypes: ["TEXT"],
  requiredFields: [{ name: "data", type: "string", description: "dia" }],
};

async function count(t: TestApp, sql: string): Promise<number> {
  const [row] = await t.app.deps.db.$queryRawUnsafe<{ n: number }[]>(sql);
  return row.n;
}

Deno.test("a token in a webhook's or an intent's URL: sealed at rest, sent as registered, masked for VIEWER", async () => {
  const model = startModelServer(() => ({ content: 'Certo! <agendar data="2026-12-01"/>' }));
  const graph = startGraph();
  const hook = startReceiver(() => Response.json({ message: "Marcado." }));
  const t = await startTestApp({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: "20",
  });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const viewer = await t.seed.member(workspaceId, "VIEWER");
    const agent = await t.seed.agent(owner.client, { messageGroupingTime: "FAST" });
    const intentToken = `it-${crypto.randomUUID()}`;

    const webhookUrl = `${hook.url("/hook")}?token=abc123&page=2`;
    const created = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.sent",
      url: webhookUrl,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.url, webhookUrl, "the creation answers the URL as registered");
    const intentUrl = `${hook.url("/intent")}?page=1&api_key=${intentToken}`;
    const intent = await owner.client.post(`/api/agents/${agent.id}/intents`, {
      ...INTENT,
      webhookUrl: intentUrl,
    });
    assert.equal(intent.status, 201, JSON.stringify(intent.body));
    assert.equal(intent.body.webhookUrl, intentUrl);

    // At rest: not in the rows, nor anywhere else in the database.
    assert.equal(
      await count(t, `SELECT count(*)::int AS n FROM "EventWebhook" w WHERE w::text LIKE '%abc123%'`),
      0,
    );
    assert.equal(
      await count(t, `SELECT count(*)::int AS n FROM "EventWebhook" WHERE url LIKE '%?token=sb1:%'`),
      1,
    );
    assert.equal(
      await count(t, `SELECT count(*)::int AS n FROM "Intent" i WHERE i::text LIKE '%${intentToken}%'`),
      0,
    );
    const dump = await dumpDatabase(t.db.url);
    assert.ok(!dump.includes("abc123") && !dump.includes(intentToken), "the database holds the token");

    // Reads: OWNER as registered, VIEWER masked (REST and GraphQL).
    const webhookPath = `/api/agents/${agent.id}/webhooks/${created.body.id}`;
    assert.equal((await owner.client.get(webhookPath)).body.url, webhookUrl);
    assert.equal((await owner.client.get(`/api/agents/${agent.id}/webhooks`)).body.data[0].url, webhookUrl);
    const masked = `${hook.url("/hook")}?token=********&page=2`;
    assert.equal((await viewer.client.get(webhookPath)).body.url, masked);
    assert.equal((await viewer.client.get(`/api/agents/${agent.id}/webhooks`)).body.data[0].url, masked);
    const intentPath = `/api/agents/${agent.id}/intents/${intent.body.id}`;
    assert.equal((await owner.client.get(intentPath)).body.webhookUrl, intentUrl);
    assert.equal(
      (await viewer.client.get(intentPath)).body.webhookUrl,
      `${hook.url("/intent")}?page=1&api_key=********`,
    );
    const query =
      `query($id: ID!) { agent(id: $id) { webhooks { edges { node { url } } } intents { edges { node { webhookUrl } } } } }`;
    const graphOf = async (c: typeof owner.client) =>
      (await c.post("/graphql", { query, variables: { id: agent.id } })).body;
    const ownerGraph = await graphOf(owner.client);
    assert.equal(ownerGraph.data?.agent.webhooks.edges[0].node.url, webhookUrl, JSON.stringify(ownerGraph));
    assert.equal(ownerGraph.data?.agent.intents.edges[0].node.webhookUrl, intentUrl);
    const viewerGraph = await graphOf(viewer.client);
    assert.equal(viewerGraph.data?.agent.webhooks.edges[0].node.url, masked, JSON.stringify(viewerGraph));

    // The event webhook's receiver gets the token.
    const test = await owner.client.post(`${webhookPath}/test`, {});
    assert.equal(test.status, 202, JSON.stringify(test.body));
    await hook.waitForCalls(1);
    assert.deepEqual([hook.calls[0].path, hook.calls[0].search], ["/hook", "?token=abc123&page=2"]);

    // The intent's receiver gets its key.
    const channel = await seedChannel(t.app, workspaceId, agent.id);
    const m = await customerMessage(t.app, {
      workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content: "oi",
    });
    await waitUntil(
      () => t.app.deps.db.message.findUnique({ where: { id: m.messageId } }),
      (r) => r?.answeredAt !== null,
    );
    const call = hook.calls.find((c) => c.path === "/intent");
    assert.ok(call, `intent called: ${JSON.stringify(hook.calls.map((c) => c.path))}`);
    assert.equal(call.search, `?page=1&api_key=${intentToken}`);

    // A new URL given by PATCH is sealed too.
    const patched = `${hook.url("/hook")}?access_token=xyz789`;
    assert.equal((await owner.client.patch(webhookPath, { url: patched })).body.url, patched);
    const stored = await t.app.deps.db.eventWebhook.findUniqueOrThrow({ where: { id: created.body.id } });
    assert.match(stored.url, /\?access_token=sb1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    assert.ok(!(await dumpDatabase(t.db.url)).includes("xyz789"));

    // A change the supervisor proposes keeps the new URL's token sealed in its snapshot until approved.
    const proposedToken = `ap-${crypto.randomUUID()}`;
    const proposedUrl = `${hook.url("/approved")}?token=${proposedToken}`;
    const approvalId = await newApproval(
      await actorOf(t.app, owner.token, workspaceId),
      agent.id,
      { tool: "update_webhook", target: { webhookId: created.body.id }, change: { url: proposedUrl } },
    );
    assert.ok(!(await dumpDatabase(t.db.url)).includes(proposedToken), "the snapshot holds the token");
    const approval = (await owner.client.get(`/api/approvals/${approvalId}`)).body;
    assert.deepEqual([approval.before.url, approval.after.url], [patched, proposedUrl]);
    const approved = await owner.client.post(`/api/approvals/${approvalId}/approve`, {});
    assert.equal(approved.body.status, "APPROVED", JSON.stringify(approved.body));
    assert.equal((await owner.client.get(webhookPath)).body.url, proposedUrl);
    assert.ok(!(await dumpDatabase(t.db.url)).includes(proposedToken));
  } finally {
    await t.close();
    await Promise.all([model.close(), graph.close(), hook.close()]);
  }
});

Deno.test("webhook and intent URLs stored in plaintext before are sealed at start, and still called as registered", async () => {
  const t = await startTestApp({}, { workers: false });
  const hook = startReceiver();
  let second: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    const { owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const token = `legacy-${crypto.randomUUID()}`;
    const webhookUrl = `${hook.url("/legacy")}?token=${token}&page=3`;
    const intentUrl = `${hook.url("/legacy-intent")}?sig=${token}`;
    // As stored before the URL was sealed: inserted with SQL, in plaintext.
    await t.app.deps.db.$executeRaw`
      INSERT INTO "EventWebhook" (id, "agentId", event, url, method, headers, "signingSecret", "updatedAt")
      VALUES ('legacy-url', ${agent.id}, 'message.sent', ${webhookUrl}, 'POST', '{}',
              ${t.app.deps.secrets.seal("whsec_legacy")}, now())`;
    await t.app.deps.db.$executeRaw`
      INSERT INTO "Intent" (id, "agentId", name, tag, description, "triggerOnTypes", "requiredFields",
                            "webhookUrl", "webhookMethod", "updatedAt")
      VALUES ('legacy-intent', ${agent.id}, 'Legacy', 'legacy', 'd', ARRAY['TEXT']::"MessageType"[], '[]',
              ${intentUrl}, 'POST', now())`;
    assert.ok((await dumpDatabase(t.db.url)).includes(token), "the rows are in plaintext");

    const config = testConfig(t.db.url);
    second = await buildApp(config, { logger: silentLogger, bootstrap: false });
    assert.ok(!(await dumpDatabase(t.db.url)).includes(token), "sealed at start");
    assert.equal(
      (await owner.client.get(`/api/agents/${agent.id}/webhooks/legacy-url`)).body.url,
      webhookUrl,
    );
    assert.equal(
      (await owner.client.get(`/api/agents/${agent.id}/intents/legacy-intent`)).body.webhookUrl,
      intentUrl,
    );
    const client = new Client(second, owner.client.token, owner.client.workspaceId);
    const test = await client.post(`/api/agents/${agent.id}/webhooks/legacy-url/test`, {});
    assert.equal(test.status, 202);
    await hook.waitForCalls(1);
    assert.equal(hook.calls[0].search, `?token=${token}&page=3`);
  } finally {
    await second?.stop();
    await t.close();
    await hook.close();
  }
});
