/**
 * Zero-downtime rotation of a webhook's signing secret: after a rotation every delivery carries two
 * Standard Webhooks signatures (`v1,<by new> v1,<by old>`) until the old secret's window of
 * PREVIOUS_SECRET_TTL_MS ends, then one; a second rotation within the window keeps only the
 * then-current secret as the old one; no read of a webhook (REST or GraphQL) shows either secret.
 * Against the real app, its delivery workers and a receiver on 127.0.0.1, with a manual clock.
 */
import assert from "node:assert/strict";
import { type Client, startTestApp, type TestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { WEBHOOK_VIEW_KEYS } from "./_helpers/webhooks.ts";
import { assertStatus } from "./_helpers/problem.ts";
import {
  type Call,
  eventually,
  type Receiver,
  signatureEntries,
  startReceiver,
  verifySignatureEntry,
  verifyStandardWebhook,
} from "./_helpers/receiver.ts";
import { PREVIOUS_SECRET_TTL_MS } from "../src/webhooks/service.ts";

const HOUR_MS = 60 * 60 * 1000;
const ENTRY = /^v1,[A-Za-z0-9+/]+=*$/;

/** The fields of a REST webhook view (no secret of any kind). */
const GQL_FIELDS = "id agentId event url method headers lastError createdAt updatedAt";

/** The data of a GraphQL answer, failing the test on any error. */
// deno-lint-ignore no-explicit-any
async function gqlData(client: Client, query: string, variables?: Record<string, unknown>): Promise<any> {
  const res = await client.graphql(query, variables);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
  return res.body.data;
}

const ROTATE_GQL = `mutation($a: ID!, $id: ID!) {
  rotateWebhookSecret(agentId: $a, id: $id) { signingSecret webhook { ${GQL_FIELDS} } }
}`;

interface Hook {
  agentId: string;
  webhookId: string;
  base: string;
  secret: string;
}

/** A clock on a whole second, so `webhook-timestamp` is exact. */
function wholeSecondClock(): ManualClock {
  return new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
}

/** An agent with one message.sent webhook calling the receiver, created over REST. */
async function hookFor(t: TestApp, client: Client, receiver: Receiver): Promise<Hook> {
  const agent = await t.seed.agent(client, { name: "Ana" });
  const created = await client.post(`/api/agents/${agent.id}/webhooks`, {
    event: "message.sent",
    url: receiver.url(),
  });
  assertStatus(created, 201);
  return {
    agentId: agent.id,
    webhookId: created.body.id,
    base: `/api/agents/${agent.id}/webhooks/${created.body.id}`,
    secret: created.body.signingSecret,
  };
}

/** POST .../rotate-secret: the new secret, shown in the answer. */
async function rotateRest(client: Client, hook: Hook): Promise<string> {
  const res = await client.post(`${hook.base}/rotate-secret`);
  assertStatus(res, 200);
  assert.deepEqual(Object.keys(res.body).sort(), [...WEBHOOK_VIEW_KEYS, "signingSecret"].sort());
  assert.match(res.body.signingSecret, /^whsec_/);
  return res.body.signingSecret;
}

/** Sends a webhook.test and returns the receiver's call of it, once the delivery is recorded. */
async function deliverTest(t: TestApp, client: Client, receiver: Receiver, hook: Hook): Promise<Call> {
  const before = receiver.calls.length;
  const sent = await client.post(`${hook.base}/test`);
  assertStatus(sent, 202);
  const calls = await receiver.waitForCalls(before + 1);
  const call = calls[before];
  assert.equal(call.headers.get("webhook-id"), sent.body.eventId);
  await eventually(async () => {
    const d = await t.app.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: sent.body.id } });
    return d.status === "SUCCEEDED" ? d : undefined;
  });
  return call;
}

/**
 * The call's `webhook-signature` holds exactly one entry per secret of `expected`, in that order,
 * each verifying under its own secret and under none of the others (`others` included).
 */
async function assertSignedBy(call: Call, expected: string[], others: string[] = []): Promise<void> {
  const header = call.headers.get("webhook-signature") ?? "";
  const entries = signatureEntries(call.headers);
  assert.equal(entries.length, expected.length, `webhook-signature: ${header}`);
  assert.equal(header, entries.join(" "), "entries separated by exactly one space");
  for (const [i, entry] of entries.entries()) {
    assert.match(entry, ENTRY);
    for (const secret of [...expected, ...others]) {
      assert.equal(
        await verifySignatureEntry(secret, call.headers, call.body, entry),
        secret === expected[i],
        `entry ${i} ${secret === expected[i] ? "verifies" : "does not verify"} under secret ${secret}`,
      );
    }
  }
  // A receiver holding any one of the expected secrets accepts the call; one holding another does not.
  for (const secret of expected) assert.ok(await verifyStandardWebhook(secret, call.headers, call.body));
  for (const secret of others) {
    assert.equal(await verifyStandardWebhook(secret, call.headers, call.body), false);
  }
}

