/**
 * No secret in plaintext at rest (docs/behaviour.md "Secrets at rest"): webhook signing secrets (current and
 * previous) and header values are stored sealed by the secret box, which a dump of every table of
 * the database shows; none reaches the logs; deliveries still carry valid Standard Webhooks
 * signatures; rows stored in plaintext before the box are sealed at start; `admin rotate-secrets`
 * reseals under a new key so the old one can be dropped; a value under an unknown key fails loudly.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { dumpDatabase } from "./_helpers/db.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createPrisma } from "../src/db/client.ts";
import { resolveSecretBox } from "../src/db/bootstrap.ts";
import { sealStoredSecrets } from "../src/db/seal_secrets.ts";
import { createLogger, silentLogger } from "../src/shared/logger.ts";
import { SecretBox, SecretBoxError } from "../src/shared/secret_box.ts";
import {
  Client,
  RECEIVER_ALLOWLIST,
  startTestApp,
  TEST_SECRETS_KEY,
  type TestApp,
  testConfig,
} from "./_helpers/app.ts";
import { assertStatus } from "./_helpers/problem.ts";
import { actorOf, newApproval } from "./_helpers/approvals.ts";
import {
  type Call,
  eventually,
  type Receiver,
  startReceiver,
  verifyStandardWebhook,
} from "./_helpers/receiver.ts";

const JWT_SECRET = "test-secret-test-secret-test-secret-0123456789";

/** The key id as the format defines it, computed here independently: 8 hex of SHA-256 of the key. */
function kidOf(base64Key: string): string {
  return createHash("sha256").update(Buffer.from(base64Key, "base64")).digest("hex").slice(0, 8);
}

function sealedPattern(base64Key: string): RegExp {
  return new RegExp(`^sb1:${kidOf(base64Key)}:[A-Za-z0-9_-]+$`);
}

const newKey = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
const unique = (what: string) => `${what}-${crypto.randomUUID()}`;

/** The forms in which a secret could be found: as given, and a `whsec_` secret's bare key. */
function formsOf(secret: string): string[] {
  return secret.startsWith("whsec_") ? [secret, secret.slice(6)] : [secret];
}

function assertAbsent(where: string, text: string, secrets: string[]): void {
  for (const secret of secrets) {
    for (const form of formsOf(secret)) assert.ok(!text.includes(form), `${where} holds the secret ${form}`);
  }
}

async function storedWebhook(t: TestApp, id: string) {
  return await t.app.deps.db.eventWebhook.findUniqueOrThrow({
    where: { id },
    select: { signingSecret: true, previousSigningSecret: true, headers: true },
  });
}

/** Sends a webhook.test and returns the receiver's call of it once the delivery succeeded. */
async function deliverTest(client: Client, t: TestApp, receiver: Receiver, base: string): Promise<Call> {
  const before = receiver.calls.length;
  const sent = await client.post(`${base}/test`);
  assertStatus(sent, 202);
  const calls = await receiver.waitForCalls(before + 1);
  await eventually(async () => {
    const d = await t.app.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: sent.body.id } });
    return d.status === "SUCCEEDED" ? d : undefined;
  });
  return calls[before];
}

