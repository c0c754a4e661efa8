/**
 * The outbound client (src/shared/outbound.ts): one DNS lookup per call, every address vetted,
 * the connection made to the vetted address; refusals that never name a resolved address; DNS
 * failures are failed attempts; names of this machine; the allowlist; URL credentials refused at
 * registration and masked in every read for roles without webhook:secrets (REST and GraphQL).
 * DNS is an injected resolver; every connection goes to loopback.
 */
import assert from "node:assert/strict";
import { OutboundPolicy, OutboundRefused, type Resolver } from "../src/shared/outbound.ts";
import { sendWebhook, type WebhookCall } from "../src/webhooks/sender.ts";
import { startTestApp, type TestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus, snapshot } from "./_helpers/problem.ts";
import { publish } from "./_helpers/events.ts";
import { eventually } from "./_helpers/receiver.ts";

const PRIVATE = "resolves to a private or reserved address that OUTBOUND_ALLOWLIST does not allow";
const MACHINE = "names this machine";

/** A resolver answering from a script, counting its lookups per name. */
function scripted(answers: Record<string, string[] | Error | Array<string[]>>) {
  const lookups: string[] = [];
  const resolve: Resolver = (host) => {
    const n = lookups.filter((h) => h === host).length;
    lookups.push(host);
    const a = answers[host];
    if (a === undefined || a instanceof Error) return Promise.reject(a ?? new Error(`ENOTFOUND ${host}`));
    // A list of lists: the n-th lookup gets the n-th answer (the last one repeats).
    const answer = Array.isArray(a[0]) ? (a as string[][])[Math.min(n, a.length - 1)] : a as string[];
    return Promise.resolve(answer);
  };
  return { resolve, lookups };
}

/** An HTTP receiver on one loopback address that records the Host header of each call. */
function receiverOn(hostname: string, port = 0) {
  const hosts: string[] = [];
  const server = Deno.serve({ hostname, port, onListen() {} }, async (req) => {
    hosts.push(req.headers.get("host") ?? "");
    await req.body?.cancel();
    return new Response("ok");
  });
  return { hosts, port: server.addr.port, close: () => server.shutdown() };
}

const hookCall = (url: string): WebhookCall => ({
  url,
  method: "POST",
  headers: {},
  signingSecret: "whsec_" + btoa("0123456789abcdef01234567"),
  previousSecret: null,
  messageId: "evt_1",
  idempotencyKey: "k",
  payload: {
    event: "webhook.test",
    timestamp: new Date(0).toISOString(),
    agent: { id: "a", name: "A" },
    conversation: null,
    data: {},
  },
});

const now = () => new Date();

Deno.test("one lookup per call, and the connection goes to the vetted address", async () => {
  const first = receiverOn("127.0.0.1");
  const second = receiverOn("127.0.0.2", first.port);
  try {
    // 127.0.0.1 is allowlisted, 127.0.0.2 is not: the second answer is the "rebound" one.
    const dns = scripted({ "hooks.example.test": [["127.0.0.1"], ["127.0.0.2"]] });
    const policy = new OutboundPolicy(["127.0.0.1/32"], { resolve: dns.resolve });
    const url = `http://hooks.example.test:${first.port}/hook`;

    const outcome = await sendWebhook(hookCall(url), { outbound: policy, now });
    assert.deepEqual([outcome.ok, outcome.httpStatus, outcome.error], [true, 200, null]);
    assert.deepEqual(dns.lookups, ["hooks.example.test"], "exactly one lookup for the call");
    assert.deepEqual(
      first.hosts,
      [`hooks.example.test:${first.port}`],
      "the vetted address got it, Host kept",
    );
    assert.deepEqual(second.hosts, [], "the other address was never dialled");

    // The next call looks up again, gets the rebound answer, and is refused before any connection.
    const refused = await sendWebhook(hookCall(url), { outbound: policy, now });
    assert.deepEqual([refused.ok, refused.httpStatus, refused.error], [
      false,
      null,
      `refused: url ${PRIVATE}`,
    ]);
    assert.equal(dns.lookups.length, 2);
    assert.deepEqual(second.hosts, []);
    assert.equal(first.hosts.length, 1);
  } finally {
    await first.close();
    await second.close();
  }
});

