/**
 * Outbound WhatsApp text (src/channels/whatsapp/graph_api.ts) against a Graph API stand-in on
 * 127.0.0.1, called through the app's real pinned outbound client (OutboundPolicy with 127.0.0.1
 * allowlisted): the exact request Meta expects, the wamid of its answer, and each failure classified
 * as retryable or not by Meta's error codes (rate limits, 5xx, timeouts, dropped connections yes;
 * expired token, invalid recipient, 24-hour window, parameters, refused URLs no). No database.
 */
import { graphError } from "./_helpers/conversations.ts";
import assert from "node:assert/strict";
import { OutboundPolicy } from "../src/shared/outbound.ts";
import {
  classifyGraphError,
  type OutboundRequest,
  sendText,
  WHATSAPP_TEXT_LIMIT,
} from "../src/channels/whatsapp/graph_api.ts";
import { type Answer, type Call, startClosingReceiver, startReceiver } from "./_helpers/receiver.ts";

const TOKEN = "EAAG-secret-token";
const outbound = new OutboundPolicy(["127.0.0.1/32"]);
const request: OutboundRequest = (url, init) => outbound.request(url, init);

/** Meta's answer to an accepted text (the send-messages reference). */
const accepted = (wamid: string) =>
  Response.json({
    messaging_product: "whatsapp",
    contacts: [{ input: "5511999990000", wa_id: "5511999990000" }],
    messages: [{ id: wamid }],
  });

/** A Graph stand-in answering `answer`; the base URL mimics WHATSAPP_GRAPH_URL with its version. */
async function withGraph(
  answer: (call: Call, index: number) => Answer,
  test: (graphUrl: string, calls: Call[]) => Promise<void>,
) {
  const graph = startReceiver(answer);
  try {
    await test(graph.url("/v21.0"), graph.calls);
  } finally {
    await graph.close();
  }
}

const input = (graphUrl: string, body = "Olá! Como posso ajudar?") => ({
  graphUrl,
  phoneNumberId: "106540352242922",
  accessToken: TOKEN,
  to: "5511999990000",
  body,
});

