/**
 * The reply pipeline: grouping window, one reply at a time, silence when PAUSED,
 * HUMAN or over maxDailyMessages, the model unavailable, reply shaping and token usage. Against a
 * scripted OpenAI-compatible server and a Graph stand-in on 127.0.0.1; customer messages are stored
 * as inbound stores them (tests/_helpers/conversations.ts).
 */
import assert from "node:assert/strict";
import { startTestApp, type TestApp, testConfig } from "./_helpers/app.ts";
import { buildApp, type BuildOptions } from "../src/app.ts";
import { runReply } from "../src/conversations/pipeline/reply.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { silentLogger } from "../src/shared/logger.ts";
import {
  customerMessage,
  eventsOf,
  lastUserMessage,
  messagesOf,
  type ModelAnswer,
  type ModelCall,
  seedChannel,
  startGraph,
  startModelServer,
  waitUntil,
} from "./_helpers/conversations.ts";
import type { Receiver } from "./_helpers/receiver.ts";
import { logSink } from "./_helpers/logs.ts";

interface Setup {
  t: TestApp;
  model: ReturnType<typeof startModelServer>;
  graph: Receiver;
  workspaceId: string;
  close(): Promise<void>;
}

async function setup(
  script: (call: ModelCall, index: number) => ModelAnswer,
  env: Record<string, string> = {},
  options: BuildOptions = {},
): Promise<Setup> {
  const model = startModelServer(script);
  const graph = startGraph();
  const t = await startTestApp({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: "30",
    ...env,
  }, options);
  const { workspaceId } = await t.seed.workspace();
  return {
    t,
    model,
    graph,
    workspaceId,
    async close() {
      await t.close();
      await model.close();
      await graph.close();
    },
  };
}

async function agentWithChannel(
  s: Setup,
  fields: Record<string, unknown> = {},
  type: "WHATSAPP" | "API" = "WHATSAPP",
) {
  const owner = await s.t.seed.member(s.workspaceId, "OWNER");
  const agent = await s.t.seed.agent(owner.client, { messageGroupingTime: "FAST", ...fields });
  const channel = await seedChannel(s.t.app, s.workspaceId, agent.id, type);
  const send = (content: string, contact?: { externalId: string; name: string }) =>
    customerMessage(s.t.app, {
      workspaceId: s.workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content,
      contact,
    });
  return { agent, channel, send, owner };
}

const aiMessages = async (s: Setup, conversationId: string) =>
  (await messagesOf(s.t.app, conversationId)).filter((m) => m.senderKind === "AI");

