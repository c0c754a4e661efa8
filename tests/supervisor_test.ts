/**
 * The supervisor chat against a scripted OpenAI-compatible server on
 * 127.0.0.1: the conversation, the seven inspection tools, the bounded loop, the 30-message window,
 * reset, credits to the exact formula, the daily credit read, and the model's failures.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { assertProblem } from "./_helpers/problem.ts";
import {
  customerMessage,
  type ModelAnswer,
  type ModelCall,
  seedChannel,
  startModelServer,
} from "./_helpers/conversations.ts";
import { toolResults } from "./_helpers/supervisor_model.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { gqlOk } from "./_helpers/roles.ts";

/** An app whose model is `script` (any OpenAI-compatible endpoint), a workspace and its OWNER and MANAGER. */
async function setup(
  script: (call: ModelCall, index: number) => ModelAnswer,
  env: Record<string, string> = {},
  clock?: ManualClock,
) {
  const model = startModelServer(script);
  const ta = await startTestApp(
    { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseUrl, ...env },
    clock ? { clock } : {},
  );
  const { workspaceId, owner } = await ta.seed.workspace("Acme");
  const manager = await ta.seed.member(workspaceId, "MANAGER");
  return {
    ta,
    model,
    workspaceId,
    owner,
    manager,
    async close() {
      await ta.close();
      await model.close();
    },
  };
}

const answer = (content: string): ModelAnswer => ({ content });

Deno.test("the conversation: one per workspace, created once under concurrent first reads, shared by OWNER and MANAGER", async () => {
  const s = await setup(() => answer("Hello."));
  try {
    const reads = await Promise.all(
      Array.from(
        { length: 6 },
        (_, i) => (i % 2 ? s.owner.client : s.manager.client).get("/api/supervisor/conversation"),
      ),
    );
    for (const r of reads) assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(new Set(reads.map((r) => r.body.id)).size, 1);
    assert.equal(await s.ta.app.deps.db.supervisorConversation.count(), 1);
    assert.deepEqual(reads[0].body.messages, []);

    const sent = await s.manager.client.post("/api/supervisor/chat", { message: "Hi" });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.equal(sent.body.reply.role, "ASSISTANT");
    assert.equal(sent.body.reply.content, "Hello.");
    assert.deepEqual(sent.body.approvals, []);
    const seen = await s.owner.client.get("/api/supervisor/conversation");
    assert.deepEqual(seen.body.messages.map((m: { role: string; content: string }) => [m.role, m.content]), [
      ["USER", "Hi"],
      ["ASSISTANT", "Hello."],
    ]);
    assert.equal(seen.body.messages[0].authorUserId, s.manager.userId);
    // The model got the system prompt and the question.
    const call = s.model.calls[0].body;
    assert.equal(call.messages[0].role, "system");
    assert.match(call.messages[0].content, /approv/);
    assert.deepEqual(call.messages.slice(1), [{ role: "user", content: "Hi" }]);
    assert.deepEqual(
      call.tools.map((t: { function: { name: string } }) => t.function.name),
      [
        "list_agents",
        "get_agent",
        "find_agent_by_name",
        "list_intents",
        "list_webhooks",
        "list_recent_conversations",
        "get_conversation_messages",
        "propose_change",
      ],
    );

    // Bad input: 400, nothing stored.
    assertProblem(
      await s.owner.client.post("/api/supervisor/chat", { message: "" }),
      400,
      "VALIDATION_FAILED",
      ["message"],
    );
    assertProblem(await s.owner.client.post("/api/supervisor/chat", { text: "x" }), 400, "VALIDATION_FAILED");
    assert.equal(await s.ta.app.deps.db.supervisorMessage.count(), 2);
  } finally {
    await s.close();
  }
});

Deno.test("concurrent first messages share the one conversation", async () => {
  const s = await setup(() => answer("ok"));
  try {
    const sent = await Promise.all(
      Array.from(
        { length: 5 },
        (_, i) =>
          (i % 2 ? s.owner.client : s.manager.client).post("/api/supervisor/chat", { message: `m${i}` }),
      ),
    );
    for (const r of sent) assert.equal(r.status, 200, JSON.stringify(r.body));
    const db = s.ta.app.deps.db;
    assert.equal(await db.supervisorConversation.count(), 1);
    assert.equal(await db.supervisorMessage.count({ where: { role: "USER" } }), 5);
    assert.equal(await db.supervisorMessage.count({ where: { role: "ASSISTANT", content: "ok" } }), 5);
  } finally {
    await s.close();
  }
});