Deno.test("IPv6: a name resolving to an allowlisted ::1 is dialled on ::1, the literal too", async () => {
  const recv = receiverOn("::1");
  try {
    const dns = scripted({ "v6.example.test": ["::1"] });
    const policy = new OutboundPolicy(["::1/128"], { resolve: dns.resolve });
    for (const url of [`http://v6.example.test:${recv.port}/hook`, `http://[::1]:${recv.port}/hook`]) {
      const o = await sendWebhook(hookCall(url), { outbound: policy, now });
      assert.deepEqual([o.ok, o.httpStatus, o.error], [true, 200, null], url);
    }
    assert.deepEqual(recv.hosts, [`v6.example.test:${recv.port}`, `[::1]:${recv.port}`]);
    assert.deepEqual(dns.lookups, ["v6.example.test"]);
  } finally {
    await recv.close();
  }
});

Deno.test("https: SNI carries the host name while the socket goes to the vetted address; certificates are verified", async () => {
  // A TCP listener that keeps the TLS ClientHello and hangs up: SNI is sent in the clear.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const hello = (async () => {
    const conn = await listener.accept();
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    conn.close();
    return new TextDecoder("latin1").decode(buf.subarray(0, n ?? 0));
  })();
  const dns = scripted({ "hooks.example.test": ["127.0.0.1"] });
  const policy = new OutboundPolicy(["127.0.0.1/32"], { resolve: dns.resolve });
  const { port } = listener.addr as Deno.NetAddr;
  await assert.rejects(
    policy.request(`https://hooks.example.test:${port}/x`, { method: "POST", headers: new Headers() }),
  );
  const clientHello = await hello;
  assert.ok(clientHello.includes("hooks.example.test"), "the ClientHello names the host (SNI)");
  assert.deepEqual(dns.lookups, ["hooks.example.test"]);
  listener.close();

  // A server with a self-signed certificate for that very name is not trusted: verification is on.
  const tls = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: TEST_CERT, key: TEST_KEY, onListen() {} },
    () => new Response("ok"),
  );
  try {
    const outcome = await sendWebhook(hookCall(`https://hooks.example.test:${tls.addr.port}/x`), {
      outbound: policy,
      now,
    });
    assert.equal(outcome.ok, false);
    assert.equal(outcome.httpStatus, null);
    assert.match(outcome.error ?? "", /certificate/i);
  } finally {
    await tls.shutdown();
  }
});

/** Resolved addresses that must be refused (one per non-public address form the rule names). */
const REFUSED_ADDRESSES = [
  "0.0.0.0",
  "10.0.0.1",
  "100.64.0.1",
  "127.0.0.1",
  "127.255.255.254",
  "169.254.169.254",
  "169.254.1.1",
  "172.16.0.1",
  "172.31.255.255",
  "192.0.0.1",
  "192.0.2.1",
  "192.168.1.1",
  "198.18.0.1",
  "224.0.0.1",
  "240.0.0.1",
  "255.255.255.255",
  "::",
  "::1",
  "fe80::1",
  "fc00::1",
  "fd00::1",
  "fd00:ec2::254",
  "ff02::1",
  "::ffff:127.0.0.1",
  "::ffff:10.0.0.1",
  "::ffff:8.8.8.8",
  "::ffff:0:808:808",
  "64:ff9b::808:808",
  "64:ff9b:1::1",
  "2002:808:808::1",
  "::808:808",
  "2001::1",
  "2001:db8::1",
  "100::1",
];