Deno.test("three messages in one window are answered by one model call with all three; the reply is sent and SENT", async () => {
  // The injected clock decides when the window closes; the window's own pg-boss jobs are due in 10
  // minutes of wall time (the test app's default), so the test runs the closing job itself, twice
  // at once as two processes would.
  const clock = new ManualClock();
  const s = await setup(
    () => ({
      content: "Olá Maria! Como posso ajudar?",
      usage: { prompt_tokens: 321, completion_tokens: 17 },
    }),
    {},
    { clock },
  );
  try {
    const { send } = await agentWithChannel(s, { messageGroupingTime: "MEDIUM" });
    const first = await send("Oi");
    clock.advance(599_999);
    await send("tudo bem?"); // restarts the window
    clock.advance(599_999);
    await send("quero saber do meu pedido");
    const job = { conversationId: first.conversationId };
    clock.advance(599_999);
    await runReply(s.t.app.deps, job);
    assert.equal(s.model.calls.length, 0, "a millisecond before the window closes: nothing");
    clock.advance(1);
    // The loser of the claim either finds nothing due any more or the reply in progress (it comes
    // back when that claim would be stale).
    await Promise.all([
      runReply(s.t.app.deps, job),
      runReply(s.t.app.deps, job),
    ]);
    const ai = await waitUntil(
      () => aiMessages(s, first.conversationId),
      (m) => m.length === 1 && m[0].status === "SENT",
    );
    assert.equal(s.model.calls.length, 1);
    assert.equal(lastUserMessage(s.model.calls[0]), "Oi\ntudo bem?\nquero saber do meu pedido");
    assert.equal(ai[0].content, "Olá Maria! Como posso ajudar?");
    assert.equal(ai[0].inputTokens, 321);
    assert.equal(ai[0].outputTokens, 17);
    assert.equal(ai[0].externalId, "wamid.TEST0");
    assert.equal(s.graph.calls.length, 1);
    const sent = JSON.parse(s.graph.calls[0].body);
    assert.equal(sent.to, "5511999990000");
    assert.deepEqual(sent.text, { body: "Olá Maria! Como posso ajudar?" });
    assert.equal(s.graph.calls[0].headers.get("authorization"), "Bearer EAAG-test-access-token");
    // Every customer message is marked answered; message.sent carries the AI sender.
    const customer = (await messagesOf(s.t.app, first.conversationId)).filter((m) =>
      m.senderKind === "CUSTOMER"
    );
    assert.equal(customer.filter((m) => m.answeredAt !== null).length, 3);
    const events = await eventsOf(s.t.app, first.conversationId);
    const sentEvents = events.filter((e) => e.type === "message.sent");
    assert.equal(sentEvents.length, 1);
    assert.equal(sentEvents[0].data.sender, "AI");
    assert.equal(sentEvents[0].data.message.content, "Olá Maria! Como posso ajudar?");
    assert.equal(events.filter((e) => e.type === "message.received").length, 3);
  } finally {
    await s.close();
  }
});

Deno.test("a message that arrives while a reply is generated is answered by the next reply, never twice at once", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  let inFlight = 0;
  let maxInFlight = 0;
  const s = await setup(async (_call, index) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (index === 0) await held;
    inFlight--;
    return { content: `resposta ${index + 1}` };
  });
  try {
    const { send } = await agentWithChannel(s);
    const first = await send("primeira");
    await s.model.waitForCalls(1);
    // The model is thinking about "primeira": this one must wait for the next reply.
    await send("segunda, durante a geração");
    release();
    const ai = await waitUntil(() => aiMessages(s, first.conversationId), (m) => m.length === 2);
    assert.deepEqual(ai.map((m) => m.content), ["resposta 1", "resposta 2"]);
    assert.equal(s.model.calls.length, 2);
    assert.equal(lastUserMessage(s.model.calls[0]), "primeira");
    assert.equal(lastUserMessage(s.model.calls[1]), "segunda, durante a geração");
    assert.equal(maxInFlight, 1);
  } finally {
    await s.close();
  }
});

Deno.test("a reply whose claim was taken over meanwhile (its process taken for dead) stores and sends nothing", async () => {
  const clock = new ManualClock();
  let arrived!: () => void;
  const called = new Promise<void>((r) => arrived = r);
  let answer!: () => void;
  const answered = new Promise<void>((r) => answer = r);
  const s = await setup(
    async () => {
      arrived();
      await answered;
      return { content: "resposta tardia" };
    },
    {},
    { clock },
  );
  try {
    const { send } = await agentWithChannel(s);
    const { conversationId } = await send("Oi");
    clock.advance(600_000);
    const running = runReply(s.t.app.deps, { conversationId });
    await called;
    // Another process' reply holds the conversation now (recovery.ts freed it, another claimed it).
    const other = new Date(clock.now().getTime() + 1);
    await s.t.app.deps.db.conversation.update({
      where: { id: conversationId },
      data: { replyClaimedAt: other, replyClaimedBy: 2147483000 },
    });
    answer();
    await running;
    assert.deepEqual(await aiMessages(s, conversationId), []);
    assert.equal(s.graph.calls.length, 0);
    const after = await s.t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: conversationId } });
    assert.equal(after.replyClaimedAt?.getTime(), other.getTime(), "the other reply's claim is left alone");
  } finally {
    await s.close();
  }
});

