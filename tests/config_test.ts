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
