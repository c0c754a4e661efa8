import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { ConfigError, loadConfig } from "../src/config.ts";

Deno.test("loadConfig() applies the operator contract's defaults", () => {
  const c = loadConfig({});
  assert.equal(c.port, 8080);
  assert.equal(c.host, "127.0.0.1");
  assert.equal(c.databaseUrl, undefined);
  assert.equal(c.jwtTtlSeconds, 12 * 3600);
  assert.equal(c.publicUrl, "http://localhost:8080");
  assert.equal(c.whatsappGraphUrl, "https://graph.facebook.com/v21.0");
  assert.equal(c.intentWebhookTimeoutMs, 30000);
  assert.deepEqual(c.outboundAllowlist, []);
  assert.deepEqual(c.groupingMs, { FAST: 2000, MEDIUM: 5000, SLOW: 10000 });
  assert.equal(c.llmTimeoutMs, 60000);
  assert.equal(c.databasePoolSize, 20);
});

Deno.test("loadConfig() takes DATABASE_POOL_SIZE between 2 and 200", () => {
  assert.equal(loadConfig({ DATABASE_POOL_SIZE: "8" }).databasePoolSize, 8);
  for (const bad of ["1", "201", "many"]) {
    assert.throws(() => loadConfig({ DATABASE_POOL_SIZE: bad }), /DATABASE_POOL_SIZE/);
  }
});

Deno.test("loadConfig() takes the grouping windows in ms and refuses zero or non-numbers", () => {
  const c = loadConfig({
    GROUPING_FAST_MS: "5",
    GROUPING_MEDIUM_MS: "10",
    GROUPING_SLOW_MS: "20",
    LLM_TIMEOUT_MS: "900",
  });
  assert.deepEqual(c.groupingMs, { FAST: 5, MEDIUM: 10, SLOW: 20 });
  assert.equal(c.llmTimeoutMs, 900);
  assert.throws(
    () => loadConfig({ GROUPING_FAST_MS: "0", GROUPING_SLOW_MS: "soon" }),
    (e: unknown) =>
      e instanceof ConfigError &&
      JSON.stringify(e.problems.map((p) => p.split(":")[0]).sort()) ===
        '["GROUPING_FAST_MS","GROUPING_SLOW_MS"]',
  );
});

Deno.test("loadConfig() names every bad variable at once", () => {
  let err: unknown;
  try {
    loadConfig({
      PORT: "eighty",
      JWT_SECRET: "short",
      JWT_TTL: "forever",
      DATABASE_URL: "mysql://x",
      SECRETS_KEY: "short",
    });
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ConfigError);
  const problems = err.problems.map((p) => p.split(":")[0]).sort();
  assert.deepEqual(problems, ["DATABASE_URL", "JWT_SECRET", "JWT_TTL", "PORT", "SECRETS_KEY"]);
});

Deno.test("loadConfig() parses lists, durations and PUBLIC_URL", () => {
  const c = loadConfig({
    PORT: "9000",
    JWT_TTL: "30m",
    OUTBOUND_ALLOWLIST: "127.0.0.1/32, hooks.internal",
    PUBLIC_URL: "https://sb.example.com/",
  });
  assert.equal(c.port, 9000);
  assert.equal(c.jwtTtlSeconds, 1800);
  assert.deepEqual(c.outboundAllowlist, ["127.0.0.1/32", "hooks.internal"]);
  assert.equal(c.publicUrl, "https://sb.example.com");
});

Deno.test("loadConfig() stops at a malformed OUTBOUND_ALLOWLIST entry, naming the variable", () => {
  for (
    const bad of [
      "10.0.0.0/99",
      "not a cidr/8",
      "1.2.3",
      "127.0.0.1/32, 1.2.3",
      "::1/129",
      "10.0.0.0/",
      "a..b",
    ]
  ) {
    let err: unknown;
    try {
      loadConfig({ OUTBOUND_ALLOWLIST: bad });
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof ConfigError, bad);
    assert.equal(err.problems.length, 1, bad);
    assert.match(
      err.problems[0],
      /^OUTBOUND_ALLOWLIST: ".+" is not a CIDR, an IP address or a host name$/,
      bad,
    );
  }
  const ok = loadConfig({
    OUTBOUND_ALLOWLIST: "127.0.0.1/32,10.0.0.0/8, fd00::/8, ::1, 192.168.1.5, hooks.internal, crm.",
  });
  assert.deepEqual(ok.outboundAllowlist, [
    "127.0.0.1/32",
    "10.0.0.0/8",
    "fd00::/8",
    "::1",
    "192.168.1.5",
    "hooks.internal",
    "crm.",
  ]);
});

