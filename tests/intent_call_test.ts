/**
 * The intent webhook call (src/conversations/intent_call.ts) against receivers on 127.0.0.1 through
 * the real pinned outbound client: the documented request `{ intentName, fields, context }` with the
 * intent's method; the tag replaced by `message`, removed on a 2xx without one, escalated (HTTP 0
 * for no answer) on timeouts, dropped connections, refused URLs, 3xx, 4xx and 5xx. No database.
 */
import assert from "node:assert/strict";
import { OutboundPolicy } from "../src/shared/outbound.ts";
import { callIntentWebhook, type IntentCall, intentOutcome } from "../src/conversations/intent_call.ts";
import { type Answer, startClosingReceiver, startReceiver } from "./_helpers/receiver.ts";

const outbound = new OutboundPolicy(["127.0.0.1/32"]);
const request = (url: string, init: Parameters<OutboundPolicy["request"]>[1]) => outbound.request(url, init);

const call = (url: string, method = "POST"): IntentCall => ({
  url,
  method,
  body: {
    intentName: "Criar pedido",
    fields: { produto: "pizza", quantidade: "2" },
    context: {
      agentId: "ag_1",
      agentName: "Ana",
      conversationId: "cv_1",
      contactName: "Sheena",
      contactId: "ct_1",
    },
  },
});

async function withReceiver(answer: () => Answer, test: (url: string) => Promise<void>) {
  const receiver = startReceiver(answer);
  try {
    await test(receiver.url("/intent"));
  } finally {
    await receiver.close();
  }
}

Deno.test("callIntentWebhook() sends { intentName, fields, context } with the intent's method and replaces the tag with message", async () => {
  const receiver = startReceiver(() => Response.json({ message: "Pedido 42 criado!", extra: 1 }));
  try {
    const outcome = await callIntentWebhook(request, call(receiver.url("/intent"), "PATCH"), {
      timeoutMs: 5000,
    });
    assert.deepEqual(outcome, { kind: "reply", httpStatus: 200, message: "Pedido 42 criado!" });
    const [c] = receiver.calls;
    assert.equal(c.method, "PATCH");
    assert.equal(c.path, "/intent");
    assert.equal(c.headers.get("content-type"), "application/json");
    assert.equal(
      c.body,
      '{"intentName":"Criar pedido","fields":{"produto":"pizza","quantidade":"2"},"context":{"agentId":"ag_1",' +
        '"agentName":"Ana","conversationId":"cv_1","contactName":"Sheena","contactId":"ct_1"}}',
    );
  } finally {
    await receiver.close();
  }
});

Deno.test("callIntentWebhook() removes the tag silently on a 2xx without a message", async () => {
  for (
    const [answer, status] of [
      [() => Response.json({ ok: true }), 200],
      [() => new Response(null, { status: 204 }), 204],
      [() => new Response("done"), 200],
      [() => Response.json({ message: "" }), 200],
      [() => Response.json({ message: 42 }), 200],
    ] as Array<[() => Response, number]>
  ) {
    await withReceiver(answer, async (url) => {
      assert.deepEqual(await callIntentWebhook(request, call(url), { timeoutMs: 5000 }), {
        kind: "silent",
        httpStatus: status,
      });
    });
  }
  await withReceiver(() => Response.json({ message: "Criado" }, { status: 201 }), async (url) => {
    assert.deepEqual(await callIntentWebhook(request, call(url), { timeoutMs: 5000 }), {
      kind: "reply",
      httpStatus: 201,
      message: "Criado",
    });
  });
});

Deno.test("callIntentWebhook() escalates 3xx, 4xx and 5xx answers with their status and body", async () => {
  const cases: Array<[Response, { httpStatus: number; error: string }]> = [
    [new Response(null, { status: 302, headers: { location: "http://example.com" } }), {
      httpStatus: 302,
      error: "HTTP 302: redirect not followed",
    }],
    [Response.json({ error: "produto inválido" }, { status: 422 }), {
      httpStatus: 422,
      error: 'HTTP 422: {"error":"produto inválido"}',
    }],
    [new Response("boom\n  trace", { status: 500 }), { httpStatus: 500, error: "HTTP 500: boom trace" }],
    [new Response(null, { status: 503 }), { httpStatus: 503, error: "HTTP 503: no body" }],
  ];
  for (const [answer, expected] of cases) {
    await withReceiver(() => answer, async (url) => {
      assert.deepEqual(await callIntentWebhook(request, call(url), { timeoutMs: 5000 }), {
        kind: "escalate",
        ...expected,
      });
    });
  }
});

Deno.test("callIntentWebhook() escalates with HTTP 0 on a timeout, a dropped connection and a refused URL", async () => {
  await withReceiver(() => "hang", async (url) => {
    assert.deepEqual(await callIntentWebhook(request, call(url), { timeoutMs: 100 }), {
      kind: "escalate",
      httpStatus: 0,
      error: "timed out after 100 ms",
    });
  });
  const closing = startClosingReceiver();
  try {
    const outcome = await callIntentWebhook(request, call(closing.url("/intent")), { timeoutMs: 5000 });
    assert.equal(outcome.kind, "escalate");
    assert.equal(outcome.httpStatus, 0);
    assert.equal(closing.calls.length, 1);
  } finally {
    await closing.close();
  }
  const strict = new OutboundPolicy([]);
  await withReceiver(() => Response.json({ message: "x" }), async (url) => {
    const outcome = await callIntentWebhook((u, i) => strict.request(u, i), call(url), { timeoutMs: 5000 });
    assert.equal(outcome.kind, "escalate");
    assert.equal(outcome.httpStatus, 0);
    assert.match(outcome.kind === "escalate" ? outcome.error : "", /^refused: url resolves to a private/);
  });
  strict.close();
});

Deno.test("intentOutcome() bounds the logged body to one line", () => {
  const outcome = intentOutcome(500, "x\n".repeat(5000));
  assert.equal(outcome.kind, "escalate");
  assert.ok(outcome.kind === "escalate" && outcome.error.length <= 510 && !outcome.error.includes("\n"));
});

globalThis.addEventListener("unload", () => outbound.close());