Deno.test("PAUSED agents and HUMAN conversations store the message, fire message.received and never answer", async () => {
  const s = await setup((call) => ({ content: `eco: ${lastUserMessage(call)}` }));
  try {
    const paused = await agentWithChannel(s);
    await paused.owner.client.patch(`/api/agents/${paused.agent.id}/status`, { status: "PAUSED" });
    const p = await paused.send("alguém aí?");
    const human = await agentWithChannel(s);
    const h1 = await human.send("primeira");
    await waitUntil(() => aiMessages(s, h1.conversationId), (m) => m.length === 1);
    await s.t.app.deps.db.conversation.update({
      where: { id: h1.conversationId },
      data: { status: "HUMAN" },
    });
    await human.send("com o humano agora");
    // Both windows close and are handled (answeredAt set) without a model call.
    for (const id of [p.conversationId, h1.conversationId]) {
      await waitUntil(
        () =>
          s.t.app.deps.db.message.count({
            where: { conversationId: id, senderKind: "CUSTOMER", answeredAt: null },
          }),
        (n) => n === 0,
      );
    }
    assert.equal(s.model.calls.length, 1);
    assert.equal((await aiMessages(s, p.conversationId)).length, 0);
    assert.equal((await aiMessages(s, h1.conversationId)).length, 1);
    assert.equal(
      (await eventsOf(s.t.app, p.conversationId)).filter((e) => e.type === "message.received").length,
      1,
    );
    assert.equal(
      (await eventsOf(s.t.app, h1.conversationId)).filter((e) => e.type === "message.received").length,
      2,
    );
  } finally {
    await s.close();
  }
});

Deno.test("maxDailyMessages: over the limit the customer gets no reply that UTC day", async () => {
  const s = await setup((call) => ({ content: `eco: ${lastUserMessage(call)}` }));
  try {
    const { send } = await agentWithChannel(s, { maxDailyMessages: 2 });
    let conversationId = "";
    for (const text of ["um", "dois", "três"]) {
      const m = await send(text);
      conversationId = m.conversationId;
      await waitUntil(
        () => s.t.app.deps.db.message.findUnique({ where: { id: m.messageId } }),
        (row) => row?.answeredAt !== null,
      );
    }
    const ai = await aiMessages(s, conversationId);
    assert.deepEqual(ai.map((m) => m.content), ["eco: um", "eco: dois"]);
    assert.equal(s.model.calls.length, 2);
  } finally {
    await s.close();
  }
});

Deno.test("no answer from the model: three calls (1 s, then 4 s apart), then the conversation goes to a human with the summary", async () => {
  const logs = logSink();
  const s = await setup(
    () => new Response(JSON.stringify({ error: { message: "overloaded" } }), { status: 503 }),
    {},
    { logger: logs.logger },
  );
  try {
    const { send } = await agentWithChannel(s);
    const m = await send("oi");
    const conv = await waitUntil(
      () => s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } }),
      (c) => c?.status === "HUMAN",
    );
    assert.equal(conv!.humanReason, "ESCALATION");
    assert.equal(conv!.transferSummary, "language model unavailable (error)");
    const transferred = (await eventsOf(s.t.app, m.conversationId)).filter((e) =>
      e.type === "human.transferred"
    );
    assert.deepEqual(transferred.map((e) => e.data), [
      { transferSummary: "language model unavailable (error)", reason: "ESCALATION" },
    ]);
    assert.equal((await aiMessages(s, m.conversationId)).length, 0);
    // Every request the endpoint received is in the log: two failed calls made again, then the last.
    assert.equal(s.model.calls.length, 3);
    const retried = logs.lines.filter((l) => l.msg === "language model call failed; calling it again");
    assert.deepEqual(retried.map((l) => [l.attempt, l.waitMs]), [[1, 1000], [2, 4000]]);
    assert.equal(
      logs.lines.filter((l) => l.msg === "language model call failed; transferring to a human").length,
      1,
    );
  } finally {
    await s.close();
  }
});