Deno.test("the seven inspection tools run with the caller's workspace and their results reach the model", async () => {
  let ids: Record<string, string> = {};
  const s = await setup((_call, index) =>
    index === 0
      ? {
        content: "",
        toolCalls: [
          { id: "a", name: "list_agents", arguments: {} },
          { id: "b", name: "get_agent", arguments: { agentId: ids.agentId } },
          { id: "c", name: "find_agent_by_name", arguments: { name: "bruNO" } },
          { id: "d", name: "list_intents", arguments: { agentId: ids.agentId } },
          { id: "e", name: "list_webhooks", arguments: { agentId: ids.agentId } },
          { id: "f", name: "list_recent_conversations", arguments: { limit: 2 } },
          {
            id: "g",
            name: "get_conversation_messages",
            arguments: { conversationId: ids.conversationId, limit: 2 },
          },
          {
            id: "h",
            name: "list_recent_conversations",
            arguments: { agentId: ids.otherAgentId, status: "OPEN" },
          },
        ],
      }
      : answer("Done looking.")
  );
  try {
    const o = s.owner.client;
    const ana = await s.ta.seed.agent(o, { name: "Ana", trainingContext: "Be kind." });
    const bruno = await s.ta.seed.agent(o, { name: "Bruno" });
    await o.post(`/api/agents/${ana.id}/intents`, {
      name: "Book visit",
      description: "d",
      triggerOnTypes: ["TEXT"],
      requiredFields: [],
      webhookUrl: "https://example.com/i",
    });
    await o.post(`/api/agents/${ana.id}/webhooks`, {
      event: "message.sent",
      url: "https://example.com/w",
      headers: { "X-Api-Key": "very-secret-value" },
    });
    const channel = await seedChannel(s.ta.app, s.workspaceId, ana.id);
    const conv = await customerMessage(s.ta.app, {
      workspaceId: s.workspaceId,
      agentId: ana.id,
      channelId: channel.id,
      content: "one",
    });
    await customerMessage(s.ta.app, {
      workspaceId: s.workspaceId,
      agentId: ana.id,
      channelId: channel.id,
      content: "two",
    });
    await customerMessage(s.ta.app, {
      workspaceId: s.workspaceId,
      agentId: ana.id,
      channelId: channel.id,
      content: "three",
    });
    const channel2 = await seedChannel(s.ta.app, s.workspaceId, bruno.id);
    const conv2 = await customerMessage(s.ta.app, {
      workspaceId: s.workspaceId,
      agentId: bruno.id,
      channelId: channel2.id,
      contact: { externalId: "5511000000001", name: "João" },
      content: "oi",
    });
    // Another workspace's agent never shows.
    const other = await s.ta.seed.workspace("Other");
    await s.ta.seed.agent(other.owner.client, { name: "Bruno Other" });
    ids = { agentId: ana.id, conversationId: conv.conversationId, otherAgentId: bruno.id };

    const res = await s.manager.client.post("/api/supervisor/chat", { message: "Look around" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.reply.content, "Done looking.");
    assert.equal(s.model.calls.length, 2);
    const r = toolResults(s.model.calls[1]);
    assert.deepEqual(r.get("a").map((x: { name: string }) => x.name), ["Ana", "Bruno"]);
    assert.equal(r.get("b").id, ana.id);
    assert.equal(r.get("b").trainingContext, "Be kind.");
    assert.equal(typeof r.get("b").systemPrompt, "string");
    assert.deepEqual(r.get("c").map((x: { id: string }) => x.id), [bruno.id]);
    assert.deepEqual(r.get("d").map((x: { name: string }) => x.name), ["Book visit"]);
    assert.equal(r.get("e").length, 1);
    // Header values never go to the model's provider, even for a MANAGER.
    assert.ok(!JSON.stringify(s.model.calls[1].body).includes("very-secret-value"));
    assert.deepEqual(Object.keys(r.get("e")[0].headers), ["X-Api-Key"]);
    // The workspace's two conversations, newest first.
    assert.deepEqual(r.get("f").map((x: { id: string }) => x.id), [
      conv2.conversationId,
      conv.conversationId,
    ]);
    // The last two messages of the conversation, oldest first.
    assert.deepEqual(r.get("g").map((x: { content: string }) => x.content), ["two", "three"]);
    assert.deepEqual(r.get("h").map((x: { id: string }) => x.id), [conv2.conversationId]);
    // The assistant message keeps what it did.
    const stored = await s.ta.app.deps.db.supervisorMessage.findFirstOrThrow({
      where: { role: "ASSISTANT" },
    });
    assert.deepEqual((stored.toolCalls as { name: string }[]).map((c) => c.name), [
      "list_agents",
      "get_agent",
      "find_agent_by_name",
      "list_intents",
      "list_webhooks",
      "list_recent_conversations",
      "get_conversation_messages",
      "list_recent_conversations",
    ]);
  } finally {
    await s.close();
  }
});

Deno.test("tool errors go back to the model: unknown tool, bad JSON, invalid arguments, another workspace's agent", async () => {
  let foreign = "";
  const s = await setup((_call, index) =>
    index === 0
      ? {
        content: "",
        toolCalls: [
          { id: "u", name: "drop_database", arguments: {} },
          { id: "j", name: "get_agent", arguments: "{not json" },
          { id: "v", name: "list_recent_conversations", arguments: { limit: 1000 } },
          { id: "x", name: "get_agent", arguments: { agentId: foreign } },
          { id: "y", name: "list_intents", arguments: { agentId: foreign, extra: 1 } },
          { id: "z", name: "list_webhooks", arguments: { agentId: foreign } },
        ],
      }
      : answer("Sorry.")
  );
  try {
    const other = await s.ta.seed.workspace("Other");
    foreign = (await s.ta.seed.agent(other.owner.client, { name: "Theirs" })).id;
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Do things" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const r = toolResults(s.model.calls[1]);
    assert.match(r.get("u").error, /Unknown tool "drop_database"/);
    assert.match(r.get("j").error, /not valid JSON/);
    assert.match(r.get("v").error, /limit/);
    assert.equal(r.get("x").error, "Agent not found.");
    assert.match(r.get("y").error, /extra/);
    assert.equal(r.get("z").error, "Agent not found.");
    for (const v of r.values()) assert.deepEqual(Object.keys(v), ["error"]);
  } finally {
    await s.close();
  }
});

Deno.test("the loop is bounded: a model that keeps calling tools gets 8 calls, the last without tools", async () => {
  const s = await setup(() => ({ content: "", toolCalls: [{ name: "list_agents", arguments: {} }] }));
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Loop" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(s.model.calls.length, 8);
    assert.deepEqual(s.model.calls.map((c) => c.body.tool_choice), [...Array(7).fill("auto"), "none"]);
    // Seven rounds of tool calls ran; the eighth call's are not run.
    assert.equal((res.body.reply.toolCalls as unknown[]).length, 7);
    assert.equal(res.body.reply.content, "(no answer)");
    // Every call's usage is counted: 8 x (120 prompt, 30 completion).
    assert.equal(res.body.reply.inputTokens, 960);
    assert.equal(res.body.reply.outputTokens, 240);
  } finally {
    await s.close();
  }
});