Deno.test("a webhook never rotated sends exactly one signature, by its secret", async () => {
  const clock = wholeSecondClock();
  const t = await startTestApp({}, { clock });
  const receiver = startReceiver();
  try {
    const { owner } = await t.seed.workspace();
    const hook = await hookFor(t, owner.client, receiver);
    const row = await t.app.deps.db.eventWebhook.findUniqueOrThrow({ where: { id: hook.webhookId } });
    assert.equal(row.previousSigningSecret, null);
    assert.equal(row.previousSecretExpiresAt, null);

    const call = await deliverTest(t, owner.client, receiver, hook);
    assert.equal(call.headers.get("webhook-timestamp"), String(clock.now().getTime() / 1000));
    await assertSignedBy(call, [hook.secret]);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("after a rotation a delivery is signed by the new secret, then the old one, until the window ends", async () => {
  assert.equal(PREVIOUS_SECRET_TTL_MS, 24 * HOUR_MS);
  const clock = wholeSecondClock();
  const t = await startTestApp({}, { clock });
  const receiver = startReceiver();
  try {
    const { owner } = await t.seed.workspace();
    const hook = await hookFor(t, owner.client, receiver);
    const oldSecret = hook.secret;
    const rotatedAt = clock.now();
    const newSecret = await rotateRest(owner.client, hook);
    assert.notEqual(newSecret, oldSecret);
    const row = await t.app.deps.db.eventWebhook.findUniqueOrThrow({ where: { id: hook.webhookId } });
    assert.equal(t.app.deps.secrets.open(row.signingSecret), newSecret);
    assert.equal(t.app.deps.secrets.open(row.previousSigningSecret!), oldSecret);
    assert.deepEqual(row.previousSecretExpiresAt, new Date(rotatedAt.getTime() + 24 * HOUR_MS));

    // Right after the rotation: exactly two entries, the new secret's first.
    const call = await deliverTest(t, owner.client, receiver, hook);
    assert.equal(call.headers.get("webhook-timestamp"), String(clock.now().getTime() / 1000));
    await assertSignedBy(call, [newSecret, oldSecret]);

    // One second before the window ends: still both.
    clock.set(new Date(rotatedAt.getTime() + 24 * HOUR_MS - 1000));
    await assertSignedBy(await deliverTest(t, owner.client, receiver, hook), [newSecret, oldSecret]);

    // At the end of the window and after it: only the new secret's.
    clock.set(new Date(rotatedAt.getTime() + 24 * HOUR_MS));
    const atEnd = await deliverTest(t, owner.client, receiver, hook);
    await assertSignedBy(atEnd, [newSecret], [oldSecret]);
    clock.advance(HOUR_MS);
    const later = await deliverTest(t, owner.client, receiver, hook);
    assert.equal(later.headers.get("webhook-timestamp"), String(clock.now().getTime() / 1000));
    await assertSignedBy(later, [newSecret], [oldSecret]);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("rotating again within the window keeps only the then-current secret as the old one, for a new window", async () => {
  const clock = wholeSecondClock();
  const t = await startTestApp({}, { clock });
  const receiver = startReceiver();
  try {
    const { owner } = await t.seed.workspace();
    const hook = await hookFor(t, owner.client, receiver);
    const first = hook.secret;
    const second = await rotateRest(owner.client, hook);
    clock.advance(HOUR_MS);
    const secondRotationAt = clock.now();
    // The second rotation over GraphQL: the same service, the same effect.
    const { rotateWebhookSecret } = await gqlData(owner.client, ROTATE_GQL, {
      a: hook.agentId,
      id: hook.webhookId,
    });
    const third: string = rotateWebhookSecret.signingSecret;
    assert.match(third, /^whsec_/);
    assert.equal(new Set([first, second, third]).size, 3);
    const row = await t.app.deps.db.eventWebhook.findUniqueOrThrow({ where: { id: hook.webhookId } });
    assert.equal(t.app.deps.secrets.open(row.signingSecret), third);
    assert.equal(t.app.deps.secrets.open(row.previousSigningSecret!), second);
    assert.deepEqual(row.previousSecretExpiresAt, new Date(secondRotationAt.getTime() + 24 * HOUR_MS));

    await assertSignedBy(await deliverTest(t, owner.client, receiver, hook), [third, second], [first]);
    // 24 h after the first rotation the second one's window is still open.
    clock.advance(23 * HOUR_MS);
    await assertSignedBy(await deliverTest(t, owner.client, receiver, hook), [third, second], [first]);
    clock.set(new Date(secondRotationAt.getTime() + 24 * HOUR_MS));
    await assertSignedBy(await deliverTest(t, owner.client, receiver, hook), [third], [first, second]);
  } finally {
    await receiver.close();
    await t.close();
  }
});

Deno.test("no read of a rotated webhook shows the current or the previous secret, REST or GraphQL", async () => {
  const clock = wholeSecondClock();
  const t = await startTestApp({}, { clock });
  const receiver = startReceiver();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const viewer = await t.seed.member(workspaceId, "VIEWER");
    const hook = await hookFor(t, owner.client, receiver);
    const first = hook.secret;
    const second = await rotateRest(owner.client, hook);
    const rotated = await owner.client.post(`${hook.base}/rotate-secret`);
    assertStatus(rotated, 200);
    const third: string = rotated.body.signingSecret;
    // The rotation's answer shows its new secret once, and never the one it replaced.
    assert.ok(!JSON.stringify(rotated.body).includes(second));
    assert.ok(!JSON.stringify(rotated.body).includes(first));
    const row = await t.app.deps.db.eventWebhook.findUniqueOrThrow({ where: { id: hook.webhookId } });
    assert.equal(t.app.deps.secrets.open(row.signingSecret), third);
    assert.equal(t.app.deps.secrets.open(row.previousSigningSecret!), second);
    const secrets = [first, second, third];
    const assertNoSecret = (what: string, body: unknown) => {
      const text = JSON.stringify(body);
      for (const s of secrets) assert.ok(!text.includes(s), `${what} shows a secret: ${text}`);
      assert.ok(!/secret/i.test(text), `${what} names a secret: ${text}`);
    };

    for (const client of [owner.client, viewer.client]) {
      const one = await client.get(hook.base);
      assertStatus(one, 200);
      assert.deepEqual(Object.keys(one.body).sort(), WEBHOOK_VIEW_KEYS);
      assertNoSecret("REST GET", one.body);
      const list = await client.get(`/api/agents/${hook.agentId}/webhooks`);
      assertStatus(list, 200);
      assert.equal(list.body.data.length, 1);
      assert.deepEqual(Object.keys(list.body.data[0]).sort(), WEBHOOK_VIEW_KEYS);
      assertNoSecret("REST list", list.body);

      const gql = await gqlData(
        client,
        `query($a: ID!, $id: ID!) {
          webhook(agentId: $a, id: $id) { ${GQL_FIELDS} }
          webhooks(agentId: $a) { edges { node { ${GQL_FIELDS} } } }
          agent(id: $a) { webhooks { edges { node { ${GQL_FIELDS} } } } }
        }`,
        { a: hook.agentId, id: hook.webhookId },
      );
      assert.equal(gql.webhook.id, hook.webhookId);
      assert.equal(gql.webhooks.edges.length, 1);
      assert.equal(gql.agent.webhooks.edges.length, 1);
      assertNoSecret("GraphQL reads", gql);
    }
    const patched = await owner.client.patch(hook.base, { url: receiver.url("/other") });
    assertStatus(patched, 200);
    assertNoSecret("REST PATCH", patched.body);

    // The GraphQL rotation answers with its new secret only.
    const { rotateWebhookSecret } = await gqlData(owner.client, ROTATE_GQL, {
      a: hook.agentId,
      id: hook.webhookId,
    });
    const fourth: string = rotateWebhookSecret.signingSecret;
    assertNoSecret("GraphQL rotation", rotateWebhookSecret.webhook);
    assert.ok(!JSON.stringify(rotateWebhookSecret).includes(third));

    // No field of the Webhook type can select either secret.
    const { __type } = await gqlData(owner.client, `{ __type(name: "Webhook") { fields { name } } }`);
    const names: string[] = __type.fields.map((f: { name: string }) => f.name);
    assert.deepEqual(names.filter((n) => /secret/i.test(n)), []);
    assert.ok(!secrets.includes(fourth));
  } finally {
    await receiver.close();
    await t.close();
  }
});