Deno.test("every private, reserved, mapped or translated address is refused, without naming it", async () => {
  for (const address of REFUSED_ADDRESSES) {
    const dns = scripted({ "target.example.test": [address] });
    const policy = new OutboundPolicy([], { resolve: dns.resolve });
    const url = "http://target.example.test/hook";
    assert.equal(await policy.refusal(url), PRIVATE, address);
    const err = await policy.request(url, { method: "POST", headers: new Headers() }).then(
      () => null,
      (e) => e,
    );
    assert.ok(err instanceof OutboundRefused, address);
    assert.equal(err.message, `url ${PRIVATE}`, address);
    assert.ok(!err.message.includes(address), address);
    // One bad address among public ones is enough.
    const mixed = new OutboundPolicy([], { resolve: () => Promise.resolve(["93.184.215.14", address]) });
    assert.equal(await mixed.refusal(url), PRIVATE, `${address} beside a public one`);
  }
  // Public addresses pass (nothing is dialled here).
  const pub = new OutboundPolicy([], {
    resolve: () => Promise.resolve(["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]),
  });
  assert.equal(await pub.refusal("https://target.example.test/"), null);
});

Deno.test("literal addresses are refused without DNS, and the literal the user typed may be named", async () => {
  const dns = scripted({});
  const policy = new OutboundPolicy([], { resolve: dns.resolve });
  for (const address of REFUSED_ADDRESSES) {
    const url = new URL(address.includes(":") ? `http://[${address}]:8080/x` : `http://${address}:8080/x`);
    const shown = url.hostname.replace(/^\[|\]$/g, "");
    assert.equal(
      await policy.refusal(url.href),
      `resolves to a private or reserved address (${shown}) that OUTBOUND_ALLOWLIST does not allow`,
      address,
    );
  }
  // Forms the URL parser turns into 127.0.0.1.
  for (const url of ["http://0x7f.1/", "http://2130706433/", "http://127.1/", "http://0177.0.0.1/"]) {
    assert.equal(
      await policy.refusal(url),
      "resolves to a private or reserved address (127.0.0.1) that OUTBOUND_ALLOWLIST does not allow",
      url,
    );
  }
  assert.deepEqual(dns.lookups, []);
});

Deno.test("names of this machine are refused without DNS, trailing dots and case ignored", async () => {
  const dns = scripted({});
  // Even an allowlist covering loopback does not let these through.
  const policy = new OutboundPolicy(["127.0.0.0/8", "169.254.0.0/16"], { resolve: dns.resolve });
  const names = [
    "localhost",
    "localhost.",
    "LOCALHOST",
    "localhost..",
    "foo.localhost",
    "foo.localhost.",
    "a.b.LocalHost.",
    "metadata",
    "metadata.",
    "metadata.google.internal",
    "metadata.google.internal.",
    "METADATA.Google.Internal.",
  ];
  for (const name of names) {
    const url = `http://${name}:8080/hook`;
    assert.equal(await policy.refusal(url), MACHINE, name);
    await assert.rejects(
      policy.request(url, { method: "POST", headers: new Headers() }),
      (e) => e instanceof OutboundRefused && e.message === `url ${MACHINE}`,
    );
  }
  assert.deepEqual(dns.lookups, [], "no DNS for names of this machine");

  // A single-label name that resolves to loopback is this machine too, allowlist or not...
  const single = scripted({ myhost: ["127.0.1.1"], "myhost.example.test": ["127.0.1.1"] });
  const loose = new OutboundPolicy(["127.0.0.0/8"], { resolve: single.resolve });
  assert.equal(await loose.refusal("http://myhost:8080/"), MACHINE);
  assert.equal(await loose.refusal("http://myhost.:8080/"), MACHINE);
  // ...while a dotted name pointing at an allowlisted loopback address is the allowlist's business.
  assert.equal(await loose.refusal("http://myhost.example.test:8080/"), null);
  assert.equal(
    await new OutboundPolicy([], { resolve: single.resolve }).refusal("http://myhost.example.test/"),
    PRIVATE,
  );
});

Deno.test("DNS: a name that does not resolve is accepted at registration and a failed call at send time", async () => {
  const dns = scripted({ "not-yet.example.test": new Error("getaddrinfo ENOTFOUND not-yet.example.test") });
  const policy = new OutboundPolicy([], { resolve: dns.resolve });
  const url = "https://not-yet.example.test/hook";
  assert.equal(await policy.refusal(url), null);
  const outcome = await sendWebhook(hookCall(url), { outbound: policy, now });
  assert.deepEqual([outcome.ok, outcome.httpStatus, outcome.error], [
    false,
    null,
    "refused: could not resolve host",
  ]);
  // An empty answer or garbage is no better than an error.
  for (const answer of [[], ["not-an-ip"]]) {
    const odd = new OutboundPolicy([], { resolve: () => Promise.resolve(answer) });
    const o = await sendWebhook(hookCall(url), { outbound: odd, now });
    assert.equal(o.error, "refused: could not resolve host", JSON.stringify(answer));
  }
});

Deno.test("the allowlist: CIDRs and host names", async () => {
  const recv = receiverOn("127.0.0.1");
  try {
    const dns = scripted({
      "hooks.internal": ["127.0.0.1"],
      "other.internal": ["127.0.0.1"],
      "v6.internal": ["fd00::1"],
    });
    const byCidr = new OutboundPolicy(["127.0.0.1/32", "fd00::/8"], { resolve: dns.resolve });
    assert.equal(await byCidr.refusal(`http://127.0.0.1:${recv.port}/`), null);
    assert.equal(
      await byCidr.refusal(`http://127.0.0.2:${recv.port}/`),
      PRIVATE.replace("address", "address (127.0.0.2)"),
    );
    assert.equal(await byCidr.refusal("http://v6.internal/"), null);
    assert.equal(await byCidr.refusal("http://[fd00::1]/"), null);
    assert.equal(
      await byCidr.refusal("http://[::ffff:127.0.0.1]/"),
      null,
      "the mapped form of an allowed address",
    );
    const direct = await sendWebhook(hookCall(`http://127.0.0.1:${recv.port}/hook`), {
      outbound: byCidr,
      now,
    });
    assert.equal(direct.httpStatus, 200);

    const byName = new OutboundPolicy(["Hooks.Internal."], { resolve: dns.resolve });
    const named = await sendWebhook(hookCall(`http://hooks.internal:${recv.port}/hook`), {
      outbound: byName,
      now,
    });
    assert.deepEqual([named.ok, named.httpStatus], [true, 200]);
    assert.deepEqual(recv.hosts, [`127.0.0.1:${recv.port}`, `hooks.internal:${recv.port}`]);
    const other = await sendWebhook(hookCall(`http://other.internal:${recv.port}/hook`), {
      outbound: byName,
      now,
    });
    assert.equal(other.error, `refused: url ${PRIVATE}`);
    assert.equal(recv.hosts.length, 2);
  } finally {
    await recv.close();
  }
});

Deno.test("a URL with credentials is refused", async () => {
  const policy = new OutboundPolicy(["127.0.0.1/32"], { resolve: scripted({}).resolve });
  for (
    const url of [
      "https://user:pass@example.test/x",
      "https://user@example.test/x",
      "https://:pw@example.test/",
    ]
  ) {
    assert.equal(await policy.refusal(url), "must not contain a user name or password", url);
    const o = await sendWebhook(hookCall(url), { outbound: policy, now });
    assert.equal(o.error, "refused: url must not contain a user name or password");
  }
});

// ---- Through the app: registration, delivery, and what each role sees ----

const PUBLIC = "93.184.215.14";
const SECRET_URL =
  "https://hooks.example.test/in?token=tok-123&tenant=acme&api_key=key-456&sig=s-789&Access_Token=acc-tok-42";
const MASKED_URL =
  "https://hooks.example.test/in?token=********&tenant=acme&api_key=********&sig=********&Access_Token=********";

async function appWithDns(): Promise<TestApp> {
  const dns = scripted({ "hooks.example.test": [PUBLIC], "gone.example.test": new Error("ENOTFOUND") });
  return await startTestApp({}, { resolve: dns.resolve });
}

Deno.test("send time: a name that stopped resolving is a failed attempt with its error", async () => {
  const t = await appWithDns();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const created = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "conversation.opened",
      url: "https://gone.example.test/hook",
    });
    assertStatus(created, 201);
    await publish(t.app, { type: "conversation.opened", workspaceId, agentId: agent.id, data: {} });
    const attempt = await eventually(async () =>
      (await t.app.deps.db.deliveryAttempt.findMany({ where: { delivery: { webhookId: created.body.id } } }))[
        0
      ]
    );
    assert.equal(attempt.httpStatus, null);
    assert.equal(attempt.error, "refused: could not resolve host");
  } finally {
    await t.close();
  }
});