Deno.test("at most 16 tool calls of one answer run; the others are answered with an error", async () => {
  const s = await setup((_call, index) =>
    index === 0
      ? {
        content: "",
        toolCalls: Array.from(
          { length: 20 },
          (_, i) => ({ id: `c${i}`, name: "list_agents", arguments: {} }),
        ),
      }
      : answer("ok")
  );
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Flood" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const r = toolResults(s.model.calls[1]);
    assert.equal(r.size, 20);
    for (let i = 0; i < 20; i++) {
      if (i < 16) assert.ok(Array.isArray(r.get(`c${i}`)), `c${i}`);
      else assert.match(r.get(`c${i}`).error, /At most 16 tool calls per answer/);
    }
  } finally {
    await s.close();
  }
});

Deno.test("only the last 30 messages go to the model; older ones stay stored", async () => {
  const s = await setup(() => answer("ok"));
  try {
    const db = s.ta.app.deps.db;
    const id = (await s.owner.client.get("/api/supervisor/conversation")).body.id;
    const base = Date.now() - 3_600_000;
    await db.supervisorMessage.createMany({
      data: Array.from({ length: 40 }, (_, i) => ({
        conversationId: id,
        role: i % 2 ? "ASSISTANT" as const : "USER" as const,
        content: `m${i}`,
        createdAt: new Date(base + i * 1000),
      })),
    });
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "new" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const sent = s.model.calls[0].body.messages;
    assert.equal(sent.length, 31); // the system prompt and exactly 30 stored messages
    assert.equal(sent[0].role, "system");
    assert.deepEqual(
      sent.slice(1).map((m: { content: string }) => m.content),
      [...Array.from({ length: 29 }, (_, i) => `m${i + 11}`), "new"],
    );
    assert.deepEqual(sent.slice(1, 3).map((m: { role: string }) => m.role), ["assistant", "user"]);
    assert.equal(await db.supervisorMessage.count(), 42);
    assert.equal((await s.owner.client.get("/api/supervisor/conversation")).body.messages.length, 42);
  } finally {
    await s.close();
  }
});

