/**
 * Replays of agent changes (docs/behaviour.md "Replays of agent changes"): an approval of a prompt
 * change replays the agent's latest conversations and its pinned ones under the current and the
 * proposed prompt, against a stand-in model that answers differently under the proposed one. A
 * lost intent tag is REGRESSED, a judged improvement CHANGED, an equivalent answer SAME; nothing
 * reaches a receiver, nothing is stored in the conversations; progress reaches graphql-ws; credits
 * are counted at the supervisor's prices; a rerun, pins, roles; a replay stops when its approval is
 * decided.
 */
import assert from "node:assert/strict";
import { WEBHOOK_EVENTS } from "../src/webhooks/schemas.ts";
import { Client, startTestApp, testConfig } from "./_helpers/app.ts";
import { buildApp } from "../src/app.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { actorOf, propose } from "./_helpers/approvals.ts";
import { type Receiver, startReceiver } from "./_helpers/receiver.ts";
import {
  customerMessage,
  lastUserMessage,
  type ModelAnswer,
  type ModelCall,
  seedChannel,
  startGraph,
  startModelServer,
  waitUntil,
} from "./_helpers/conversations.ts";
import { subscribe, subscribed, wsClient } from "./_helpers/live.ts";
import { effectsVerdict, JUDGE_SYSTEM, readJudgement } from "../src/replay/verdict.ts";
import { LiveReplies } from "../src/jobs/live_replies.ts";

const PROPOSED = "Seja formal: chame o cliente de Prezado cliente.";

/** What the agent answers each customer message with: as it is, and under the proposed prompt. */
const ANSWERS: Record<string, [string, string]> = {
  "onde está meu pedido 123": [
    'Vou verificar. <track-order order="123"/> Seu pedido está a caminho.',
    "Prezado cliente, seu pedido está a caminho.",
  ],
  "quero falar com alguém": [
    'Vou chamar alguém. <transferir motivo="pediu um humano"/>',
    'Prezado cliente, vou transferi-lo. <transferir motivo="pediu um humano"/>',
  ],
  "oi": ["Olá! Como posso ajudar?", "Prezado cliente, como posso ajudar?"],
};

/** The judge: the formal answer is better for the transfer, the greetings are as good as each other. */
function judge(call: ModelCall): ModelAnswer {
  const text: string = lastUserMessage(call);
  const proposedLabel = /Answer A:\nPrezado/.test(text) ? "A" : "B";
  if (text.includes("quero falar com alguém")) {
    return { content: JSON.stringify({ better: proposedLabel, why: "Mais formal e igualmente útil." }) };
  }
  return { content: `{"better": "same", "why": "Equivalentes."}` };
}

interface Hold {
  /** Answers held until released. */
  release(): void;
}

