/**
 * Every outbound call reaches its receiver exactly as often as it is made and recorded: no HTTP
 * client underneath may re-send on its own. Each kind of call (event webhook, intent webhook, Graph
 * send, model call) goes through its production path to a counting server on 127.0.0.1 that fails
 * one call in each way (a timeout, a reset connection, a 5xx) on a connection the client reuses,
 * which is where pooled clients re-send.
 */
import assert from "node:assert/strict";
import { setImmediate } from "node:timers";
import { startTestApp } from "./_helpers/app.ts";
import { publish } from "./_helpers/events.ts";
import { eventually } from "./_helpers/receiver.ts";
import { type CountedRequest, type Reaction, startCountingReceiver } from "./_helpers/counting_receiver.ts";
import { OutboundPolicy } from "../src/shared/outbound.ts";
import { callIntentWebhook } from "../src/conversations/intent_call.ts";
import { sendText } from "../src/channels/whatsapp/graph_api.ts";
import { openAiModel } from "../src/llm/openai.ts";

const FAILURES: Record<string, Reaction> = {
  timeout: "hang",
  reset: "reset",
  "5xx": { status: 500, body: '{"error":{"message":"boom"}}' },
};

/** Answers `ok` except the first request carrying `failOnce`, which fails as `failure` says. */
function failingOnce(failure: Reaction, failOnce: string, ok: Reaction) {
  let failed = false;
  return (request: CountedRequest): Reaction => {
    if (!failed && request.body.includes(failOnce)) {
      failed = true;
      return failure;
    }
    return ok;
  };
}

/** How often each marker reached the receiver. */
const countOf = (requests: CountedRequest[], marker: string) =>
  requests.filter((r) => r.body.includes(marker)).length;

interface DirectKind {
  ok: Reaction;
  /** A caller as the app makes one; each call carries `marker` and answers its failure text or null. */
  caller(policy: OutboundPolicy, url: (path: string) => string): (marker: string) => Promise<string | null>;
  /** The failure text expected for each failure. */
  expected: Record<string, RegExp>;
}

const TIMEOUT_MS = 300;

/**
 * Until undici has put the last answered connection back in its pool (it does so on the next
 * turn of the event loop, by setImmediate), so the next call reuses it rather than opening another.
 */
const idle = () => new Promise<void>((resolve) => setImmediate(resolve));

const KINDS: Record<string, DirectKind> = {
  "intent webhook": {
    ok: { status: 200, body: '{"message":"done"}' },
    caller: (policy, url) => async (marker) => {
      const outcome = await callIntentWebhook((u, init) => policy.request(u, init), {
        url: url("/intent"),
        method: "POST",
        body: {
          intentName: "track_order",
          fields: { orderNumber: marker },
          context: { agentId: "a", agentName: "Ana", conversationId: "c", contactName: "M", contactId: "m" },
        },
      }, { timeoutMs: TIMEOUT_MS });
      return outcome.kind === "escalate" ? outcome.error : null;
    },
    expected: { timeout: /^timed out after 300 ms$/, reset: /./, "5xx": /^HTTP 500/ },
  },
  "Graph send": {
    ok: { status: 200, body: '{"messages":[{"id":"wamid.1"}]}' },
    caller: (policy, url) => async (marker) => {
      const result = await sendText((u, init) => policy.request(u, init), {
        graphUrl: url("/v21.0"),
        phoneNumberId: "1001",
        accessToken: "token",
        to: "5511999990000",
        body: marker,
      }, { timeoutMs: TIMEOUT_MS });
      return result.ok ? null : result.error.message;
    },
    expected: { timeout: /^timed out after 300 ms$/, reset: /./, "5xx": /^boom$/ },
  },
  "model call": {
    ok: {
      status: 200,
      body: JSON.stringify({
        id: "c1",
        object: "chat.completion",
        created: 0,
        model: "m",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "hi" } }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    },
    caller: (_policy, url) => {
      // The model client is not the outbound policy's: its endpoint is the operator's.
      const model = openAiModel({ apiKey: "test-key", baseUrl: url("/v1") });
      return async (marker) => {
        const completion = await model.complete(
          { model: "m", messages: [{ role: "user", content: marker }] },
          { timeoutMs: TIMEOUT_MS },
        );
        return completion.ok ? null : completion.message;
      };
    },
    expected: { timeout: /^no answer within 300 ms$/, reset: /./, "5xx": /^HTTP 500/ },
  },
};