Deno.test("reset erases the history, keeps the conversation and the day's credit use", async () => {
  const s = await setup(() => answer("ok"));
  try {
    const before = (await s.owner.client.get("/api/supervisor/conversation")).body.id;
    await s.owner.client.post("/api/supervisor/chat", { message: "one" });
    const del = await s.manager.client.delete("/api/supervisor/conversation");
    assert.equal(del.status, 204);
    const after = await s.owner.client.get("/api/supervisor/conversation");
    assert.equal(after.body.id, before);
    assert.deepEqual(after.body.messages, []);
    assert.equal(await s.ta.app.deps.db.supervisorMessage.count(), 0);
    const credits = await s.owner.client.get("/api/supervisor/credits?days=1");
    assert.equal(credits.body.data[0].messages, 1);
    // The next turn starts from nothing.
    await s.owner.client.post("/api/supervisor/chat", { message: "two" });
    assert.deepEqual(s.model.calls[1].body.messages.slice(1), [{ role: "user", content: "two" }]);
    // Twice is fine.
    assert.equal((await s.owner.client.delete("/api/supervisor/conversation")).status, 204);
    assert.equal((await s.owner.client.delete("/api/supervisor/conversation")).status, 204);
  } finally {
    await s.close();
  }
});

Deno.test("credits follow the price formula to the exact number, cached input counted as cache reads", async () => {
  const clock = new ManualClock(new Date("2026-11-20T23:59:00.000Z"));
  const s = await setup(
    // Each turn: a tool call, then the answer.
    (call) =>
      call.body.messages.at(-1).role === "user"
        ? {
          content: "",
          toolCalls: [{ name: "list_agents", arguments: {} }],
          usage: {
            prompt_tokens: 1200,
            completion_tokens: 40,
            prompt_tokens_details: { cached_tokens: 1000 },
          },
        }
        : {
          content: "There are no agents.",
          usage: {
            prompt_tokens: 1500,
            completion_tokens: 60,
            prompt_tokens_details: { cached_tokens: 1100, cache_write_tokens: 300 },
          },
        },
    {},
    clock,
  );
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "How many agents?" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const reply = res.body.reply;
    // input = (1200 - 1000) + (1500 - 1100 - 300) = 300; output 100; cache write 300; cache read 2100.
    assert.equal(reply.inputTokens, 300);
    assert.equal(reply.outputTokens, 100);
    assert.equal(reply.cacheWriteTokens, 300);
    assert.equal(reply.cacheReadTokens, 2100);
    // usd = (300 x 3 + 100 x 15 + 300 x 3.75 + 2100 x 0.30) / 1e6 = 0.004155; x 5 x 3 / 0.10 = 0.62325
    assert.equal(reply.credits, 0.62325);
    // Stored the same, and the day's use (UTC) counts it.
    const stored = await s.ta.app.deps.db.supervisorMessage.findUniqueOrThrow({ where: { id: reply.id } });
    assert.equal(stored.credits, 0.62325);

    clock.advance(2 * 60_000); // the next UTC day
    const res2 = await s.owner.client.post("/api/supervisor/chat", { message: "And now?" });
    assert.equal(res2.body.reply.credits, 0.62325);
    clock.advance(60_000);
    await s.owner.client.post("/api/supervisor/chat", { message: "Again?" });

    const days = await s.manager.client.get("/api/supervisor/credits?days=3");
    assert.equal(days.status, 200, JSON.stringify(days.body));
    assert.deepEqual(days.body.data, [
      {
        day: "2026-11-19",
        credits: 0,
        messages: 0,
        inputTokens: 0,
        outputTokens: 0,
        cacheWriteTokens: 0,
        cacheReadTokens: 0,
      },
      {
        day: "2026-11-20",
        credits: 0.62325,
        messages: 1,
        inputTokens: 300,
        outputTokens: 100,
        cacheWriteTokens: 300,
        cacheReadTokens: 2100,
      },
      {
        day: "2026-11-21",
        credits: 1.2465,
        messages: 2,
        inputTokens: 600,
        outputTokens: 200,
        cacheWriteTokens: 600,
        cacheReadTokens: 4200,
      },
    ]);
    assert.equal((await s.owner.client.get("/api/supervisor/credits")).body.data.length, 30);
    assertProblem(await s.owner.client.get("/api/supervisor/credits?days=0"), 400, "VALIDATION_FAILED", [
      "days",
    ]);
    assertProblem(await s.owner.client.get("/api/supervisor/credits?days=abc"), 400, "VALIDATION_FAILED", [
      "days",
    ]);

    const g = gqlOk(
      await s.owner.client.graphql(
        "{ supervisorCredits(input: { days: 2 }) { day credits messages cacheReadTokens } }",
      ),
    );
    assert.deepEqual(g.supervisorCredits, [
      { day: "2026-11-20", credits: 0.62325, messages: 1, cacheReadTokens: 2100 },
      { day: "2026-11-21", credits: 1.2465, messages: 2, cacheReadTokens: 4200 },
    ]);
  } finally {
    await s.close();
  }
});

