/**
 * The model is untrusted input (src/supervisor/turn.ts, tools.ts, store.ts, credits.ts): NUL
 * characters in tool names or arguments, arguments nested 10 000 deep, token counts of 10^18 and a
 * 10 MB answer each end in a 200 with a stored, non-empty answer; what PostgreSQL cannot store is
 * replaced, tool calls that cannot be taken are answered to the model as tool errors, token counts
 * are clamped (with a warning) and the answer is cut to MAX_ANSWER_CHARS.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { type ModelAnswer, type ModelCall, startModelServer } from "./_helpers/conversations.ts";
import { toolResults } from "./_helpers/supervisor_model.ts";
import { logSink } from "./_helpers/logs.ts";
import {
  MAX_ANSWER_CHARS,
  MAX_ARGUMENT_DEPTH,
  MAX_TRACE_CHARS,
  TRUNCATED_MARKER,
} from "../src/supervisor/turn.ts";
import { MAX_TOKENS_PER_CALL } from "../src/supervisor/credits.ts";

async function setup(script: (call: ModelCall, index: number) => ModelAnswer) {
  const model = startModelServer(script);
  const logs = logSink();
  const ta = await startTestApp({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseUrl }, {
    logger: logs.logger,
  });
  const { workspaceId, owner } = await ta.seed.workspace("Acme");
  return {
    ta,
    model,
    logs,
    workspaceId,
    owner,
    /** The stored conversation as [role, content] pairs. */
    async conversation(): Promise<Array<[string, string]>> {
      const res = await owner.client.get("/api/supervisor/conversation");
      assert.equal(res.status, 200);
      return res.body.messages.map((m: { role: string; content: string }) => [m.role, m.content]);
    },
    async close() {
      await ta.close();
      await model.close();
    },
  };
}

/** One round of tool calls, then `last`. */
const toolsThen =
  (toolCalls: ModelAnswer & object, last = "Done."): (c: ModelCall, i: number) => ModelAnswer =>
  (
    _call,
    index,
  ) => index === 0 ? toolCalls : { content: last };

Deno.test("a NUL in a tool name: the call is answered as an unknown tool, the turn answers 200", async () => {
  const s = await setup(toolsThen({
    content: "",
    toolCalls: [{ id: "n", name: "list_agents\u0000", arguments: {} }],
  }));
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "List agents" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.reply.content, "Done.");
    const result = toolResults(s.model.calls[1]).get("n");
    assert.match(result.error, /^Unknown tool "list_agents\uFFFD"/);
    assert.deepEqual(res.body.reply.toolCalls, [
      { id: "n", name: "list_agents\uFFFD", arguments: {}, error: result.error },
    ]);
    assert.deepEqual(await s.conversation(), [["USER", "List agents"], ["ASSISTANT", "Done."]]);
  } finally {
    await s.close();
  }
});

Deno.test("a NUL in arguments (escaped or raw) and in the answer: replaced, answered as tool errors, stored", async () => {
  const s = await setup(toolsThen(
    {
      content: "",
      toolCalls: [
        { id: "escaped", name: "get_agent", arguments: { agentId: "a\u0000b" } },
        { id: "key", name: "list_agents", arguments: { "x\u0000": 1 } },
        { id: "raw", name: "get_agent", arguments: '{"agentId": "a\u0000b"}' },
        {
          id: "propose",
          name: "propose_change",
          arguments: {
            tool: "toggle_agent_active",
            target: { agentId: "nope\u0000" },
            change: { status: "PAUSED" },
            rationale: "Because\u0000 of NUL",
          },
        },
      ],
    },
    "Done\u0000 here.",
  ));
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Look" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.reply.content, "Done\uFFFD here.");
    const r = toolResults(s.model.calls[1]);
    assert.equal(r.get("escaped").error, "Agent not found.");
    assert.match(r.get("key").error, /x\uFFFD/);
    assert.equal(r.get("raw").error, "The arguments are not valid JSON.");
    assert.equal(r.get("propose").error, "Agent not found.");
    const trace = res.body.reply.toolCalls as Array<{ id: string; arguments: unknown; error?: string }>;
    assert.deepEqual(trace.map((t) => t.id), ["escaped", "key", "raw", "propose"]);
    assert.deepEqual(trace[0].arguments, { agentId: "a\uFFFDb" });
    assert.deepEqual(trace[1].arguments, { "x\uFFFD": 1 });
    assert.equal(trace[2].arguments, '{"agentId": "a\uFFFDb"}');
    assert.equal((trace[3].arguments as { rationale: string }).rationale, "Because\uFFFD of NUL");
    for (const t of trace) assert.ok(t.error, t.id);
    assert.equal(await s.ta.app.deps.db.pendingApproval.count(), 0);
    assert.deepEqual(await s.conversation(), [["USER", "Look"], ["ASSISTANT", "Done\uFFFD here."]]);
  } finally {
    await s.close();
  }
});

