/**
 * The webhook delivery log, test event and redelivery over GraphQL, against the real app, its
 * delivery workers and receivers on 127.0.0.1: exact fields, parity with the REST log, the same
 * role rules and error codes, redelivery of a FAILED delivery, and no statement per webhook.
 */
import assert from "node:assert/strict";
import { type Client, startTestApp, type TestApp } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { eventually, sha256HexOf, startReceiver } from "./_helpers/receiver.ts";
import { createPrisma } from "../src/db/client.ts";

/** The data of a GraphQL answer, failing the test on any error. */
// deno-lint-ignore no-explicit-any
async function gqlData(client: Client, query: string, variables?: Record<string, unknown>): Promise<any> {
  const res = await client.graphql(query, variables);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
  return res.body.data;
}

/** The `extensions` (code and status) of the one error of a GraphQL answer. */
async function gqlError(client: Client, query: string, variables?: Record<string, unknown>) {
  const res = await client.graphql(query, variables);
  assert.equal(res.body.errors?.length, 1, `expected one error, got ${JSON.stringify(res.body)}`);
  const { code, status } = res.body.errors[0].extensions;
  return { code, status };
}

/** Every field of a delivery: the REST DeliveryView's. */
const DELIVERY = `id eventId event status attemptCount idempotencyKey createdAt updatedAt
  attempts { number startedAt durationMs httpStatus error }`;

const CREATE_WEBHOOK = `mutation($agentId: ID!, $input: CreateWebhookInput!) {
  createWebhook(agentId: $agentId, input: $input) { webhook { id } }
}`;
const SEND_TEST =
  `mutation($agentId: ID!, $id: ID!) { sendWebhookTest(agentId: $agentId, id: $id) { ${DELIVERY} } }`;
const REDELIVER = `mutation($agentId: ID!, $webhookId: ID!, $id: ID!) {
  redeliverWebhookDelivery(agentId: $agentId, webhookId: $webhookId, id: $id) { ${DELIVERY} }
}`;
const DELIVERY_QUERY = `query($agentId: ID!, $webhookId: ID!, $id: ID!) {
  webhookDelivery(agentId: $agentId, webhookId: $webhookId, id: $id) { ${DELIVERY} }
}`;
const LOG = `query($agentId: ID!, $id: ID!, $first: Int, $after: String) {
  webhook(agentId: $agentId, id: $id) {
    deliveries(first: $first, after: $after) {
      pageInfo { hasNextPage endCursor }
      edges { node { ${DELIVERY} } }
    }
  }
}`;

/** An agent and a webhook of it (created over GraphQL) calling `url`. */
async function agentWithWebhook(t: TestApp, client: Client, url: string) {
  const agent = await t.seed.agent(client, { name: "Ana" });
  const { createWebhook } = await gqlData(client, CREATE_WEBHOOK, {
    agentId: agent.id,
    input: { event: "message.sent", url },
  });
  return { agentId: agent.id as string, webhookId: createWebhook.webhook.id as string };
}

/** The delivery, read over GraphQL, once it is no longer PENDING. */
function settled(client: Client, vars: { agentId: string; webhookId: string; id: string }) {
  return eventually(async () => {
    const { webhookDelivery } = await gqlData(client, DELIVERY_QUERY, vars);
    return webhookDelivery.status === "PENDING" ? undefined : webhookDelivery;
  });
}