Deno.test("replays of an agent change", async (tt) => {
  // Calls matching `held` wait for its release (the test decides when a replay may go on).
  let held: ((call: ModelCall) => boolean) | null = null;
  let gate = Promise.withResolvers<void>();
  const hold = (match: (call: ModelCall) => boolean): Hold => {
    gate = Promise.withResolvers<void>();
    held = match;
    return { release: () => (held = null, gate.resolve()) };
  };
  const model = startModelServer(async (call) => {
    const system: string = call.body.messages[0].content;
    if (held?.(call)) await gate.promise;
    if (system === JUDGE_SYSTEM) return judge(call);
    const answers = ANSWERS[lastUserMessage(call)];
    return { content: answers ? answers[system.includes(PROPOSED) ? 1 : 0] : "?" };
  });
  const graph = startGraph();
  const intentHook: Receiver = startReceiver(() => new Response(null, { status: 200 }));
  const events: Receiver = startReceiver(() => new Response("ok"));
  const t = await startTestApp({
    PORT: "0",
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: "20",
    REPLAY_CONVERSATIONS: "2",
    REPLAY_CONCURRENCY: "2",
  });
  const { port } = await t.app.start();
  const { workspaceId, owner } = await t.seed.workspace();
  const agent = await t.seed.agent(owner.client, { messageGroupingTime: "FAST" });
  const o = owner.client;
  const intent = await o.post(`/api/agents/${agent.id}/intents`, {
    name: "Track Order",
    description: "o cliente quer saber do pedido",
    triggerOnTypes: ["TEXT"],
    requiredFields: [{ name: "order", type: "string", description: "número do pedido" }],
    webhookUrl: intentHook.url("/intent"),
  });
  assert.equal(intent.status, 201);
  for (const event of WEBHOOK_EVENTS) {
    assert.equal(
      (await o.post(`/api/agents/${agent.id}/webhooks`, { event, url: events.url() })).status,
      201,
    );
  }
  const channel = await seedChannel(t.app, workspaceId, agent.id);
  const db = t.app.deps.db;
  const converse = async (phone: string, content: string) => {
    const m = await customerMessage(t.app, {
      workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      contact: { externalId: phone, name: `Cliente ${phone}` },
      content,
    });
    await waitUntil(
      () => db.message.findUnique({ where: { id: m.messageId } }),
      (r) => r?.answeredAt !== null,
    );
    return m.conversationId;
  };
  // Oldest first: A fires the intent, B transfers, C greets. The latest two are C and B; A is pinned.
  const a = await converse("5511900000001", "onde está meu pedido 123");
  const b = await converse("5511900000002", "quero falar com alguém");
  const c = await converse("5511900000003", "oi");
  const settled = async () => {
    const deliveries = await waitUntil(
      () => db.webhookDelivery.groupBy({ by: ["status"], _count: true }),
      (rows) => rows.length === 1 && rows[0].status === "SUCCEEDED",
    );
    const perConversation = await db.message.groupBy({ by: ["conversationId"], _count: true });
    return {
      deliveries: deliveries[0]._count,
      events: await db.domainEvent.count(),
      messages: Object.fromEntries(perConversation.map((r) => [r.conversationId, r._count])),
      statuses: await db.conversation.findMany({
        select: { id: true, status: true },
        orderBy: { id: "asc" },
      }),
      answered: await db.message.count({ where: { answeredAt: { not: null } } }),
      calls: { graph: graph.calls.length, intents: intentHook.calls.length, events: events.calls.length },
    };
  };
  const before = await settled();
  assert.deepEqual(before.calls, { graph: 3, intents: 1, events: before.deliveries });
  const approvalsRead = `approval(id: $id) { id replay { status total done same changed regressed failed
    credits error cases { conversationId pinned status customerMessages storedReply storedEffects currentReply
    proposedReply currentEffects proposedEffects verdict reason error } } }`;
  const ctx = await actorOf(t.app, owner.token, workspaceId);
  let approvalId = "";
  const replayOf = async (id: string) => (await o.get(`/api/approvals/${id}`)).body.replay;
  try {
    await tt.step(
      "pins: POST, GET and DELETE /api/agents/{id}/replay-cases; 404 for another agent's",
      async () => {
        const pinned = await o.post(`/api/agents/${agent.id}/replay-cases`, { conversationId: a });
        assert.equal(pinned.status, 201);
        assert.deepEqual(Object.keys(pinned.body).sort(), [
          "agentId",
          "conversationId",
          "createdAt",
          "pinnedBy",
        ]);
        assert.deepEqual([pinned.body.conversationId, pinned.body.pinnedBy], [a, owner.userId]);
        const again = await o.post(`/api/agents/${agent.id}/replay-cases`, { conversationId: a });
        assert.deepEqual([again.status, again.body.createdAt], [201, pinned.body.createdAt]);
        const other = await t.seed.agent(o, { name: "Bia" });
        assert.equal(
          (await o.post(`/api/agents/${other.id}/replay-cases`, { conversationId: a })).status,
          404,
        );
        assert.equal((await o.post(`/api/agents/${agent.id}/replay-cases`, {})).status, 400);
        const b2 = await o.post(`/api/agents/${agent.id}/replay-cases`, { conversationId: b });
        assert.equal(b2.status, 201);
        const list = await o.get(`/api/agents/${agent.id}/replay-cases`);
        assert.deepEqual(list.body.data.map((p: { conversationId: string }) => p.conversationId), [a, b]);
        assert.equal((await o.delete(`/api/agents/${agent.id}/replay-cases/${b}`)).status, 204);
        assert.equal((await o.delete(`/api/agents/${agent.id}/replay-cases/${b}`)).status, 404);
        const gql = await o.graphql(
          `{ replayCases(agentId: "${agent.id}") { edges { node { conversationId pinnedBy } } } }`,
        );
        assert.deepEqual(gql.body.data.replayCases.edges, [{
          node: { conversationId: a, pinnedBy: owner.userId },
        }]);
      },
    );

    await tt.step(
      "live progress over graphql-ws, then SAME, CHANGED and a lost intent tag REGRESSED",
      async () => {
        const ws = wsClient(port, { token: owner.token, workspaceId });
        const feed = subscribe(
          ws,
          `subscription { approvalEvents { type approval { id replay { status total done same changed regressed } } } }`,
        );
        await subscribed(t.app, 1);
        // The greeting's proposed answer waits, so progress is seen before the end.
        const greeting = hold((call) =>
          lastUserMessage(call) === "oi" && call.body.messages[0].content.includes(PROPOSED)
        );
        approvalId = (await propose(ctx, {
          tool: "update_agent_prompt",
          target: { agentId: agent.id },
          change: { systemPrompt: PROPOSED },
          rationale: "mais formal",
        })).id;
        const seen: Array<{ type: string; status: string; done: number; total: number }> = [];
        let released = false;
        for (;;) {
          const r = await feed.next();
          assert.equal(r.errors, undefined, JSON.stringify(r.errors));
          const { type, approval } = r.data.approvalEvents;
          assert.equal(approval.id, approvalId);
          seen.push({ type, ...approval.replay });
          if (!released && approval.replay.status === "RUNNING" && approval.replay.done >= 1) {
            greeting.release();
            released = true;
          }
          if (approval.replay.status === "DONE") break;
        }
        await feed.stop();
        await ws.dispose();
        assert.equal(seen[0].type, "CREATED");
        assert.deepEqual(seen.slice(1).map((e) => e.type), seen.slice(1).map(() => "REPLAYED"));
        const progress = seen.filter((e) => e.status === "RUNNING" && e.done > 0 && e.done < e.total);
        assert.ok(progress.length >= 1, JSON.stringify(seen));
        const dones = seen.map((e) => e.done);
        assert.deepEqual(dones, [...dones].sort((x, y) => x - y), "done only grows");
        assert.deepEqual(seen.at(-1), {
          type: "REPLAYED",
          status: "DONE",
          total: 3,
          done: 3,
          same: 1,
          changed: 1,
          regressed: 1,
        });

        const replay = await replayOf(approvalId);
        const none = { intents: [], transfer: null };
        // 8 calls of 120 prompt and 30 completion tokens: (960 × 3 + 240 × 15) / 10^6 USD × 5 × 3 / 0.1.
        assert.deepEqual({ ...replay, cases: undefined }, {
          status: "DONE",
          total: 3,
          done: 3,
          same: 1,
          changed: 1,
          regressed: 1,
          failed: 0,
          credits: 0.972,
          error: null,
          startedAt: replay.startedAt,
          finishedAt: replay.finishedAt,
          cases: undefined,
        });
        assert.deepEqual(replay.cases, [
          {
            conversationId: c,
            pinned: false,
            status: "DONE",
            customerMessages: ["oi"],
            storedReply: "Olá! Como posso ajudar?",
            storedEffects: none,
            currentReply: "Olá! Como posso ajudar?",
            proposedReply: "Prezado cliente, como posso ajudar?",
            currentEffects: none,
            proposedEffects: none,
            verdict: "SAME",
            reason: "Equivalentes.",
            error: null,
          },
          {
            conversationId: b,
            pinned: false,
            status: "DONE",
            customerMessages: ["quero falar com alguém"],
            storedReply: "Vou chamar alguém.",
            storedEffects: { intents: [], transfer: "pediu um humano" },
            currentReply: "Vou chamar alguém.",
            proposedReply: "Prezado cliente, vou transferi-lo.",
            currentEffects: { intents: [], transfer: "pediu um humano" },
            proposedEffects: { intents: [], transfer: "pediu um humano" },
            verdict: "CHANGED",
            reason: "Mais formal e igualmente útil.",
            error: null,
          },
          {
            conversationId: a,
            pinned: true,
            status: "DONE",
            customerMessages: ["onde está meu pedido 123"],
            storedReply: "Vou verificar. Seu pedido está a caminho.",
            storedEffects: { intents: [{ name: "Track Order", fields: { order: "123" } }], transfer: null },
            currentReply: "Vou verificar. Seu pedido está a caminho.",
            proposedReply: "Prezado cliente, seu pedido está a caminho.",
            currentEffects: { intents: [{ name: "Track Order", fields: { order: "123" } }], transfer: null },
            proposedEffects: none,
            verdict: "REGRESSED",
            reason: "The proposed answer loses the intent Track Order of the stored reply.",
            error: null,
          },
        ]);
        // The judge saw the two answers and the conversation, never which one is proposed.
        const judged = model.calls.filter((call) => call.body.messages[0].content === JUDGE_SYSTEM);
        assert.equal(judged.length, 2);
        for (const call of judged) assert.doesNotMatch(lastUserMessage(call), /proposed|current/i);
        assert.equal(model.calls.length, 3 + 8);
        // GraphQL reads the same replay.
        const gql = await o.graphql(`query($id: ID!) { ${approvalsRead} }`, { id: approvalId });
        assert.equal(gql.body.errors, undefined, JSON.stringify(gql.body.errors));
        const { startedAt: _s, finishedAt: _f, ...shown } = replay;
        assert.deepEqual(gql.body.data.approval.replay, shown);
      },
    );

    await tt.step(
      "nothing leaves: no send, intent webhook, event or stored message; credits counted",
      async () => {
        const after = await settled();
        assert.deepEqual(after, before);
        const credits = await o.get("/api/supervisor/credits?days=1");
        assert.equal(credits.status, 200);
        const today = credits.body.data.at(-1);
        assert.deepEqual([today.credits, today.messages, today.inputTokens, today.outputTokens], [
          0.972,
          0,
          960,
          240,
        ]);
      },
    );

    await tt.step("a rerun asks every case again; its credits add up", async () => {
      const rerun = await o.post(`/api/approvals/${approvalId}/replay`);
      assert.equal(rerun.status, 202, JSON.stringify(rerun.body));
      assert.equal(rerun.body.id, approvalId);
      assert.deepEqual([rerun.body.replay.status, rerun.body.replay.total, rerun.body.replay.cases], [
        "PENDING",
        0,
        [],
      ]);
      const done = await waitUntil(() => replayOf(approvalId), (r) => r.status === "DONE");
      assert.deepEqual([done.total, done.same, done.changed, done.regressed, done.credits], [
        3,
        1,
        1,
        1,
        1.944,
      ]);
      assert.equal(model.calls.length, 3 + 16);
      const gql = await o.graphql(`mutation($id: ID!) { replayApproval(id: $id) { id replay { status } } }`, {
        id: approvalId,
      });
      assert.deepEqual(gql.body.data.replayApproval, { id: approvalId, replay: { status: "PENDING" } });
      await waitUntil(() => replayOf(approvalId), (r) => r.status === "DONE");
      assert.deepEqual(await settled(), before);
    });

    await tt.step("403 for AGENT and VIEWER", async () => {
      for (const role of ["AGENT", "VIEWER"] as const) {
        const m = (await t.seed.member(workspaceId, role)).client;
        const cases = `/api/agents/${agent.id}/replay-cases`;
        const statuses = [
          (await m.post(`/api/approvals/${approvalId}/replay`)).status,
          (await m.get(cases)).status,
          (await m.post(cases, { conversationId: c })).status,
          (await m.delete(`${cases}/${a}`)).status,
          (await m.get(`/api/approvals/${approvalId}`)).status,
        ];
        assert.deepEqual(statuses, [403, 403, 403, 403, 403], role);
        const gql = await m.graphql(`mutation($id: ID!) { replayApproval(id: $id) { id } }`, {
          id: approvalId,
        });
        assert.equal(gql.body.errors[0].extensions.code, "FORBIDDEN", role);
      }
      assert.equal((await o.get(`/api/agents/${agent.id}/replay-cases`)).body.data.length, 1);
    });

    await tt.step("a replay stops when its approval is decided", async () => {
      const calls = model.calls.length;
      const everything = hold(() => true);
      const proposed = await propose(ctx, {
        tool: "update_agent_training",
        target: { agentId: agent.id },
        change: { trainingContext: "Entregamos em todo o Brasil." },
        rationale: "frete",
      });
      // Both slots (REPLAY_CONCURRENCY=2) hold a call when the approval is approved.
      await model.waitForCalls(calls + 2);
      const approved = await o.post(`/api/approvals/${proposed.id}/approve`);
      assert.equal(approved.status, 200);
      // The decision ends the replay: its answer shows it stopped, as every read after it.
      assert.deepEqual([approved.body.replay.status, approved.body.replay.error], [
        "FAILED",
        "Stopped: the approval was approved first.",
      ]);
      everything.release();
      // The held calls end; nothing of them is written but their cost, and no call follows.
      const spent = await waitUntil(() => replayOf(proposed.id), (r) => r.credits > 0);
      assert.deepEqual({ ...spent, credits: 0, cases: undefined }, {
        ...approved.body.replay,
        credits: 0,
        cases: undefined,
      });
      assert.deepEqual(spent.cases, approved.body.replay.cases);
      assert.ok(spent.done < spent.total, JSON.stringify(spent));
      assert.equal(model.calls.length, calls + 2);
      const again = await o.post(`/api/approvals/${proposed.id}/replay`);
      assert.deepEqual([again.status, again.body.code], [409, "APPROVAL_NOT_PENDING"]);
    });

    await tt.step(
      "a change that does not change what the agent says has no replay; OFF with replay off",
      async () => {
        const intentChange = await propose(ctx, {
          tool: "update_intent",
          target: { intentId: intent.body.id },
          change: { description: "pedidos" },
          rationale: "descrição",
        });
        assert.equal(await replayOf(intentChange.id), null);
        const refused = await o.post(`/api/approvals/${intentChange.id}/replay`);
        assert.deepEqual([refused.status, refused.body.code], [409, "REPLAY_UNAVAILABLE"]);
        const off = await buildApp(testConfig(t.db.url, { PORT: "0", REPLAY_CONVERSATIONS: "0" }), {
          logger: silentLogger,
          bootstrap: false,
          workers: false,
        });
        try {
          const offCtx = await actorOf(off, owner.token, workspaceId);
          const proposedOff = await propose(offCtx, {
            tool: "update_agent_prompt",
            target: { agentId: agent.id },
            change: { systemPrompt: "Outro prompt." },
            rationale: "sem replay",
          });
          const replay = await replayOf(proposedOff.id);
          assert.deepEqual([replay.status, replay.total, replay.cases], ["OFF", 0, []]);
          const onOff = new Client(off, owner.token, workspaceId);
          assert.equal((await onOff.get(`/api/approvals/${proposedOff.id}`)).body.replay.status, "OFF");
        } finally {
          await off.stop();
        }
      },
    );
  } finally {
    await t.close();
    await Promise.all([model.close(), graph.close(), intentHook.close(), events.close()]);
  }
});