Deno.test("arguments nested 10 000 deep are refused before parsing, as a tool error", async () => {
  const deep = "[".repeat(10_000) + "]".repeat(10_000);
  const deepObject = '{"a":'.repeat(10_000) + "1" + "}".repeat(10_000);
  const s = await setup(toolsThen({
    content: "",
    toolCalls: [
      { id: "array", name: "get_agent", arguments: deep },
      {
        id: "propose",
        name: "propose_change",
        arguments:
          `{"tool":"update_agent_prompt","target":{"agentId":"x"},"change":${deepObject},"rationale":"deep"}`,
      },
    ],
  }));
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Deep" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const r = toolResults(s.model.calls[1]);
    const refusal = `The arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels.`;
    assert.equal(r.get("array").error, refusal);
    assert.equal(r.get("propose").error, refusal);
    // What the model is shown of its own call, and what is kept of it, are bounded too.
    const echoed = s.model.calls[1].body.messages.find((m: { role: string }) => m.role === "assistant");
    for (const call of echoed.tool_calls) assert.equal(call.function.arguments, "{}");
    for (const t of res.body.reply.toolCalls) {
      assert.equal(t.error, refusal);
      assert.ok(typeof t.arguments === "string" && t.arguments.length <= 1_000, t.id);
    }
    assert.deepEqual(await s.conversation(), [["USER", "Deep"], ["ASSISTANT", "Done."]]);
  } finally {
    await s.close();
  }
});

Deno.test("token counts of 10^18 are clamped with a warning: credits stay finite, the answer is stored", async () => {
  const huge = 10 ** 18;
  const s = await setup(() => ({
    content: "Counted.",
    usage: { prompt_tokens: huge, completion_tokens: huge, prompt_tokens_details: { cached_tokens: huge } },
  }));
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Count" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const reply = res.body.reply;
    // prompt and cached clamped alike: no uncached input; output and cache reads at the clamp.
    assert.equal(reply.inputTokens, 0);
    assert.equal(reply.outputTokens, MAX_TOKENS_PER_CALL);
    assert.equal(reply.cacheReadTokens, MAX_TOKENS_PER_CALL);
    // usd = (1e7 x 15 + 1e7 x 0.30) / 1e6 = 153; x 5 x 3 / 0.10 = 22 950
    assert.equal(reply.credits, 22_950);
    await s.logs.waitFor((l) => l.level === "warn" && l.msg === "model token count out of range");
    // Twice more: the day's sums stay within their columns too.
    for (const _ of [1, 2]) {
      assert.equal((await s.owner.client.post("/api/supervisor/chat", { message: "Again" })).status, 200);
    }
    const days = await s.owner.client.get("/api/supervisor/credits?days=1");
    assert.equal(days.status, 200, JSON.stringify(days.body));
    assert.equal(days.body.data[0].messages, 3);
    assert.equal(days.body.data[0].outputTokens, 3 * MAX_TOKENS_PER_CALL);
    assert.equal(days.body.data[0].credits, 3 * 22_950);
  } finally {
    await s.close();
  }
});

Deno.test("a 10 MB answer is cut to MAX_ANSWER_CHARS with a marker before it is stored or sent back", async () => {
  const big = "y".repeat(10 * 1024 * 1024);
  const s = await setup((_call, index) => ({ content: index === 0 ? big : "Short." }));
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Talk a lot" });
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    const cut = "y".repeat(MAX_ANSWER_CHARS) + TRUNCATED_MARKER;
    assert.equal(res.body.reply.content, cut);
    const stored = await s.ta.app.deps.db.supervisorMessage.findUniqueOrThrow({
      where: { id: res.body.reply.id },
    });
    assert.equal(stored.content, cut);
    // The next turn sends the cut answer back, not the 10 MB.
    const res2 = await s.owner.client.post("/api/supervisor/chat", { message: "And?" });
    assert.equal(res2.status, 200);
    const history = s.model.calls[1].body.messages.map((m: { role: string; content: string }) => [
      m.role,
      m.content,
    ]);
    assert.deepEqual(history.slice(1), [["user", "Talk a lot"], ["assistant", cut], ["user", "And?"]]);
  } finally {
    await s.close();
  }
});