Deno.test("every kind of webhook secret is stored sealed: a dump of every table and the logs hold none", async () => {
  const logs: string[] = [];
  const t = await startTestApp({}, { logger: createLogger("debug", (line) => logs.push(line)) });
  const receiver = startReceiver();
  const secrets: string[] = [];
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const c = owner.client;
    const agent = await t.seed.agent(c);
    const base = `/api/agents/${agent.id}/webhooks`;

    // Created over REST, with header values.
    const auth = `Bearer ${unique("crm-token")}`;
    const apiKey = unique("api-key");
    const created = await c.post(base, {
      event: "message.sent",
      url: receiver.url(),
      headers: { Authorization: auth, "X-Api-Key": apiKey },
    });
    assertStatus(created, 201);
    const hookBase = `${base}/${created.body.id}`;
    const first: string = created.body.signingSecret;
    secrets.push(first, auth, apiKey);

    // Created over GraphQL, with a header value.
    const gqlValue = unique("gql-header");
    const gql = await c.graphql(
      `mutation($a: ID!, $input: CreateWebhookInput!) {
        createWebhook(agentId: $a, input: $input) { signingSecret webhook { id headers } }
      }`,
      {
        a: agent.id,
        input: { event: "message.received", url: receiver.url(), headers: { "X-Gql": gqlValue } },
      },
    );
    assert.equal(gql.body.errors, undefined, JSON.stringify(gql.body.errors));
    const gqlHook = gql.body.data.createWebhook;
    assert.deepEqual(gqlHook.webhook.headers, { "X-Gql": gqlValue });
    secrets.push(gqlHook.signingSecret, gqlValue);

    // Rotated: a current and a previous secret.
    const rotated = await c.post(`${hookBase}/rotate-secret`);
    assertStatus(rotated, 200);
    const second: string = rotated.body.signingSecret;
    secrets.push(second);

    // Header values replaced by a PATCH.
    const patched = unique("patched-value");
    const patch = await c.patch(hookBase, { headers: { Authorization: auth, "X-Patched": patched } });
    assertStatus(patch, 200);
    secrets.push(patched);

    // The roles with webhook:secrets see the values, opened; the stored row holds them sealed.
    const seen = await c.get(hookBase);
    assert.deepEqual(seen.body.headers, { Authorization: auth, "X-Patched": patched });
    const gqlSeen = await c.graphql(
      `query($a: ID!, $id: ID!) { webhook(agentId: $a, id: $id) { headers } }`,
      {
        a: agent.id,
        id: created.body.id,
      },
    );
    assert.deepEqual(gqlSeen.body.data.webhook.headers, { Authorization: auth, "X-Patched": patched });
    const viewer = await t.seed.member(workspaceId, "VIEWER");
    assert.deepEqual((await viewer.client.get(hookBase)).body.headers, {
      Authorization: "********",
      "X-Patched": "********",
    });

    // Channel secrets: created over REST and GraphQL, one replaced by a PATCH; never answered.
    const channelSecrets = [unique("access-token"), unique("app-secret"), unique("verify-token")];
    const channel = await c.post(`/api/agents/${agent.id}/channels`, {
      type: "WHATSAPP",
      label: "Sales",
      config: {
        phoneNumberId: "5551001",
        accessToken: channelSecrets[0],
        appSecret: channelSecrets[1],
        verifyToken: channelSecrets[2],
      },
    });
    assertStatus(channel, 201);
    const newToken = unique("patched-access-token");
    const channelPatch = await c.patch(`/api/agents/${agent.id}/channels/${channel.body.id}`, {
      config: { accessToken: newToken },
    });
    assertStatus(channelPatch, 200);
    const gqlChannelSecret = unique("gql-app-secret");
    const gqlChannel = await c.graphql(
      `mutation($a: ID!, $input: CreateChannelInput!) { createChannel(agentId: $a, input: $input) { id inboundUrl } }`,
      {
        a: agent.id,
        input: {
          type: "WHATSAPP",
          label: "Gql",
          config: {
            phoneNumberId: "5551002",
            accessToken: "gql-token-1",
            appSecret: gqlChannelSecret,
            verifyToken: "v-1",
          },
        },
      },
    );
    assert.equal(gqlChannel.body.errors, undefined, JSON.stringify(gqlChannel.body.errors));
    secrets.push(...channelSecrets, newToken, gqlChannelSecret, "gql-token-1");
    for (const answer of [channel, channelPatch, await c.get(`/api/agents/${agent.id}/channels`)]) {
      assertAbsent("a channel answer", JSON.stringify(answer.body), secrets);
    }

    const sealed = sealedPattern(TEST_SECRETS_KEY);
    for (const ch of await t.app.deps.db.channel.findMany({ where: { agentId: agent.id } })) {
      assert.match(ch.credentials!, sealed);
    }
    const row = await storedWebhook(t, created.body.id);
    assert.match(row.signingSecret, sealed);
    assert.match(row.previousSigningSecret!, sealed);
    assert.deepEqual(Object.keys(row.headers as object).sort(), ["Authorization", "X-Patched"]);
    for (const v of Object.values(row.headers as Record<string, string>)) assert.match(v, sealed);
    // A fresh IV each time: the same value sealed twice is stored differently.
    const again = await c.patch(hookBase, { headers: { Authorization: auth, "X-Patched": patched } });
    assertStatus(again, 200);
    const row2 = await storedWebhook(t, created.body.id);
    assert.notEqual(
      (row2.headers as Record<string, string>).Authorization,
      (row.headers as Record<string, string>).Authorization,
    );
    const gqlRow = await storedWebhook(t, gqlHook.webhook.id);
    assert.match(gqlRow.signingSecret, sealed);
    assert.match((gqlRow.headers as Record<string, string>)["X-Gql"], sealed);

    // Deliveries open them: both signatures verify and the header values arrive as registered.
    const call = await deliverTest(c, t, receiver, hookBase);
    assert.ok(await verifyStandardWebhook(second, call.headers, call.body), "signed by the current secret");
    assert.ok(await verifyStandardWebhook(first, call.headers, call.body), "signed by the previous secret");
    assert.equal(call.headers.get("authorization"), auth);
    assert.equal(call.headers.get("x-patched"), patched);
    assert.equal(call.headers.get("x-api-key"), null);

    assertAbsent("the database", await dumpDatabase(t.db.url), secrets);
    assertAbsent("the logs", logs.join("\n"), secrets);
  } finally {
    await receiver.close();
    await t.close();
  }
  // Everything the app logged at any level, from start to stop (its stop logs at debug).
  assert.ok(logs.length > 0, "the logger was captured");
  assertAbsent("the logs", logs.join("\n"), secrets);
});

