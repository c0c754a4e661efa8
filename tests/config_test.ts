import assert from "node:assert/strict";
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
});

Deno.test("loadConfig() names every bad variable at once", () => {
  let err: unknown;
  try {
    loadConfig({ PORT: "eighty", JWT_SECRET: "short", JWT_TTL: "forever", DATABASE_URL: "mysql://x" });
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ConfigError);
  const problems = err.problems.map((p) => p.split(":")[0]).sort();
  assert.deepEqual(problems, ["DATABASE_URL", "JWT_SECRET", "JWT_TTL", "PORT"]);
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