Deno.test("an answer that cannot be written leaves no empty assistant message: the person's message stays", async () => {
  const s = await setup(() => ({ content: "Fine." }));
  try {
    // A real failure of the settling statement: the day's row refuses every write.
    await s.ta.app.deps.db.$executeRawUnsafe(`
      CREATE FUNCTION refuse_credit_day() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'credit day refused'; END $$`);
    await s.ta.app.deps.db.$executeRawUnsafe(`
      CREATE TRIGGER refuse_credit_day BEFORE INSERT OR UPDATE ON "SupervisorCreditDay"
        FOR EACH ROW EXECUTE FUNCTION refuse_credit_day()`);
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Hello" });
    assert.equal(res.status, 500);
    assert.equal(res.body.code, "INTERNAL");
    const rows = await s.ta.app.deps.db.supervisorMessage.findMany({ select: { role: true, content: true } });
    assert.deepEqual(rows, [{ role: "USER", content: "Hello" }]);
  } finally {
    await s.close();
  }
});

Deno.test("fields of the wrong type (content, tool call id, name, arguments) are taken as text, never a 500", async () => {
  const s = await setup((call, index) =>
    index === 0
      ? Response.json({
        id: "chatcmpl-odd",
        object: "chat.completion",
        created: 1,
        model: call.body.model,
        choices: [{
          index: 0,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: 42,
            tool_calls: [
              { type: "function", function: { name: "list_agents", arguments: {} } },
              { id: 7, type: "function", function: { name: ["get_agent"], arguments: { agentId: "x" } } },
            ],
          },
        }],
        usage: { prompt_tokens: "many", completion_tokens: -5 },
      })
      : { content: "Done." }
  );
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Odd" });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.reply.content, "Done.");
    const echoed = s.model.calls[1].body.messages.find((m: { role: string }) => m.role === "assistant");
    const ids = echoed.tool_calls.map((c: { id: string }) => c.id);
    assert.equal(ids.length, 2);
    for (const id of ids) assert.equal(typeof id, "string");
    assert.notEqual(ids[0], ids[1]);
    // An object as arguments is taken as its JSON text; a name that is not a string is no tool.
    assert.deepEqual(
      echoed.tool_calls.map((c: { function: { arguments: string } }) => c.function.arguments),
      [
        "{}",
        '{"agentId":"x"}',
      ],
    );
    const r = toolResults(s.model.calls[1]);
    assert.ok(Array.isArray(r.get(ids[0])));
    assert.match(r.get(ids[1]).error, /^Unknown tool ""/);
    assert.deepEqual(await s.conversation(), [["USER", "Odd"], ["ASSISTANT", "Done."]]);
  } finally {
    await s.close();
  }
});

Deno.test("the stored trace of tool calls is bounded: past MAX_TRACE_CHARS each call's arguments are cut", async () => {
  const rationale = "r".repeat(100_000);
  const s = await setup(toolsThen({
    content: "",
    toolCalls: Array.from({ length: 20 }, (_, i) => ({
      id: `c${i}`,
      name: "propose_change",
      arguments: { tool: "toggle_agent_active", target: { agentId: "nope" }, change: {}, rationale },
    })),
  }));
  try {
    const res = await s.owner.client.post("/api/supervisor/chat", { message: "Many" });
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    const stored = await s.ta.app.deps.db.supervisorMessage.findUniqueOrThrow({
      where: { id: res.body.reply.id },
    });
    const trace = stored.toolCalls as Array<{ id: string; arguments: unknown; error?: string }>;
    assert.deepEqual(trace.map((t) => t.id), Array.from({ length: 20 }, (_, i) => `c${i}`));
    assert.ok(JSON.stringify(trace).length <= MAX_TRACE_CHARS, `${JSON.stringify(trace).length}`);
    for (const t of trace) {
      assert.equal(typeof t.arguments, "string");
      assert.ok((t.arguments as string).startsWith('{"tool":"toggle_agent_active"'));
      assert.equal((t.arguments as string).length, 1_000);
      assert.ok(t.error);
    }
  } finally {
    await s.close();
  }
});