Deno.test("rows stored in plaintext are sealed at start, and still sign with the original secret", async () => {
  const t = await startTestApp({}, { workers: false });
  const receiver = startReceiver();
  let second: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    const { owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64")}`;
    const previous = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64")}`;
    const headerValue = unique("legacy-header");
    // As the schema stored them before the secret box: inserted with SQL, in plaintext.
    await t.app.deps.db.$executeRaw`
      INSERT INTO "EventWebhook" (id, "agentId", event, url, method, headers, "signingSecret",
                                  "previousSigningSecret", "previousSecretExpiresAt", "updatedAt")
      VALUES ('legacy-1', ${agent.id}, 'message.sent', ${receiver.url()}, 'POST',
              ${JSON.stringify({ "X-Legacy": headerValue })}::jsonb, ${secret}, ${previous},
              now() + interval '1 hour', now()),
             ('legacy-2', ${agent.id}, 'message.sent', ${receiver.url()}, 'POST', '{}', ${secret}, NULL,
              NULL, now())`;
    const channelToken = unique("legacy-channel-token");
    const channelCredentials = JSON.stringify({
      accessToken: channelToken,
      appSecret: "s",
      verifyToken: "v",
    });
    await t.app.deps.db.$executeRaw`
      INSERT INTO "Channel" (id, "workspaceId", "agentId", type, label, "phoneNumberId", credentials)
      SELECT 'legacy-channel', "workspaceId", id, 'WHATSAPP', 'Legacy', '5550001',
              ${channelCredentials} FROM "Agent" WHERE id = ${agent.id}`;
    const before = await dumpDatabase(t.db.url);
    assert.ok(before.includes(secret) && before.includes(headerValue), "the rows are in plaintext");
    assert.ok(before.includes(channelToken), "the channel's credentials are in plaintext");

    // A new start on the same database runs the data migration.
    const config = testConfig(t.db.url);
    second = await buildApp(config, { logger: silentLogger, bootstrap: false });
    const sealed = sealedPattern(TEST_SECRETS_KEY);
    const row = await storedWebhook(t, "legacy-1");
    assert.match(row.signingSecret, sealed);
    assert.match(row.previousSigningSecret!, sealed);
    assert.match((row.headers as Record<string, string>)["X-Legacy"], sealed);
    assert.match((await storedWebhook(t, "legacy-2")).signingSecret, sealed);
    const channel = await t.app.deps.db.channel.findUniqueOrThrow({ where: { id: "legacy-channel" } });
    assert.match(channel.credentials!, sealed);
    assert.equal(t.app.deps.secrets.open(channel.credentials!), channelCredentials);
    assertAbsent("the database", await dumpDatabase(t.db.url), [secret, previous, headerValue, channelToken]);

    // The owner still sees the header value; a delivery is signed by both original secrets.
    const hookBase = `/api/agents/${agent.id}/webhooks/legacy-1`;
    const client = owner.client;
    assert.deepEqual((await client.get(hookBase)).body.headers, { "X-Legacy": headerValue });
    const sent = await new Client(second, client.token, client.workspaceId).post(`${hookBase}/test`);
    assertStatus(sent, 202);
    const [call] = await receiver.waitForCalls(1);
    assert.ok(await verifyStandardWebhook(secret, call.headers, call.body), "signed by the original secret");
    assert.ok(await verifyStandardWebhook(previous, call.headers, call.body), "and by the previous one");
    assert.equal(call.headers.get("x-legacy"), headerValue);

    // Idempotent: nothing left to seal.
    const none = { webhooks: 0, intents: 0, channels: 0, approvals: 0 };
    assert.deepEqual(await sealStoredSecrets(t.app.deps.db, t.app.deps.secrets, "plaintext"), none);
    assert.deepEqual(await sealStoredSecrets(t.app.deps.db, t.app.deps.secrets, "rotate"), none);
  } finally {
    await second?.stop();
    await receiver.close();
    await t.close();
  }
});