/** The problems of a config that must not load. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  assert.fail(`loaded: ${JSON.stringify(env)}`);
}

const KEY = Buffer.alloc(32, 7);
const JWT_SECRET = "j".repeat(32);
const DATABASE_URL = "postgres://db.example/switchboard";

Deno.test("loadConfig() takes SECRETS_KEY and SECRETS_KEY_PREVIOUS as 32 bytes of base64", () => {
  const older = Buffer.alloc(32, 9);
  const c = loadConfig({
    SECRETS_KEY: KEY.toString("base64"),
    // base64url without padding is accepted too (what some generators print).
    SECRETS_KEY_PREVIOUS: ` ${older.toString("base64url")} , ${KEY.toString("base64")}`,
  });
  assert.deepEqual(c.secretsKey, new Uint8Array(KEY));
  assert.deepEqual(c.secretsKeyPrevious, [new Uint8Array(older), new Uint8Array(KEY)]);
  const unset = loadConfig({});
  assert.equal(unset.secretsKey, undefined);
  assert.deepEqual(unset.secretsKeyPrevious, []);
});

Deno.test("loadConfig() refuses a SECRETS_KEY that is not 32 bytes of base64", () => {
  const bad = [
    Buffer.alloc(31, 1).toString("base64"),
    Buffer.alloc(33, 1).toString("base64"),
    Buffer.alloc(16, 1).toString("hex"), // 32 characters, but hex
    "x".repeat(32), // 32 bytes of text, not base64 of 32 bytes
    KEY.toString("base64").slice(0, -2) + "!=",
  ];
  for (const value of bad) {
    const problems = problemsOf({ SECRETS_KEY: value });
    assert.equal(problems.length, 1, value);
    assert.match(problems[0], /^SECRETS_KEY: must be 32 random bytes in base64/);
    // The value itself is never echoed.
    assert.ok(!problems[0].includes(value), problems[0]);
  }
  const previous = problemsOf({
    SECRETS_KEY: KEY.toString("base64"),
    SECRETS_KEY_PREVIOUS: `${KEY.toString("base64")},short`,
  });
  assert.deepEqual(previous.map((p) => p.split(":")[0]), ["SECRETS_KEY_PREVIOUS"]);
});

Deno.test("with DATABASE_URL, a missing JWT_SECRET or SECRETS_KEY stops the start naming them", () => {
  const both = problemsOf({ DATABASE_URL });
  assert.deepEqual(both, [
    "JWT_SECRET: is required when DATABASE_URL is set",
    "SECRETS_KEY: is required when DATABASE_URL is set",
  ]);
  assert.deepEqual(problemsOf({ DATABASE_URL, JWT_SECRET }), [
    "SECRETS_KEY: is required when DATABASE_URL is set",
  ]);
  assert.deepEqual(problemsOf({ DATABASE_URL, SECRETS_KEY: KEY.toString("base64") }), [
    "JWT_SECRET: is required when DATABASE_URL is set",
  ]);
  // Empty counts as unset; main.ts prints ConfigError's message, which names both.
  assert.throws(
    () => loadConfig({ DATABASE_URL, JWT_SECRET: "", SECRETS_KEY: "" }),
    (e) =>
      e instanceof ConfigError && /JWT_SECRET: is required/.test(e.message) &&
      /SECRETS_KEY: is required/.test(e.message),
  );
  const ok = loadConfig({ DATABASE_URL, JWT_SECRET, SECRETS_KEY: KEY.toString("base64") });
  assert.equal(ok.databaseUrl, DATABASE_URL);
  // Embedded mode (no DATABASE_URL) generates both under DATA_DIR instead.
  assert.equal(loadConfig({}).secretsKey, undefined);
});

Deno.test("loadConfig() takes the graphql-ws limits, with their defaults, and refuses zero counts", () => {
  assert.deepEqual(loadConfig({}).live, {
    maxSubscriptionsPerSocket: 100,
    maxSocketsPerCredential: 100,
    maxSocketsPerAddress: 1000,
    connectionInitTimeoutMs: 3000,
    keepaliveSeconds: 30,
    maxBufferedBytes: 1048576,
    slowConsumerGraceMs: 2000,
    maxQueuedEvents: 1000,
  });
  assert.deepEqual(
    loadConfig({
      LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET: "5",
      LIVE_MAX_SOCKETS_PER_CREDENTIAL: "6",
      LIVE_MAX_SOCKETS_PER_ADDRESS: "7",
      LIVE_CONNECTION_INIT_TIMEOUT_MS: "800",
      LIVE_KEEPALIVE_SECONDS: "0",
      LIVE_MAX_BUFFERED_BYTES: "65536",
      LIVE_SLOW_CONSUMER_GRACE_MS: "100",
      LIVE_MAX_QUEUED_EVENTS: "50",
    }).live,
    {
      maxSubscriptionsPerSocket: 5,
      maxSocketsPerCredential: 6,
      maxSocketsPerAddress: 7,
      connectionInitTimeoutMs: 800,
      keepaliveSeconds: 0,
      maxBufferedBytes: 65536,
      slowConsumerGraceMs: 100,
      maxQueuedEvents: 50,
    },
  );
  assert.throws(
    () =>
      loadConfig({
        LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET: "0",
        LIVE_MAX_SOCKETS_PER_ADDRESS: "many",
        LIVE_KEEPALIVE_SECONDS: "-1",
      }),
    (e: unknown) =>
      e instanceof ConfigError &&
      JSON.stringify(e.problems.map((p) => p.split(":")[0]).sort()) ===
        '["LIVE_KEEPALIVE_SECONDS","LIVE_MAX_SOCKETS_PER_ADDRESS","LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET"]',
  );
});

Deno.test("loadConfig() takes PROCESS_ROLE all, http or workers (default all) and names it when bad", () => {
  assert.equal(loadConfig({}).processRole, "all");
  assert.equal(loadConfig({ PROCESS_ROLE: "http" }).processRole, "http");
  assert.equal(loadConfig({ PROCESS_ROLE: " Workers " }).processRole, "workers");
  assert.throws(
    () => loadConfig({ PROCESS_ROLE: "api" }),
    (e: unknown) =>
      e instanceof ConfigError && e.problems.length === 1 &&
      e.problems[0] === "PROCESS_ROLE: must be one of all, http, workers",
  );
});