Deno.test("verdicts from effects, and the judge's answer read liberally", () => {
  const order = { intents: [{ name: "Track Order", fields: { order: "1" } }], transfer: null };
  const none = { intents: [], transfer: null };
  assert.equal(effectsVerdict(order, none).verdict, "REGRESSED");
  assert.equal(effectsVerdict(none, order).verdict, "CHANGED");
  assert.equal(effectsVerdict({ intents: [], transfer: "x" }, none).verdict, "REGRESSED");
  assert.equal(effectsVerdict(none, { intents: [], transfer: "y" }).verdict, "CHANGED");
  assert.equal(
    effectsVerdict(order, { intents: [{ name: "Track Order", fields: { order: "2" } }], transfer: null })
      .verdict,
    "CHANGED",
  );
  assert.deepEqual(effectsVerdict(order, order), { verdict: "SAME", reason: null });
  assert.deepEqual(readJudgement('Sure: {"better": "b", "why": "clearer\nand kinder"}'), {
    better: "B",
    why: "clearer and kinder",
  });
  assert.deepEqual(readJudgement("A"), { better: "A", why: "" });
  assert.deepEqual(readJudgement('{"better":"equal"}'), { better: "same", why: "" });
  assert.equal(readJudgement("I cannot tell."), null);
});

Deno.test("a replay's step waits for the live replies under way, for yieldTo of them at most", async () => {
  const live = new LiveReplies(2);
  await live.room(); // none under way: at once
  const gates = [0, 1, 2, 3].map(() => Promise.withResolvers<void>());
  const runs = gates.map((g) => live.run(() => g.promise));
  let given = false;
  const room = live.room().then(() => given = true);
  gates[0].resolve();
  await runs[0];
  await Promise.resolve();
  assert.equal(given, false, "one of two ended, three still under way");
  gates[1].resolve();
  await runs[1];
  await room;
  assert.equal(live.running, 2);
  // Waiting for the last ones: the room comes once none is under way, whatever yieldTo says.
  const last = new LiveReplies(10);
  const g = Promise.withResolvers<void>();
  const r = last.run(() => g.promise);
  let free = false;
  const waited = last.room().then(() => free = true);
  await Promise.resolve();
  assert.equal(free, false);
  g.resolve();
  await r;
  await waited;
  assert.equal(last.running, 0);
  gates[2].resolve();
  gates[3].resolve();
  await Promise.all(runs);
});