Deno.test("prices are operator settings", async () => {
  const s = await setup(() => ({ content: "ok", usage: { prompt_tokens: 1000, completion_tokens: 1000 } }), {
    SUPERVISOR_PRICE_INPUT: "1",
    SUPERVISOR_PRICE_OUTPUT: "2",
    CREDITS_EXCHANGE_RATE: "1",
    CREDITS_MARKUP: "1",
    CREDIT_UNIT_PRICE: "0.01",
  });
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "x" });
    // usd = (1000 x 1 + 1000 x 2) / 1e6 = 0.003; credits = 0.003 / 0.01 = 0.3
    assert.equal(res.body.reply.credits, 0.3);
  } finally {
    await s.close();
  }
});

Deno.test("no key: 503 SUPERVISOR_MODEL_UNAVAILABLE, the message stays stored", async () => {
  const ta = await startTestApp();
  try {
    const { owner } = await ta.seed.workspace();
    const res = await owner.client.post("/api/supervisor/chat", { message: "Anyone there?" });
    assertProblem(res, 503, "SUPERVISOR_MODEL_UNAVAILABLE");
    const conv = await owner.client.get("/api/supervisor/conversation");
    assert.deepEqual(conv.body.messages.map((m: { role: string; content: string }) => [m.role, m.content]), [
      ["USER", "Anyone there?"],
    ]);
    const g = await owner.client.graphql(
      'mutation { sendSupervisorMessage(input: { message: "Hello?" }) { reply { id } } }',
    );
    assert.equal(g.body.errors[0].extensions.code, "SUPERVISOR_MODEL_UNAVAILABLE");
    assert.equal(await ta.app.deps.db.supervisorMessage.count(), 2);
  } finally {
    await ta.close();
  }
});