Deno.test("sendWebhookTest is delivered, and the GraphQL log shows it exactly as REST does", async () => {
  // Whole seconds plus 123 ms, so the attempt's startedAt is known exactly.
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000 + 123));
  const t = await startTestApp({}, { clock });
  const receiver = startReceiver();
  try {
    const { owner } = await t.seed.workspace();
    const { agentId, webhookId } = await agentWithWebhook(t, owner.client, receiver.url("/events"));

    const { sendWebhookTest: sent } = await gqlData(owner.client, SEND_TEST, { agentId, id: webhookId });
    assert.deepEqual(
      { ...sent, id: "", eventId: "", createdAt: "", updatedAt: "" },
      {
        id: "",
        eventId: "",
        event: "webhook.test",
        status: "PENDING",
        attemptCount: 0,
        idempotencyKey: await sha256HexOf(sent.eventId),
        createdAt: "",
        updatedAt: "",
        attempts: [],
      },
    );

    const [call] = await receiver.waitForCalls(1);
    assert.equal(call.path, "/events");
    assert.equal(call.headers.get("webhook-id"), sent.eventId);
    assert.equal(call.headers.get("x-idempotency-key"), sent.idempotencyKey);
    assert.equal(JSON.parse(call.body).event, "webhook.test");

    const done = await settled(owner.client, { agentId, webhookId, id: sent.id });
    const { webhook } = await gqlData(owner.client, LOG, { agentId, id: webhookId });
    assert.equal(webhook.deliveries.pageInfo.hasNextPage, false);
    assert.equal(webhook.deliveries.edges.length, 1);
    const [{ node }] = webhook.deliveries.edges;
    assert.deepEqual(node, done);
    assert.deepEqual({ ...node, updatedAt: "", attempts: [] }, {
      ...sent,
      status: "SUCCEEDED",
      attemptCount: 1,
      updatedAt: "",
      attempts: [],
    });
    assert.equal(node.attempts.length, 1);
    const [attempt] = node.attempts;
    assert.deepEqual({ ...attempt, durationMs: 0 }, {
      number: 1,
      startedAt: clock.now().toISOString(),
      durationMs: 0,
      httpStatus: 200,
      error: null,
    });
    assert.ok(Number.isInteger(attempt.durationMs) && attempt.durationMs >= 0);

    // Parity: the REST log and the REST read of the same delivery, field for field.
    const base = `/api/agents/${agentId}/webhooks/${webhookId}`;
    const restLog = await owner.client.get(`${base}/deliveries`);
    assert.equal(restLog.status, 200);
    assert.deepEqual(restLog.body, { data: [node], nextCursor: null });
    assert.deepEqual((await owner.client.get(`${base}/deliveries/${sent.id}`)).body, node);

    // The same log nested under the agent.
    const nested = await gqlData(
      owner.client,
      `query($id: ID!) { agent(id: $id) { webhooks { edges { node { deliveries { edges { node { ${DELIVERY} } } } } } } } }`,
      { id: agentId },
    );
    assert.deepEqual(nested.agent.webhooks.edges[0].node.deliveries.edges, [{ node }]);
    assert.equal(receiver.calls.length, 1);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("roles, other workspaces, unknown ids and a delivery not FAILED answer as over REST", async () => {
  const t = await startTestApp();
  const receiver = startReceiver();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const { agentId, webhookId } = await agentWithWebhook(t, owner.client, receiver.url());
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await gqlData(owner.client, SEND_TEST, { agentId, id: webhookId })).sendWebhookTest.id);
    }
    for (const id of ids) await settled(owner.client, { agentId, webhookId, id });

    // Newest first, paged like the REST log; any member reads it.
    const viewer = await t.seed.member(workspaceId, "VIEWER");
    const agentRole = await t.seed.member(workspaceId, "AGENT");
    const page1 =
      (await gqlData(viewer.client, LOG, { agentId, id: webhookId, first: 2 })).webhook.deliveries;
    assert.deepEqual(page1.edges.map((e: { node: { id: string } }) => e.node.id), [ids[2], ids[1]]);
    assert.equal(page1.pageInfo.hasNextPage, true);
    const page2 = (await gqlData(viewer.client, LOG, {
      agentId,
      id: webhookId,
      first: 2,
      after: page1.pageInfo.endCursor,
    })).webhook.deliveries;
    assert.deepEqual(page2.edges.map((e: { node: { id: string } }) => e.node.id), [ids[0]]);
    assert.equal(page2.pageInfo.hasNextPage, false);
    const read = await gqlData(agentRole.client, DELIVERY_QUERY, { agentId, webhookId, id: ids[0] });
    assert.equal(read.webhookDelivery.status, "SUCCEEDED");

    const stranger = (await t.seed.workspace("Other")).owner.client;
    const base = `/api/agents/${agentId}/webhooks/${webhookId}`;
    const done = `${base}/deliveries/${ids[0]}`;
    const nope = `${base}/deliveries/nope`;
    const hook = { agentId, id: webhookId };
    const delivery = (id: string) => ({ agentId, webhookId, id });
    // Each case: who, the GraphQL operation, and the same call over REST ("METHOD path").
    const cases: Array<[string, Client, string, Record<string, unknown>, string]> = [
      ["VIEWER tests", viewer.client, SEND_TEST, hook, `POST ${base}/test`],
      ["AGENT tests", agentRole.client, SEND_TEST, hook, `POST ${base}/test`],
      ["AGENT redelivers", agentRole.client, REDELIVER, delivery(ids[0]), `POST ${done}/redeliver`],
      ["SUCCEEDED redelivered", owner.client, REDELIVER, delivery(ids[0]), `POST ${done}/redeliver`],
      ["unknown read", owner.client, DELIVERY_QUERY, delivery("nope"), `GET ${nope}`],
      ["unknown redelivered", owner.client, REDELIVER, delivery("nope"), `POST ${nope}/redeliver`],
      ["other workspace: log", stranger, LOG, hook, `GET ${base}/deliveries`],
      ["other workspace: read", stranger, DELIVERY_QUERY, delivery(ids[0]), `GET ${done}`],
      ["other workspace: test", stranger, SEND_TEST, hook, `POST ${base}/test`],
      ["other workspace: redeliver", stranger, REDELIVER, delivery(ids[0]), `POST ${done}/redeliver`],
    ];
    const expected = [
      ...Array.from({ length: 3 }, () => ({ code: "FORBIDDEN", status: 403 })),
      { code: "DELIVERY_NOT_FAILED", status: 409 },
      ...Array.from({ length: 6 }, () => ({ code: "NOT_FOUND", status: 404 })),
    ];
    for (const [i, [what, client, query, variables, rest]] of cases.entries()) {
      assert.deepEqual(await gqlError(client, query, variables), expected[i], `GraphQL: ${what}`);
      const [method, path] = rest.split(" ");
      const res = await client.request(method, path);
      assert.deepEqual({ code: res.body.code, status: res.status }, expected[i], `REST: ${what}`);
    }
    assert.equal(receiver.calls.length, 3, "the denied calls sent nothing");
    assert.equal(await t.app.deps.db.webhookDelivery.count(), 3);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("redeliverWebhookDelivery starts a FAILED delivery over, keeping its earlier attempts", async () => {
  const t = await startTestApp();
  let status = 500;
  const receiver = startReceiver(() => new Response("x", { status }));
  try {
    const { owner } = await t.seed.workspace();
    const { agentId, webhookId } = await agentWithWebhook(t, owner.client, receiver.url());
    const { sendWebhookTest: sent } = await gqlData(owner.client, SEND_TEST, { agentId, id: webhookId });
    // Three attempts at 0, 1 and 5 s (the retry schedule): real time, the queue's delays.
    const failed = await settled(owner.client, { agentId, webhookId, id: sent.id });
    assert.equal(failed.status, "FAILED");
    assert.equal(failed.attemptCount, 3);
    assert.deepEqual(
      failed.attempts.map((
        a: { number: number; httpStatus: number; error: null },
      ) => [a.number, a.httpStatus, a.error]),
      [[1, 500, null], [2, 500, null], [3, 500, null]],
    );

    status = 200;
    const { redeliverWebhookDelivery: again } = await gqlData(owner.client, REDELIVER, {
      agentId,
      webhookId,
      id: sent.id,
    });
    assert.deepEqual({ ...again, updatedAt: "" }, { ...failed, status: "PENDING", updatedAt: "" });

    const calls = await receiver.waitForCalls(4);
    assert.equal(calls[3].headers.get("x-idempotency-key"), sent.idempotencyKey);
    assert.equal(calls[3].body, calls[0].body);
    const redone = await settled(owner.client, { agentId, webhookId, id: sent.id });
    assert.equal(redone.status, "SUCCEEDED");
    assert.equal(redone.attemptCount, 4);
    assert.deepEqual(redone.attempts.slice(0, 3), failed.attempts);
    assert.deepEqual([redone.attempts[3].number, redone.attempts[3].httpStatus], [4, 200]);
    assert.deepEqual(
      (await owner.client.get(`/api/agents/${agentId}/webhooks/${webhookId}/deliveries/${sent.id}`)).body,
      redone,
    );
    assert.deepEqual(await gqlError(owner.client, REDELIVER, { agentId, webhookId, id: sent.id }), {
      code: "DELIVERY_NOT_FAILED",
      status: 409,
    });
    assert.equal(receiver.calls.length, 4);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("a page of the log with its attempts costs the same statements for 5 and for 50 deliveries, and reads one page", async () => {
  const database = await createTestDatabase();
  let statements: string[] = [];
  const db = createPrisma(database.url, { onQuery: (sql) => statements.push(sql) });
  const t = await startTestApp({}, { db, workers: false });
  try {
    const measured: number[] = [];
    for (const size of [5, 50]) {
      const { workspaceId, owner } = await t.seed.workspace(`Size ${size}`);
      const { agentId, webhookId } = await agentWithWebhook(t, owner.client, "http://127.0.0.1:9/hook");
      const ids = await seedDeliveries(db, workspaceId, agentId, webhookId, size);
      statements = [];
      const { webhook } = await gqlData(owner.client, LOG, { agentId, id: webhookId, first: 3 });
      measured.push(statements.length);
      assert.equal(webhook.deliveries.pageInfo.hasNextPage, true);
      assert.deepEqual(
        webhook.deliveries.edges.map((e: { node: { id: string } }) => e.node.id),
        ids.slice(-3).reverse(),
      );
      for (const { node } of webhook.deliveries.edges) {
        assert.deepEqual(node.attempts.map((a: { number: number }) => a.number), [1, 2]);
      }
      // One statement for the page, bounded by the database rather than paged in memory.
      const pages = statements.filter((sql) => sql.includes(`"WebhookDelivery"`));
      assert.equal(pages.length, 1, pages.join("\n"));
      assert.match(pages[0], /\bLIMIT\b/);
      assert.equal(statements.filter((sql) => sql.includes(`"DeliveryAttempt"`)).length, 1);
    }
    assert.equal(measured[0], measured[1], `statements: ${measured}\n${statements.join("\n")}`);
  } finally {
    await t.close();
    await db.$disconnect();
    await database.drop();
  }
});

/** `count` deliveries of the webhook, a second apart, each with 2 failed attempts, inserted directly. */
async function seedDeliveries(
  db: ReturnType<typeof createPrisma>,
  workspaceId: string,
  agentId: string,
  webhookId: string,
  count: number,
): Promise<string[]> {
  const ids = Array.from(
    { length: count },
    (_, i) => `${webhookId.slice(0, 12)}-${String(i).padStart(3, "0")}`,
  );
  await db.domainEvent.createMany({
    data: ids.map((id) => ({ id, workspaceId, agentId, type: "message.sent", payload: {} })),
  });
  await db.webhookDelivery.createMany({
    data: ids.map((id, i) => ({
      id,
      webhookId,
      eventId: id,
      status: "FAILED" as const,
      attemptCount: 2,
      idempotencyKey: "k",
      createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000),
    })),
  });
  await db.deliveryAttempt.createMany({
    data: ids.flatMap((deliveryId) =>
      [1, 2].map((number) => ({ deliveryId, number, startedAt: new Date(), durationMs: 1, httpStatus: 500 }))
    ),
  });
  return ids;
}