Deno.test("two processes sealing at once seal each row once, and every value opens to the original", async () => {
  const t = await startTestApp({}, { workers: false });
  const dbs = [createPrisma(t.db.url), createPrisma(t.db.url)];
  try {
    const { owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const N = 250;
    await t.app.deps.db.$executeRaw`
      INSERT INTO "EventWebhook" (id, "agentId", event, url, method, headers, "signingSecret", "updatedAt")
      SELECT 'plain-' || i, ${agent.id}, 'message.sent', 'https://example.com/hook', 'POST',
             jsonb_build_object('X-N', 'value-' || i), 'whsec_plain-' || i, now()
        FROM generate_series(1, ${N}::int) AS i`;
    const box = t.app.deps.secrets;
    const counts = await Promise.all(dbs.map((db) => sealStoredSecrets(db, box, "plaintext")));
    assert.equal(
      counts[0].webhooks + counts[1].webhooks,
      N,
      `each row sealed once: ${JSON.stringify(counts)}`,
    );
    const rows = await t.app.deps.db.eventWebhook.findMany({
      where: { id: { startsWith: "plain-" } },
      select: { id: true, signingSecret: true, headers: true },
    });
    assert.equal(rows.length, N);
    for (const r of rows) {
      const i = r.id.slice("plain-".length);
      assert.equal(box.open(r.signingSecret), `whsec_plain-${i}`);
      assert.deepEqual(box.openValues(r.headers), { "X-N": `value-${i}` });
    }
  } finally {
    await Promise.all(dbs.map((db) => db.$disconnect()));
    await t.close();
  }
});

/** `deno task admin rotate-secrets` as an operator runs it: its own process, configured by env. */
async function rotateSecretsCommand(env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "src/admin.ts", "rotate-secrets"],
    // Empty is unset: nothing of the test's own environment stands in for what `env` leaves out.
    env: { JWT_SECRET, SECRETS_KEY_PREVIOUS: "", DATA_DIR: "", LOG_LEVEL: "error", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("admin rotate-secrets reseals everything under the new key; the old key can then be dropped", async () => {
  const oldKey = TEST_SECRETS_KEY;
  const key = newKey();
  const t = await startTestApp({}, { workers: false });
  const receiver = startReceiver();
  let later: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    const { owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const base = `/api/agents/${agent.id}/webhooks`;
    const headerValue = unique("rotated-header");
    const created = await owner.client.post(base, {
      event: "message.sent",
      url: receiver.url(),
      headers: { "X-Key": headerValue },
    });
    assertStatus(created, 201);
    const hookBase = `${base}/${created.body.id}`;
    const rotated = await owner.client.post(`${hookBase}/rotate-secret`);
    assertStatus(rotated, 200);
    const other = await owner.client.post(base, { event: "message.received", url: receiver.url() });
    assertStatus(other, 201);
    const channelToken = unique("rotated-channel-token");
    const channel = await owner.client.post(`/api/agents/${agent.id}/channels`, {
      type: "WHATSAPP",
      label: "Sales",
      config: {
        phoneNumberId: "5550002",
        accessToken: channelToken,
        appSecret: "app",
        verifyToken: "verify",
      },
    });
    assertStatus(channel, 201);
    // A proposed header change keeps the old and new values sealed in its snapshots.
    const approvalHeader = unique("approval-header");
    const approval = await newApproval(
      await actorOf(t.app, owner.token, owner.client.workspaceId!),
      agent.id,
      {
        tool: "update_webhook",
        target: { webhookId: created.body.id },
        change: { headers: { "X-Key": approvalHeader } },
      },
    );

    const env = { DATABASE_URL: t.db.url, SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: oldKey };
    const run = await rotateSecretsCommand(env);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      kid: kidOf(key),
      resealed: { webhooks: 2, intents: 0, channels: 1, approvals: 1 },
    });
    const dump = await dumpDatabase(t.db.url);
    assert.ok(!dump.includes(`sb1:${kidOf(oldKey)}:`), "no value left under the old key");
    const sealed = sealedPattern(key);
    const row = await storedWebhook(t, created.body.id);
    assert.match(row.signingSecret, sealed);
    assert.match(row.previousSigningSecret!, sealed);
    assert.match((row.headers as Record<string, string>)["X-Key"], sealed);
    assert.match((await storedWebhook(t, other.body.id)).signingSecret, sealed);
    const channelRow = await t.app.deps.db.channel.findUniqueOrThrow({ where: { id: channel.body.id } });
    assert.match(channelRow.credentials!, sealed);
    const approvalRow = await t.app.deps.db.pendingApproval.findUniqueOrThrow({ where: { id: approval } });
    for (const snapshot of [approvalRow.before, approvalRow.after]) {
      assert.match((snapshot as { headers: Record<string, string> }).headers["X-Key"], sealed);
    }
    assertAbsent("the database", dump, [
      created.body.signingSecret,
      rotated.body.signingSecret,
      headerValue,
      channelToken,
      approvalHeader,
    ]);

    // Again: nothing to do.
    const again = await rotateSecretsCommand(env);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout).resealed, {
      webhooks: 0,
      intents: 0,
      channels: 0,
      approvals: 0,
    });

    // The old key dropped: an app with the new key alone opens everything.
    later = await buildApp(
      loadConfig({
        DATABASE_URL: t.db.url,
        JWT_SECRET,
        SECRETS_KEY: key,
        OUTBOUND_ALLOWLIST: RECEIVER_ALLOWLIST,
        APP_ENV: "test",
      }),
      { logger: silentLogger, bootstrap: false },
    );
    const client = new Client(
      later,
      owner.client.token,
      owner.client.workspaceId,
    );
    assert.deepEqual((await client.get(hookBase)).body.headers, { "X-Key": headerValue });
    const sent = await client.post(`${hookBase}/test`);
    assertStatus(sent, 202);
    const [call] = await receiver.waitForCalls(1);
    assert.ok(await verifyStandardWebhook(rotated.body.signingSecret, call.headers, call.body));
    assert.ok(await verifyStandardWebhook(created.body.signingSecret, call.headers, call.body));
    assert.equal(call.headers.get("x-key"), headerValue);
  } finally {
    await later?.stop();
    await receiver.close();
    await t.close();
  }
});