Deno.test("URL credentials: userinfo refused at registration; secret query values masked for AGENT and VIEWER", async (t) => {
  const ta = await appWithDns();
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const hooks = `/api/agents/${agent.id}/webhooks`;
    const intents = `/api/agents/${agent.id}/intents`;
    const intentBody = (name: string, webhookUrl: string) => ({
      name,
      description: "Book a visit",
      triggerOnTypes: ["TEXT"],
      requiredFields: [],
      webhookUrl,
    });

    await t.step("userinfo -> 400 VALIDATION_FAILED naming the field, nothing stored", async () => {
      const before = await snapshot(ta.app);
      for (const url of ["https://user:pw-zz1@hooks.example.test/x", "https://pw-zz1@hooks.example.test/x"]) {
        const res = await owner.client.post(hooks, { event: "message.sent", url });
        assertProblem(res, 400, "VALIDATION_FAILED", ["url"]);
        assert.equal(res.body.errors[0].message, "must not contain a user name or password");
        assert.ok(!JSON.stringify(res.body).includes("pw-zz1"), "the refusal does not echo the credentials");
        assertProblem(await owner.client.post(intents, intentBody("Visit", url)), 400, "VALIDATION_FAILED", [
          "webhookUrl",
        ]);
      }
      assert.equal(await snapshot(ta.app), before);
    });

    const hook = await owner.client.post(hooks, { event: "message.sent", url: SECRET_URL });
    assertStatus(hook, 201);
    const intent = await owner.client.post(intents, intentBody("Visit", SECRET_URL));
    assertStatus(intent, 201);
    assert.equal(hook.body.url, SECRET_URL);
    assert.equal(intent.body.webhookUrl, SECRET_URL);
    // A row stored before userinfo was refused: masked too.
    const legacy = await owner.client.post(hooks, {
      event: "message.sent",
      url: "https://hooks.example.test/old",
    });
    await ta.app.deps.db.eventWebhook.update({
      where: { id: legacy.body.id },
      data: { url: "https://user:hunter2@hooks.example.test/old?secret=legacy-sec-9" },
    });

    const GQL = `query($agentId: ID!, $hookId: ID!, $intentId: ID!) {
      webhook(agentId: $agentId, id: $hookId) { url }
      webhooks(agentId: $agentId) { edges { node { id url } } }
      intent(agentId: $agentId, id: $intentId) { webhookUrl }
      intents(agentId: $agentId) { edges { node { webhookUrl } } }
    }`;
    const vars = { agentId: agent.id, hookId: hook.body.id, intentId: intent.body.id };

    await t.step("OWNER and MANAGER see the URLs as registered, over REST and GraphQL", async () => {
      const manager = await ta.seed.member(workspaceId, "MANAGER");
      for (const c of [owner.client, manager.client]) {
        assert.equal((await c.get(`${hooks}/${hook.body.id}`)).body.url, SECRET_URL);
        assert.equal((await c.get(`${intents}/${intent.body.id}`)).body.webhookUrl, SECRET_URL);
        assert.equal(
          (await c.get(`${hooks}/${legacy.body.id}`)).body.url,
          "https://user:hunter2@hooks.example.test/old?secret=legacy-sec-9",
        );
        const g = await c.graphql(GQL, vars);
        assert.equal(g.body.errors, undefined);
        assert.equal(g.body.data.webhook.url, SECRET_URL);
        assert.equal(g.body.data.intent.webhookUrl, SECRET_URL);
      }
    });

    await t.step("AGENT and VIEWER see secret-looking values masked, over REST and GraphQL", async () => {
      for (const role of ["AGENT", "VIEWER"] as const) {
        const m = await ta.seed.member(workspaceId, role);
        const one = await m.client.get(`${hooks}/${hook.body.id}`);
        assertStatus(one, 200);
        assert.equal(one.body.url, MASKED_URL);
        const list = await m.client.get(hooks);
        assert.deepEqual(
          list.body.data.map((w: { url: string }) => w.url).sort(),
          [MASKED_URL, "https://********:********@hooks.example.test/old?secret=********"].sort(),
        );
        const oneIntent = await m.client.get(`${intents}/${intent.body.id}`);
        assert.equal(oneIntent.body.webhookUrl, MASKED_URL);
        assert.equal((await m.client.get(intents)).body.data[0].webhookUrl, MASKED_URL);
        const g = await m.client.graphql(GQL, vars);
        assert.equal(g.body.errors, undefined, JSON.stringify(g.body.errors));
        assert.equal(g.body.data.webhook.url, MASKED_URL);
        assert.equal(g.body.data.intent.webhookUrl, MASKED_URL);
        assert.deepEqual(
          g.body.data.intents.edges.map((e: { node: { webhookUrl: string } }) => e.node.webhookUrl),
          [
            MASKED_URL,
          ],
        );
        const everything = JSON.stringify([one.body, list.body, oneIntent.body, g.body]);
        for (const secret of ["tok-123", "key-456", "s-789", "acc-tok-42", "hunter2", "legacy-sec-9"]) {
          assert.ok(!everything.includes(secret), `${role} saw ${secret}`);
        }
      }
    });
  } finally {
    await ta.close();
  }
});

