/**
 * Intents and the transfer tag in replies (docs/behaviour.md "Replies"): `intent.fired`
 * before the POST, the tag replaced by the answer's message or removed on a 2xx without one, a
 * missing required field skipped with its log line, a failing webhook escalated to a human, the
 * `<transferir>` tag → HUMAN with its summary, triggerOnTypes respected.
 */
import assert from "node:assert/strict";
import { startTestApp, type TestApp } from "./_helpers/app.ts";
import { logSink } from "./_helpers/logs.ts";
import { type Receiver, startClosingReceiver, startReceiver } from "./_helpers/receiver.ts";
import {
  customerMessage,
  eventsOf,
  messagesOf,
  seedChannel,
  startGraph,
  startModelServer,
  waitUntil,
} from "./_helpers/conversations.ts";

const REPLIES: Record<string, string> = {
  agendar: 'Certo! <agendar data="2026-12-01" nome="Maria"/> Até lá.',
  silencioso: 'Vou registrar. <agendar data="2026-12-02" nome="Maria"/>',
  faltando: 'Vou tentar. <agendar data="2026-12-03"/> Mais alguma coisa?',
  falha: 'Agendado! <agendar data="2026-12-04" nome="Maria"/>',
  transferir: 'Vou chamar alguém. <transferir motivo="cliente pediu um humano"/>',
  audio: 'Ok <agendar data="2026-12-05" nome="Maria"/>',
};

interface Setup {
  t: TestApp;
  hook: Receiver;
  logs: ReturnType<typeof logSink>;
  model: ReturnType<typeof startModelServer>;
  graph: Receiver;
  workspaceId: string;
  close(): Promise<void>;
}

async function setup(
  hookAnswer: ((body: string, t: TestApp) => Response | Promise<Response>) | "drop",
): Promise<Setup> {
  // Assigned once the app exists: the receiver made before it answers with it.
  // deno-lint-ignore prefer-const
  let app!: TestApp;
  // The customer's message names the scripted reply.
  const model = startModelServer((call) => ({ content: REPLIES[call.body.messages.at(-1).content] ?? "?" }));
  const graph = startGraph();
  const hook = hookAnswer === "drop"
    ? startClosingReceiver()
    : startReceiver((call) => hookAnswer(call.body, app));
  const logs = logSink();
  const t = await startTestApp({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: "20",
    INTENT_WEBHOOK_TIMEOUT_MS: "2000",
  }, { logger: logs.logger });
  app = t;
  const { workspaceId } = await t.seed.workspace();
  return {
    t,
    hook,
    logs,
    model,
    graph,
    workspaceId,
    async close() {
      await t.close();
      await Promise.all([model.close(), graph.close(), hook.close()]);
    },
  };
}

async function agentWithIntent(s: Setup, fields: Record<string, unknown> = {}) {
  const owner = await s.t.seed.member(s.workspaceId, "OWNER");
  const agent = await s.t.seed.agent(owner.client, { messageGroupingTime: "FAST", ...fields });
  const intent = await owner.client.post(`/api/agents/${agent.id}/intents`, {
    name: "Agendar",
    description: "marca uma visita",
    triggerOnTypes: ["TEXT"],
    requiredFields: [
      { name: "data", type: "string", description: "dia" },
      { name: "nome", type: "string", description: "nome do cliente" },
    ],
    webhookUrl: s.hook.url("/intent"),
  });
  assert.equal(intent.status, 201);
  const channel = await seedChannel(s.t.app, s.workspaceId, agent.id);
  const send = (content: string, type: "TEXT" | "AUDIO" = "TEXT") =>
    customerMessage(s.t.app, {
      workspaceId: s.workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content,
      type,
    });
  return { agent, send };
}

const handled = (s: Setup, messageId: string) =>
  waitUntil(
    () => s.t.app.deps.db.message.findUnique({ where: { id: messageId } }),
    (m) => m?.answeredAt !== null,
  );
const aiContents = async (s: Setup, conversationId: string) =>
  (await messagesOf(s.t.app, conversationId)).filter((m) => m.senderKind === "AI").map((m) => m.content);

Deno.test("an intent tag: intent.fired, then the POST with fields and context, the tag replaced by the answer's message", async () => {
  let firedWhenCalled = -1;
  const s = await setup(async (_body, t) => {
    // intent.fired is committed before the webhook of the intent is called.
    firedWhenCalled = await t.app.deps.db.domainEvent.count({ where: { type: "intent.fired" } });
    return Response.json({ message: "Visita marcada para 01/12." }, { status: 201 });
  });
  try {
    const { agent, send } = await agentWithIntent(s, { name: "Ana" });
    const m = await send("agendar");
    await handled(s, m.messageId);
    assert.deepEqual(await aiContents(s, m.conversationId), ["Certo! Visita marcada para 01/12. Até lá."]);
    assert.equal(s.hook.calls.length, 1);
    assert.equal(s.hook.calls[0].method, "POST");
    assert.deepEqual(JSON.parse(s.hook.calls[0].body), {
      intentName: "Agendar",
      fields: { data: "2026-12-01", nome: "Maria" },
      context: {
        agentId: agent.id,
        agentName: "Ana",
        conversationId: m.conversationId,
        contactName: "Maria Silva",
        contactId: m.contactId,
      },
    });
    const events = await eventsOf(s.t.app, m.conversationId);
    const fired = events.filter((e) => e.type === "intent.fired");
    assert.deepEqual(fired.map((e) => e.data), [{
      intentName: "Agendar",
      fields: { data: "2026-12-01", nome: "Maria" },
    }]);
    assert.equal(firedWhenCalled, 1);
  } finally {
    await s.close();
  }
});