Deno.test("a value under an unknown key id fails clearly, never as a wrong value", async () => {
  const logs: string[] = [];
  const t = await startTestApp({}, { workers: false });
  const receiver = startReceiver();
  let stranger: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    const { owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const created = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.sent",
      url: receiver.url(),
      headers: { "X-Key": "v" },
    });
    assertStatus(created, 201);
    const stored = (await storedWebhook(t, created.body.id)).signingSecret;

    // The box itself: a clear error naming the key id, for any key it does not hold.
    const otherBox = new SecretBox(Buffer.from(newKey(), "base64"));
    assert.throws(
      () => otherBox.open(stored),
      (e) => e instanceof SecretBoxError && e.message.includes(`key id ${kidOf(TEST_SECRETS_KEY)}`),
    );

    // The rotate command with the wrong keys stops with that error and changes nothing.
    const run = await rotateSecretsCommand({ DATABASE_URL: t.db.url, SECRETS_KEY: newKey() });
    assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stderr, new RegExp(`SecretBoxError: .*key id ${kidOf(TEST_SECRETS_KEY)}`));
    assert.equal((await storedWebhook(t, created.body.id)).signingSecret, stored);

    // A server with another key: the delivery fails with the reason and the receiver gets no call.
    stranger = await buildApp(
      loadConfig({
        DATABASE_URL: t.db.url,
        JWT_SECRET,
        SECRETS_KEY: newKey(),
        OUTBOUND_ALLOWLIST: RECEIVER_ALLOWLIST,
        APP_ENV: "test",
      }),
      { logger: createLogger("info", (line) => logs.push(line)), bootstrap: false },
    );
    const client = new Client(
      stranger,
      owner.client.token,
      owner.client.workspaceId,
    );
    const sent = await client.post(`/api/agents/${agent.id}/webhooks/${created.body.id}/test`);
    assertStatus(sent, 202);
    const attempt = await eventually(async () =>
      (await t.app.deps.db.deliveryAttempt.findFirst({ where: { deliveryId: sent.body.id, number: 1 } })) ??
        undefined
    );
    assert.equal(attempt.httpStatus, null);
    assert.match(attempt.error ?? "", new RegExp(`^secrets: .*key id ${kidOf(TEST_SECRETS_KEY)}`));
    assert.equal(receiver.calls.length, 0);
    assert.ok(logs.some((l) => l.includes("webhook secrets cannot be opened")), logs.join("\n"));
  } finally {
    await stranger?.stop();
    await receiver.close();
    await t.close();
  }
});