Deno.test("a model failure or timeout: 502 SUPERVISOR_MODEL_ERROR, the message stays stored", async () => {
  const s = await setup(
    (_call, index) =>
      index === 0 ? new Response("boom", { status: 500 }) : index === 1 ? "hang" : answer("late"),
    { LLM_TIMEOUT_MS: "300" },
  );
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "First" });
    assertProblem(res, 502, "SUPERVISOR_MODEL_ERROR");
    const res2 = await s.owner.client.post("/api/supervisor/chat", { message: "Second" });
    assertProblem(res2, 502, "SUPERVISOR_MODEL_ERROR");
    assert.match(res2.body.detail, /in time/);
    const conv = await s.owner.client.get("/api/supervisor/conversation");
    assert.deepEqual(conv.body.messages.map((m: { content: string }) => m.content), ["First", "Second"]);
    assert.equal(s.model.calls.length, 2); // no hidden retries
  } finally {
    await s.close();
  }
});

Deno.test("GraphQL: a turn's approvals are Approval rows, as REST shows them, and its reply's approvals the same", async () => {
  let agentId = "";
  const s = await setup((_call, index) =>
    index === 0
      ? {
        content: "",
        toolCalls: [{
          id: "p1",
          name: "propose_change",
          arguments: {
            tool: "update_agent_prompt",
            target: { agentId },
            change: { systemPrompt: "Be formal." },
            rationale: "Asked for a formal tone.",
          },
        }],
      }
      : answer("Proposed.")
  );
  try {
    agentId = (await s.ta.seed.agent(s.owner.client, { name: "Ana" })).id;
    const sent = gqlOk(
      await s.manager.client.graphql(
        'mutation { sendSupervisorMessage(input: { message: "Formal, please" }) { ' +
          "reply { content approvals { id proposedBy } } " +
          "approvals { id tool targetType targetId agentId after rationale status proposedBy decidedBy expiresAt } } }",
      ),
    ).sendSupervisorMessage;
    assert.equal(sent.reply.content, "Proposed.");
    assert.equal(sent.approvals.length, 1);
    const [approval] = sent.approvals;
    assert.equal(approval.proposedBy, s.manager.userId);
    assert.equal(approval.decidedBy, null);
    const rest = await s.manager.client.get(`/api/approvals/${approval.id}`);
    assert.equal(rest.status, 200, JSON.stringify(rest.body));
    for (const key of Object.keys(approval)) assert.deepEqual(approval[key], rest.body[key], key);
    assert.deepEqual(sent.reply.approvals, [{ id: approval.id, proposedBy: s.manager.userId }]);
  } finally {
    await s.close();
  }
});

Deno.test("GraphQL: the conversation, a message with its reply, and a reset", async () => {
  const s = await setup(() => answer("Hi from GraphQL."));
  try {
    const c = s.manager.client;
    const sent = gqlOk(
      await c.graphql(
        'mutation { sendSupervisorMessage(input: { message: "Hello" }) { reply { id role content credits inputTokens outputTokens cacheReadTokens cacheWriteTokens } approvals { id } } }',
      ),
    );
    assert.equal(sent.sendSupervisorMessage.reply.role, "ASSISTANT");
    assert.equal(sent.sendSupervisorMessage.reply.content, "Hi from GraphQL.");
    assert.equal(sent.sendSupervisorMessage.reply.inputTokens, 120);
    assert.deepEqual(sent.sendSupervisorMessage.approvals, []);
    const conv = gqlOk(
      await c.graphql("{ supervisorConversation { id messages { role content credits } } }"),
    );
    assert.deepEqual(conv.supervisorConversation.messages.map((m: { role: string }) => m.role), [
      "USER",
      "ASSISTANT",
    ]);
    const rest = await c.get("/api/supervisor/conversation");
    assert.equal(conv.supervisorConversation.id, rest.body.id);
    assert.equal(conv.supervisorConversation.messages[1].credits, rest.body.messages[1].credits);
    gqlOk(await c.graphql("mutation { resetSupervisorConversation }"));
    const after = gqlOk(await c.graphql("{ supervisorConversation { messages { id } } }"));
    assert.deepEqual(after.supervisorConversation.messages, []);
  } finally {
    await s.close();
  }
});