Deno.test("a 2xx without a message removes the tag silently", async () => {
  const s = await setup(() => new Response(null, { status: 200 }));
  try {
    const { send } = await agentWithIntent(s);
    const m = await send("silencioso");
    await handled(s, m.messageId);
    assert.deepEqual(await aiContents(s, m.conversationId), ["Vou registrar."]);
    assert.equal(s.hook.calls.length, 1);
  } finally {
    await s.close();
  }
});

Deno.test("a missing required field: skipped with its log line, no webhook, the conversation continues", async () => {
  const s = await setup(() => Response.json({ message: "nunca" }));
  try {
    const { send } = await agentWithIntent(s);
    const m = await send("faltando");
    await handled(s, m.messageId);
    assert.deepEqual(await aiContents(s, m.conversationId), ["Vou tentar. Mais alguma coisa?"]);
    assert.equal(s.hook.calls.length, 0);
    const skipped = s.logs.lines.filter((l) => l.msg === "Skipping intent (missing required fields)");
    assert.equal(skipped.length, 1);
    assert.deepEqual(skipped[0].missing, ["nome"]);
    const events = await eventsOf(s.t.app, m.conversationId);
    assert.equal(events.filter((e) => e.type === "intent.fired").length, 0);
    const conv = await s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } });
    assert.equal(conv!.status, "OPEN");
  } finally {
    await s.close();
  }
});

Deno.test("a failing intent webhook (5xx) is logged and escalated: HUMAN, reason ESCALATION, nothing sent", async () => {
  const s = await setup(() => new Response("agenda fora do ar", { status: 500 }));
  try {
    const { send } = await agentWithIntent(s);
    const m = await send("falha");
    await handled(s, m.messageId);
    const conv = await s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } });
    assert.equal(conv!.status, "HUMAN");
    assert.equal(conv!.humanReason, "ESCALATION");
    assert.equal(conv!.transferSummary, "intent Agendar failed: HTTP 500: agenda fora do ar");
    assert.deepEqual(await aiContents(s, m.conversationId), []);
    const events = await eventsOf(s.t.app, m.conversationId);
    assert.deepEqual(events.filter((e) => e.type === "human.transferred").map((e) => e.data), [
      { transferSummary: "intent Agendar failed: HTTP 500: agenda fora do ar", reason: "ESCALATION" },
    ]);
    const logged = s.logs.lines.filter((l) =>
      l.level === "error" && l.msg.startsWith("intent webhook failed")
    );
    assert.equal(logged.length, 1);
    assert.equal(logged[0].httpStatus, 500);
  } finally {
    await s.close();
  }
});

Deno.test("an intent is only detected for message types in its triggerOnTypes", async () => {
  const s = await setup(() => Response.json({ message: "nunca" }));
  try {
    const { send } = await agentWithIntent(s);
    const m = await send("audio", "AUDIO");
    await handled(s, m.messageId);
    // Not an intent for an AUDIO window: the markup stays text, nothing is called or fired.
    assert.equal(s.hook.calls.length, 0);
    assert.deepEqual(await aiContents(s, m.conversationId), ['Ok <agendar data="2026-12-05" nome="Maria"/>']);
    // The model was not told about the intent either.
    assert.ok(!s.model.calls[0].body.messages[0].content.includes("<agendar"));
  } finally {
    await s.close();
  }
});

Deno.test("the transfer tag: the text is sent, the conversation goes HUMAN with human.transferred {transferSummary, reason TAG}", async () => {
  const s = await setup(() => Response.json({}));
  try {
    const { send } = await agentWithIntent(s);
    const m = await send("transferir");
    await handled(s, m.messageId);
    assert.deepEqual(await aiContents(s, m.conversationId), ["Vou chamar alguém."]);
    const conv = await s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } });
    assert.equal(conv!.status, "HUMAN");
    assert.equal(conv!.humanReason, "TAG");
    assert.equal(conv!.transferSummary, "cliente pediu um humano");
    const events = await eventsOf(s.t.app, m.conversationId);
    assert.deepEqual(events.filter((e) => e.type === "human.transferred").map((e) => e.data), [
      { transferSummary: "cliente pediu um humano", reason: "TAG" },
    ]);
  } finally {
    await s.close();
  }
});

Deno.test("the transfer tag with enabledHumanTransfer off is removed and the conversation stays OPEN", async () => {
  const s = await setup(() => Response.json({}));
  try {
    const { send } = await agentWithIntent(s, { enabledHumanTransfer: false });
    const m = await send("transferir");
    await handled(s, m.messageId);
    assert.deepEqual(await aiContents(s, m.conversationId), ["Vou chamar alguém."]);
    const conv = await s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } });
    assert.equal(conv!.status, "OPEN");
  } finally {
    await s.close();
  }
});

Deno.test("an intent webhook that drops the connection is HTTP 0: logged and escalated", async () => {
  const s = await setup("drop");
  try {
    const { send } = await agentWithIntent(s);
    const m = await send("falha");
    await handled(s, m.messageId);
    const conv = await s.t.app.deps.db.conversation.findUnique({ where: { id: m.conversationId } });
    assert.equal(conv!.status, "HUMAN");
    assert.equal(conv!.humanReason, "ESCALATION");
    const logged = s.logs.lines.filter((l) =>
      l.level === "error" && l.msg.startsWith("intent webhook failed")
    );
    assert.equal(logged.length, 1);
    assert.equal(logged[0].httpStatus, 0);
    assert.equal(s.hook.calls.length, 1);
  } finally {
    await s.close();
  }
});