/** Test-only self-signed certificate for hooks.example.test (EC P-256, valid until 2126). */
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBsTCCAVagAwIBAgIUbUnGEhuFU9ULlMQbE3TsJdwATqUwCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSaG9va3MuZXhhbXBsZS50ZXN0MCAXDTI2MTEyMjIwMjEwMFoY
DzIxMjYxMDI5MjAyMTAwWjAdMRswGQYDVQQDDBJob29rcy5leGFtcGxlLnRlc3Qw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQvRbJSRWgYPEYbg/hAJvUFMvLhy7mB
S9NPkketGkikwgTAAYfYg2i6tv3XKgPfq/OUjWQhTMFe6ShGBiV7ambVo3IwcDAd
BgNVHQ4EFgQUW4FMEVuEMqBbTBGl8QI2ESiW/2AwHwYDVR0jBBgwFoAUW4FMEVuE
MqBbTBGl8QI2ESiW/2AwDwYDVR0TAQH/BAUwAwEB/zAdBgNVHREEFjAUghJob29r
cy5leGFtcGxlLnRlc3QwCgYIKoZIzj0EAwIDSQAwRgIhANkXgTMA1ccb6+9AWMh9
JTvPoHbvi9+/X/3WMM7jtv3QAiEAwYruPzDWx/6B/pxIIkcwjQ0n7Nw2CqzB+DtY
hBxpbLY=
-----END CERTIFICATE-----`;
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgNYRn6bvLAW2m7l93
EpsLUHZ0mexD5pVnbJs/LdSdCiihRANCAAQvRbJSRWgYPEYbg/hAJvUFMvLhy7mB
S9NPkketGkikwgTAAYfYg2i6tv3XKgPfq/OUjWQhTMFe6ShGBiV7ambV
-----END PRIVATE KEY-----`;