Deno.test("a rate-limited model call is made again after the wait its answer asks for, and the customer is answered", async () => {
  const logs = logSink();
  const s = await setup(
    (_call, index) =>
      index === 0
        ? new Response(JSON.stringify({ error: { message: "rate limited" } }), {
          status: 429,
          headers: { "retry-after-ms": "50" },
        })
        : { content: "Olá! Como posso ajudar?" },
    {},
    { logger: logs.logger },
  );
  try {
    const { send } = await agentWithChannel(s);
    const m = await send("oi");
    const [reply] = await waitUntil(() => aiMessages(s, m.conversationId), (ms) => ms.length === 1);
    assert.equal(reply.content, "Olá! Como posso ajudar?");
    assert.equal(s.model.calls.length, 2);
    const conv = await s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } });
    assert.equal(conv!.status, "OPEN");
    const retried = logs.lines.filter((l) => l.msg === "language model call failed; calling it again");
    assert.deepEqual(retried.map((l) => [l.attempt, l.waitMs, l.error]), [[1, 50, "HTTP 429: rate limited"]]);
  } finally {
    await s.close();
  }
});

Deno.test("a model error that another call would not mend (400), or a wait longer than the time left, is a transfer at once", async () => {
  const answers: Record<string, () => Response> = {
    "bad request": () => new Response(JSON.stringify({ error: { message: "bad prompt" } }), { status: 400 }),
    "wait too long": () =>
      new Response(JSON.stringify({ error: { message: "come back later" } }), {
        status: 429,
        headers: { "retry-after": "3600" },
      }),
  };
  for (const [name, answer] of Object.entries(answers)) {
    const s = await setup(answer);
    try {
      const { send } = await agentWithChannel(s);
      const m = await send("oi");
      const conv = await waitUntil(
        () => s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } }),
        (c) => c?.status === "HUMAN",
      );
      assert.equal(conv!.transferSummary, "language model unavailable (error)", name);
      assert.equal(s.model.calls.length, 1, name);
    } finally {
      await s.close();
    }
  }
});

Deno.test('no OPENAI_API_KEY: a HUMAN transfer with the summary "language model unavailable"', async () => {
  const s = await setup(() => ({ content: "never" }), { OPENAI_API_KEY: "" });
  try {
    const { send } = await agentWithChannel(s);
    const m = await send("oi");
    const conv = await waitUntil(
      () => s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } }),
      (c) => c?.status === "HUMAN",
    );
    assert.equal(conv!.transferSummary, "language model unavailable");
    assert.equal(s.model.calls.length, 0);
  } finally {
    await s.close();
  }
});

Deno.test("a model timeout is a transfer too, with its kind", async () => {
  const s = await setup(() => "hang", { LLM_TIMEOUT_MS: "200" });
  try {
    const { send } = await agentWithChannel(s);
    const m = await send("oi");
    const conv = await waitUntil(
      () => s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } }),
      (c) => c?.status === "HUMAN",
    );
    assert.equal(conv!.transferSummary, "language model unavailable (timeout)");
  } finally {
    await s.close();
  }
});