Deno.test("sendText() posts Meta's text body with the bearer token and returns the wamid", async () => {
  await withGraph(() => accepted("wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI"), async (graphUrl, calls) => {
    const result = await sendText(request, input(graphUrl));
    assert.deepEqual(result, { ok: true, waMessageId: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI" });
    assert.equal(calls.length, 1);
    const [call] = calls;
    assert.equal(call.method, "POST");
    assert.equal(call.path, "/v21.0/106540352242922/messages");
    assert.equal(call.headers.get("authorization"), `Bearer ${TOKEN}`);
    assert.equal(call.headers.get("content-type"), "application/json");
    assert.deepEqual(JSON.parse(call.body), {
      messaging_product: "whatsapp",
      to: "5511999990000",
      type: "text",
      text: { body: "Olá! Como posso ajudar?" },
    });
  });
});

Deno.test("sendText() classifies Meta's error codes: rate limits and service errors retryable, auth, recipient and parameters not", async () => {
  const cases: Array<[Response, { status: number; code: number; retryable: boolean; message: string }]> = [
    [
      graphError(
        400,
        130429,
        "(#130429) Rate limit hit",
        "Message failed to send because there were too many messages",
      ),
      {
        status: 400,
        code: 130429,
        retryable: true,
        message: "(#130429) Rate limit hit: Message failed to send because there were too many messages",
      },
    ],
    [graphError(400, 131056, "(#131056) (Business Account, Consumer Account) pair rate limit hit"), {
      status: 400,
      code: 131056,
      retryable: true,
      message: "(#131056) (Business Account, Consumer Account) pair rate limit hit",
    }],
    [graphError(429, 4, "(#4) Application request limit reached"), {
      status: 429,
      code: 4,
      retryable: true,
      message: "(#4) Application request limit reached",
    }],
    [graphError(400, 80007, "(#80007) Rate limit issues"), {
      status: 400,
      code: 80007,
      retryable: true,
      message: "(#80007) Rate limit issues",
    }],
    [graphError(400, 131048, "(#131048) Spam rate limit hit"), {
      status: 400,
      code: 131048,
      retryable: true,
      message: "(#131048) Spam rate limit hit",
    }],
    [graphError(500, 131000, "(#131000) Something went wrong"), {
      status: 500,
      code: 131000,
      retryable: true,
      message: "(#131000) Something went wrong",
    }],
    [graphError(503, 133004, "(#133004) Server temporarily unavailable"), {
      status: 503,
      code: 133004,
      retryable: true,
      message: "(#133004) Server temporarily unavailable",
    }],
    [graphError(401, 190, "Error validating access token: Session has expired"), {
      status: 401,
      code: 190,
      retryable: false,
      message: "Error validating access token: Session has expired",
    }],
    [graphError(400, 131026, "(#131026) Message undeliverable"), {
      status: 400,
      code: 131026,
      retryable: false,
      message: "(#131026) Message undeliverable",
    }],
    [
      graphError(
        400,
        131047,
        "(#131047) Re-engagement message",
        "More than 24 hours have passed since the recipient last replied",
      ),
      {
        status: 400,
        code: 131047,
        retryable: false,
        message:
          "(#131047) Re-engagement message: More than 24 hours have passed since the recipient last replied",
      },
    ],
    [graphError(400, 100, "(#100) Invalid parameter"), {
      status: 400,
      code: 100,
      retryable: false,
      message: "(#100) Invalid parameter",
    }],
    // A permanent code stays permanent even behind a 5xx.
    [graphError(500, 190, "Invalid OAuth access token"), {
      status: 500,
      code: 190,
      retryable: false,
      message: "Invalid OAuth access token",
    }],
    // A code Meta does not list: its HTTP status decides.
    [graphError(502, 999999, "new error"), {
      status: 502,
      code: 999999,
      retryable: true,
      message: "new error",
    }],
    [graphError(400, 999999, "new error"), {
      status: 400,
      code: 999999,
      retryable: false,
      message: "new error",
    }],
  ];
  const answers = cases.map(([res]) => res);
  await withGraph((_call, i) => answers[i], async (graphUrl, calls) => {
    for (const [, expected] of cases) {
      const result = await sendText(request, input(graphUrl));
      assert.deepEqual(result, { ok: false, error: expected });
    }
    assert.equal(calls.length, cases.length);
  });
});

Deno.test("sendText() takes a non-JSON 5xx as retryable and a non-JSON 4xx as not", async () => {
  const answers = [
    new Response("<html>Bad Gateway</html>", { status: 502 }),
    new Response("nope", { status: 404 }),
    new Response("slow down", { status: 429 }),
  ];
  await withGraph((_c, i) => answers[i], async (graphUrl) => {
    assert.deepEqual(await sendText(request, input(graphUrl)), {
      ok: false,
      error: { status: 502, code: null, message: "Graph API answered HTTP 502", retryable: true },
    });
    assert.deepEqual(await sendText(request, input(graphUrl)), {
      ok: false,
      error: { status: 404, code: null, message: "Graph API answered HTTP 404", retryable: false },
    });
    assert.deepEqual(await sendText(request, input(graphUrl)), {
      ok: false,
      error: { status: 429, code: null, message: "Graph API answered HTTP 429", retryable: true },
    });
  });
});

Deno.test("sendText() does not retry a 2xx without a message id (Meta may have sent it)", async () => {
  await withGraph(() => Response.json({ messaging_product: "whatsapp" }), async (graphUrl) => {
    assert.deepEqual(await sendText(request, input(graphUrl)), {
      ok: false,
      error: { status: 200, code: null, message: "Graph API answer has no message id", retryable: false },
    });
  });
});

Deno.test("sendText() reports a timeout as retryable (status 0) and stops waiting for the stand-in", async () => {
  await withGraph(() => "hang", async (graphUrl, calls) => {
    const result = await sendText(request, input(graphUrl), { timeoutMs: 150 });
    assert.deepEqual(result, {
      ok: false,
      error: { status: 0, code: null, message: "timed out after 150 ms", retryable: true },
    });
    assert.equal(calls.length, 1);
  });
});

Deno.test("sendText() reports a dropped connection as retryable (status 0)", async () => {
  const graph = startClosingReceiver();
  try {
    const result = await sendText(request, input(graph.url("/v21.0")));
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.error.status, 0);
    assert.equal(result.error.code, null);
    assert.equal(result.error.retryable, true);
    assert.notEqual(result.error.message, "");
    assert.equal(graph.calls.length, 1);
  } finally {
    await graph.close();
  }
});

Deno.test("sendText() does not retry a URL the outbound rule refuses, and makes no call", async () => {
  const strict = new OutboundPolicy([]);
  await withGraph(() => accepted("wamid.x"), async (graphUrl, calls) => {
    const result = await sendText((url, init) => strict.request(url, init), input(graphUrl));
    assert.ok(!result.ok);
    assert.equal(result.error.retryable, false);
    assert.equal(result.error.status, 0);
    assert.match(result.error.message, /^refused: url resolves to a private or reserved address/);
    assert.equal(calls.length, 0);
  });
  strict.close();
});

Deno.test("sendText() refuses an empty or over-long text without calling Meta", async () => {
  await withGraph(() => accepted("wamid.x"), async (graphUrl, calls) => {
    for (const body of ["", "x".repeat(WHATSAPP_TEXT_LIMIT + 1)]) {
      const result = await sendText(request, input(graphUrl, body));
      assert.deepEqual(result, {
        ok: false,
        error: { status: 0, code: null, message: "text must have 1 to 4096 characters", retryable: false },
      });
    }
    assert.deepEqual(await sendText(request, input(graphUrl, "x".repeat(WHATSAPP_TEXT_LIMIT))), {
      ok: true,
      waMessageId: "wamid.x",
    });
    assert.equal(calls.length, 1);
  });
});

Deno.test("sendText() rejects with the caller's abort reason (nothing to record) instead of an outcome", async () => {
  await withGraph(() => "hang", async (graphUrl) => {
    const controller = new AbortController();
    const pending = sendText(request, input(graphUrl), { signal: controller.signal, timeoutMs: 5000 });
    const reason = new Error("server stopping");
    controller.abort(reason);
    await assert.rejects(pending, (e) => e === reason);
  });
});

Deno.test("classifyGraphError() never throws and never keeps more than one bounded line", () => {
  const long = classifyGraphError(
    500,
    JSON.stringify({ error: { code: 2, message: "a\n\nb".repeat(2000) } }),
  );
  assert.equal(long.retryable, true);
  assert.ok(long.message.length <= 1000);
  assert.ok(!long.message.includes("\n"));
  for (
    const body of ["", "null", "[]", '{"error":null}', '{"error":{"code":"190"}}', '{"error":{"code":1.5}}']
  ) {
    const e = classifyGraphError(400, body);
    assert.equal(e.code, null, body);
    assert.equal(e.retryable, false, body);
  }
});

Deno.test("the stand-in's token never appears in a classified error", async () => {
  await withGraph(() => graphError(401, 190, "Invalid OAuth access token"), async (graphUrl) => {
    const result = await sendText(request, input(graphUrl));
    assert.ok(!result.ok);
    assert.ok(!JSON.stringify(result).includes(TOKEN));
  });
});

globalThis.addEventListener("unload", () => outbound.close());