for (const [kind, k] of Object.entries(KINDS)) {
  for (const [failure, reaction] of Object.entries(FAILURES)) {
    Deno.test(`${kind}, ${failure}: three calls, three requests (no re-send on a reused connection)`, async () => {
      const receiver = await startCountingReceiver(failingOnce(reaction, "call-2", k.ok));
      const policy = new OutboundPolicy(["127.0.0.1/32"]);
      try {
        const call = k.caller(policy, receiver.url);
        // The first call leaves a kept-alive connection; the second fails on it; the third comes after.
        assert.equal(await call("call-1"), null);
        await idle();
        assert.match((await call("call-2")) ?? "(succeeded)", k.expected[failure]);
        await idle();
        assert.equal(await call("call-3"), null);
        assert.deepEqual(
          ["call-1", "call-2", "call-3"].map((m) => countOf(receiver.requests, m)),
          [1, 1, 1],
          "requests per call",
        );
        assert.equal(receiver.requests.length, 3);
        assert.equal(
          receiver.requests[1].connection,
          receiver.requests[0].connection,
          "call 2 reused call 1's",
        );
        // Connections are still reused: only the failed one is replaced.
        assert.equal(receiver.connections(), failure === "5xx" ? 1 : 2, "connections");
      } finally {
        policy.close();
        await receiver.close();
      }
    });
  }
}

Deno.test("event webhooks: each logged attempt reaches the receiver once (timeout, reset, 5xx)", async () => {
  const t = await startTestApp();
  const receivers: Array<Awaited<ReturnType<typeof startCountingReceiver>>> = [];
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    await Promise.all(
      Object.entries(FAILURES).map(async ([failure, reaction]) => {
        const receiver = await startCountingReceiver(failingOnce(reaction, "fail-once", { status: 200 }));
        receivers.push(receiver);
        const agent = await t.seed.agent(owner.client);
        await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
          event: "human.transferred",
          url: receiver.url(),
        });
        const send = (transferSummary: string) =>
          publish(t.app, {
            type: "human.transferred",
            workspaceId,
            agentId: agent.id,
            data: { transferSummary, reason: "TAG" },
          });
        const delivered = (eventId: string) =>
          eventually(async () => {
            const d = await t.app.deps.db.webhookDelivery.findFirst({
              where: { eventId, status: { not: "PENDING" } },
              include: { attempts: { orderBy: { number: "asc" } } },
            });
            return d ?? undefined;
          });
        const sent = (eventId: string) =>
          receiver.requests.filter((r) => r.headers.get("webhook-id") === eventId);

        // A delivered event leaves a kept-alive connection; the next event's first attempt fails on it.
        const warm = await send("warm");
        assert.equal((await delivered(warm)).status, "SUCCEEDED", failure);
        const failing = await send("fail-once");
        const d = await delivered(failing);
        // An event after it, so anything still under way from the failing one has come in before.
        const after = await send("after");
        assert.equal((await delivered(after)).status, "SUCCEEDED", failure);
        await receiver.waitForRequests(4);

        assert.equal(d.status, "SUCCEEDED", failure);
        assert.equal(d.attempts.length, 2, `${failure}: attempts logged`);
        assert.equal(sent(failing).length, d.attempts.length, `${failure}: requests for the logged attempts`);
        assert.deepEqual([sent(warm).length, sent(after).length], [1, 1], failure);
        assert.equal(
          sent(failing)[0].connection,
          sent(warm)[0].connection,
          `${failure}: on a reused connection`,
        );
        assert.equal(receiver.requests.length, 4, failure);
        const [first, second] = d.attempts;
        if (failure === "5xx") assert.equal(first.httpStatus, 500);
        else assert.equal(first.httpStatus, null, failure);
        if (failure === "timeout") assert.equal(first.error, "timed out after 5000 ms");
        assert.equal(second.httpStatus, 200, failure);
      }),
    );
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
    await t.close();
  }
});
