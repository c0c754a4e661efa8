/**
 * WhatsApp request checks (src/channels/whatsapp/signature.ts): `X-Hub-Signature-256` over the raw
 * bytes, and the verify handshake. The expected signatures are computed here with WebCrypto, not
 * with the module's own signer, so a wrong HMAC in the module cannot agree with itself.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { hubSignature, verifyHandshake, verifyHubSignature } from "../src/channels/whatsapp/signature.ts";

const SECRET = "app-secret-123";
const enc = new TextEncoder();

async function webCryptoSignature(body: Uint8Array<ArrayBuffer>, secret: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    [
      "sign",
    ],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, body));
  return `sha256=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

// Meta signs the bytes it sends: its JSON escapes non-ASCII as \uXXXX, which a re-encoding would undo.
const RAW = enc.encode(
  '{"object":"whatsapp_business_account","entry":[{"text":"Ol\\u00e1 \\ud83d\\ude00"}]}',
);

Deno.test("verifyHubSignature() accepts the HMAC-SHA256 of the raw bytes under the app secret", async () => {
  const header = await webCryptoSignature(RAW, SECRET);
  assert.equal(verifyHubSignature(RAW, header, SECRET), true);
  assert.equal(hubSignature(RAW, SECRET), header);
  // Upper-case hex is the same signature.
  const upper = `sha256=${header.slice("sha256=".length).toUpperCase()}`;
  assert.equal(verifyHubSignature(RAW, upper, SECRET), true);
});

Deno.test("verifyHubSignature() refuses the signature of the re-encoded body (the bytes must be the received ones)", async () => {
  const reencoded = enc.encode(JSON.stringify(JSON.parse(new TextDecoder().decode(RAW))));
  assert.notDeepEqual(reencoded, RAW);
  const header = await webCryptoSignature(reencoded, SECRET);
  assert.equal(verifyHubSignature(RAW, header, SECRET), false);
});

Deno.test("verifyHubSignature() refuses missing, malformed, truncated, wrong-secret and wrong-body signatures", async () => {
  const good = await webCryptoSignature(RAW, SECRET);
  const cases: Array<[string, string | null | undefined]> = [
    ["missing", null],
    ["undefined", undefined],
    ["empty", ""],
    ["no prefix", good.slice("sha256=".length)],
    ["sha1 prefix", good.replace("sha256=", "sha1=")],
    ["truncated", good.slice(0, -2)],
    ["one digit more", `${good}0`],
    ["not hex", `sha256=${"z".repeat(64)}`],
    ["two signatures", `${good},${good}`],
    ["wrong secret", await webCryptoSignature(RAW, "other-secret")],
    ["wrong body", await webCryptoSignature(enc.encode("{}"), SECRET)],
    ["last digit changed", good.slice(0, -1) + (good.endsWith("0") ? "1" : "0")],
  ];
  for (const [name, header] of cases) {
    assert.equal(verifyHubSignature(RAW, header, SECRET), false, name);
  }
  // An empty configured secret never verifies, even a signature made with it.
  assert.equal(verifyHubSignature(RAW, hubSignature(RAW, ""), ""), false);
});

Deno.test("verifyHubSignature() never throws on arbitrary headers and bodies", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 512 }),
      fc.option(fc.string({ maxLength: 100 })),
      (body, header) => {
        assert.equal(verifyHubSignature(body, header, SECRET), false);
      },
    ),
    { numRuns: 300 },
  );
});

const handshake = (params: Record<string, string>) => new URLSearchParams(params);

Deno.test("verifyHandshake() echoes hub.challenge for mode subscribe and the channel's verify token", () => {
  const q = handshake({
    "hub.mode": "subscribe",
    "hub.verify_token": "tok-1",
    "hub.challenge": "1158201444",
  });
  assert.equal(verifyHandshake(q, "tok-1"), "1158201444");
});

Deno.test("verifyHandshake() refuses a wrong token or mode, a missing field, an empty configured token and an over-long challenge", () => {
  const ok = { "hub.mode": "subscribe", "hub.verify_token": "tok-1", "hub.challenge": "42" };
  const cases: Array<[string, Record<string, string>, string]> = [
    ["wrong token", { ...ok, "hub.verify_token": "tok-2" }, "tok-1"],
    ["token prefix", { ...ok, "hub.verify_token": "tok" }, "tok-1"],
    ["wrong mode", { ...ok, "hub.mode": "unsubscribe" }, "tok-1"],
    ["no mode", { "hub.verify_token": "tok-1", "hub.challenge": "42" }, "tok-1"],
    ["no token", { "hub.mode": "subscribe", "hub.challenge": "42" }, "tok-1"],
    ["no challenge", { "hub.mode": "subscribe", "hub.verify_token": "tok-1" }, "tok-1"],
    ["empty challenge", { ...ok, "hub.challenge": "" }, "tok-1"],
    ["over-long challenge", { ...ok, "hub.challenge": "9".repeat(257) }, "tok-1"],
    ["empty configured token", { ...ok, "hub.verify_token": "" }, ""],
  ];
  for (const [name, params, token] of cases) {
    assert.equal(verifyHandshake(handshake(params), token), null, name);
  }
});