Deno.test("shaping: paragraphs split into messages, signed with the agent name, emoji stripped; usage on the first part", async () => {
  const s = await setup(() => ({
    content: "Olá! 😀 Tudo certo.\n\nSeu pedido 👍 saiu hoje.",
    usage: { prompt_tokens: 50, completion_tokens: 9 },
  }));
  try {
    const { send } = await agentWithChannel(s, { name: "Ana", signMessages: true, enabledEmoji: false });
    const m = await send("e meu pedido?");
    const ai = await waitUntil(
      () => aiMessages(s, m.conversationId),
      (rows) => rows.length === 2 && rows.every((r) => r.status === "SENT"),
    );
    assert.deepEqual(ai.map((r) => r.content), ["*Ana*: Olá! Tudo certo.", "*Ana*: Seu pedido saiu hoje."]);
    assert.deepEqual(ai.map((r) => [r.inputTokens, r.outputTokens]), [[50, 9], [0, 0]]);
    const bodies = s.graph.calls.map((c) => JSON.parse(c.body).text.body).sort();
    assert.deepEqual(bodies, ["*Ana*: Olá! Tudo certo.", "*Ana*: Seu pedido saiu hoje."]);
    const sent = (await eventsOf(s.t.app, m.conversationId)).filter((e) => e.type === "message.sent");
    assert.equal(sent.length, 2);
  } finally {
    await s.close();
  }
});

Deno.test("an API channel's reply is SENT at once and nothing goes to WhatsApp", async () => {
  const s = await setup(() => ({ content: "Oi do app" }));
  try {
    const { send } = await agentWithChannel(s, {}, "API");
    const m = await send("oi");
    const ai = await waitUntil(() => aiMessages(s, m.conversationId), (rows) => rows.length === 1);
    assert.equal(ai[0].status, "SENT");
    assert.equal(s.graph.calls.length, 0);
  } finally {
    await s.close();
  }
});

Deno.test("two server processes on one database: every customer message answered once, one reply at a time", async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  const s = await setup(async (call) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // Long enough for the other process' jobs to come due meanwhile.
    await new Promise((r) => setTimeout(r, 50));
    inFlight--;
    return { content: `eco: ${lastUserMessage(call).replaceAll("\n", " + ")}` };
  }, { GROUPING_FAST_MS: "1" });
  const second = await buildApp(
    testConfig(s.t.db.url, {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: s.model.baseUrl,
      WHATSAPP_GRAPH_URL: s.graph.url(""),
      GROUPING_FAST_MS: "1",
    }),
    { logger: silentLogger, bootstrap: false },
  );
  try {
    const { send } = await agentWithChannel(s);
    const texts = ["m1", "m2", "m3", "m4", "m5", "m6"];
    let conversationId = "";
    for (const text of texts) conversationId = (await send(text)).conversationId;
    await waitUntil(
      () =>
        s.t.app.deps.db.message.count({
          where: { conversationId, senderKind: "CUSTOMER", answeredAt: null },
        }),
      (n) => n === 0,
    );
    // Each message went to the model exactly once, in order, and no two calls overlapped.
    const asked = s.model.calls.flatMap((c) => lastUserMessage(c).split("\n"));
    assert.deepEqual(asked, texts);
    assert.equal(maxInFlight, 1);
    const ai = await aiMessages(s, conversationId);
    assert.equal(ai.length, s.model.calls.length);
  } finally {
    await second.stop();
    await s.close();
  }
});

Deno.test("a 10 000-character reply goes out as several WhatsApp messages, each within 4096 characters", async () => {
  const sentence = "Esta é uma frase de teste com algumas palavras. ";
  const long = sentence.repeat(Math.ceil(10_000 / sentence.length)).slice(0, 10_000).trim();
  const s = await setup(() => ({ content: long }));
  try {
    const { send } = await agentWithChannel(s, { splitMessages: false });
    const m = await send("conte tudo");
    const ai = await waitUntil(
      () => aiMessages(s, m.conversationId),
      (rows) => rows.length > 0 && rows.every((r) => r.status === "SENT"),
    );
    assert.equal(ai.length, 3);
    assert.ok(ai.every((r) => r.content.length <= 4096));
    assert.equal(ai.map((r) => r.content).join(" ").replace(/\s+/g, " "), long.replace(/\s+/g, " "));
    assert.equal(s.graph.calls.length, 3);
  } finally {
    await s.close();
  }
});