Deno.test("the secret box: format, fresh IVs, previous keys, tampering, reseal", () => {
  const key = Buffer.from(newKey(), "base64");
  const oldKey = Buffer.from(newKey(), "base64");
  const old = new SecretBox(oldKey);
  const box = new SecretBox(key, [oldKey]);
  const a = box.seal("hello");
  assert.match(a, sealedPattern(key.toString("base64")));
  // 12-byte IV + 5 bytes + 16-byte tag.
  assert.equal(Buffer.from(a.split(":")[2], "base64url").length, 12 + 5 + 16);
  assert.notEqual(box.seal("hello"), a);
  assert.equal(box.open(a), "hello");
  assert.equal(box.open(box.seal("")), "");
  assert.equal(box.open(box.seal("þ ÿ \t")), "þ ÿ \t");

  const underOld = old.seal("kept");
  assert.equal(box.open(underOld), "kept");
  assert.throws(() => old.open(a), SecretBoxError);

  const raw = Buffer.from(a.split(":")[2], "base64url");
  raw[14] ^= 1;
  assert.throws(() => box.open(`sb1:${box.kid}:${raw.toString("base64url")}`), /does not authenticate/);
  assert.throws(() => box.open(`sb1:${box.kid}:AAAA`), /truncated/);
  assert.throws(() => box.open("whsec_plain"), /not sealed/);

  assert.equal(box.reseal(a), a);
  const resealed = box.reseal(underOld);
  assert.ok(box.isCurrent(resealed) && !box.isCurrent(underOld));
  assert.equal(box.open(resealed), "kept");
  assert.equal(box.open(box.reseal("plain")), "plain");
});

Deno.test("the secret box remembers opened values: the same answers, tampering still refused, bounded", () => {
  const box = new SecretBox(Buffer.from(newKey(), "base64"));
  const a = box.seal("remembered");
  assert.equal(box.open(a), "remembered");
  assert.equal(box.open(a), "remembered");
  // A value altered after its genuine twin was opened (and remembered) is still refused.
  const raw = Buffer.from(a.split(":")[2], "base64url");
  raw[raw.length - 1] ^= 1;
  assert.throws(() => box.open(`sb1:${box.kid}:${raw.toString("base64url")}`), /does not authenticate/);
  // More values than the box remembers: each still opens to its own plaintext.
  const many = Array.from({ length: 10_050 }, (_, i) => [box.seal(`v${i}`), `v${i}`] as const);
  for (const [sealed, plain] of many) assert.equal(box.open(sealed), plain);
  for (const [sealed, plain] of many.slice(0, 60)) assert.equal(box.open(sealed), plain);
  assert.equal(box.open(a), "remembered");
});

Deno.test("embedded mode keeps a generated key in DATA_DIR/secrets-key (0600) and reuses it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const config = loadConfig({ DATA_DIR: dir });
    const first = await resolveSecretBox(config);
    const info = await Deno.stat(`${dir}/secrets-key`);
    assert.equal(info.mode! & 0o777, 0o600);
    const kept = await Deno.readTextFile(`${dir}/secrets-key`);
    assert.equal(Buffer.from(kept, "base64").length, 32);
    assert.equal(first.kid, kidOf(kept));
    const second = await resolveSecretBox(config);
    assert.equal(second.open(first.seal("x")), "x");
    // SECRETS_KEY, when set, wins over the file.
    const set = await resolveSecretBox(loadConfig({ DATA_DIR: dir, SECRETS_KEY: TEST_SECRETS_KEY }));
    assert.equal(set.kid, kidOf(TEST_SECRETS_KEY));
    // A damaged key file stops the start instead of being replaced (its values would be lost).
    await Deno.writeTextFile(`${dir}/secrets-key`, "garbage");
    await assert.rejects(() => resolveSecretBox(config), /secrets-key does not hold a 32-byte base64 key/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
