/**
 * An approval's replay in the console (Chromium): its counts reach the page live as cases end;
 * then its cases, REGRESSED first, each with the customer's messages, the current and proposed
 * answers side by side (one above the other on a phone) with the words that differ marked, what
 * each would carry out as labelled fields, and the verdict with its reason. "Replay again" starts a
 * rerun; "Approve" approves at once without a regression, and asks a second time with one: the
 * approval read over REST stays PENDING until "Approve anyway". The stand-in model answers
 * differently under the proposed prompt (as tests/replay_test.ts's), and holds answers when told,
 * so each state is waited for, never timed.
 */
import assert from "node:assert/strict";
import type { Locator, Request } from "playwright-core";
import { assertFitsWidth, consoleSuite, liveFeeds, PHONE, screenshot, signIn } from "./_helpers/browser.ts";
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
import { eventually, startReceiver } from "./_helpers/receiver.ts";
import { actorOf, propose } from "./_helpers/approvals.ts";
import { JUDGE_SYSTEM } from "../src/replay/verdict.ts";

const PROPOSED = "Seja formal: chame o cliente de Prezado cliente.";
const TRACK = "onde está meu pedido 123";
const HUMAN = "quero falar com alguém";
const HELLO = "oi";
const INVOICE = "pode me mandar a fatura?";

/** What the agent answers each customer message with: as it is, and under the proposed prompt (null: the call fails). */
const ANSWERS: Record<string, [string, string | null]> = {
  [TRACK]: [
    'Vou verificar. <track-order order="123"/> Seu pedido está a caminho.',
    "Prezado cliente, seu pedido está a caminho.",
  ],
  [HUMAN]: [
    'Vou chamar alguém. <transferir motivo="pediu um humano"/>',
    'Prezado cliente, vou transferi-lo. <transferir motivo="pediu um humano"/>',
  ],
  [HELLO]: ["Olá! Como posso ajudar?", "Prezado cliente, como posso ajudar?"],
  [INVOICE]: ["Claro, envio a fatura por e-mail.", null],
};

/** The judge: the formal answer is better for the transfer, the greetings are as good as each other. */
function judge(call: ModelCall): ModelAnswer {
  const text = lastUserMessage(call);
  const proposedLabel = /Answer A:\nPrezado/.test(text) ? "A" : "B";
  if (text.includes(HUMAN)) {
    return { content: JSON.stringify({ better: proposedLabel, why: "Mais formal e igualmente útil." }) };
  }
  return { content: `{"better": "same", "why": "Equivalentes."}` };
}

/** The text of each of `locators`, whitespace collapsed. */
const texts = async (locator: Locator) =>
  (await locator.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());

Deno.test("an approval's replay in the console: live counts, cases, Replay again, Approve asks again", async (tt) => {
  // Calls matching `held` wait for the release (the test decides when a replay may go on).
  let held: ((call: ModelCall) => boolean) | null = null;
  let gate = Promise.withResolvers<void>();
  const hold = (match: (call: ModelCall) => boolean) => {
    gate = Promise.withResolvers<void>();
    held = match;
    return () => (held = null, gate.resolve());
  };
  const isProposed = (call: ModelCall) => String(call.body.messages[0].content).includes(PROPOSED);
  const model = startModelServer(async (call) => {
    const system = String(call.body.messages[0].content);
    if (held?.(call)) await gate.promise;
    if (system === JUDGE_SYSTEM) return judge(call);
    const answers = ANSWERS[lastUserMessage(call)];
    const answer = answers?.[isProposed(call) ? 1 : 0];
    if (answer === null) {
      return Response.json({ error: { message: "The stand-in refuses.", type: "invalid_request_error" } }, {
        status: 400,
      });
    }
    return { content: answer ?? "?" };
  });
  const graph = startGraph();
  const intentHook = startReceiver(() => new Response(null, { status: 200 }));
  const suite = await consoleSuite({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: "20",
    REPLAY_CONVERSATIONS: "4",
    REPLAY_CONCURRENCY: "4",
  });
  try {
    const app = suite.t.app;
    const { workspaceId, owner } = await suite.t.seed.workspace("Acme");
    const manager = await suite.t.seed.member(workspaceId, "MANAGER");
    const agent = await suite.t.seed.agent(owner.client, { name: "Ana", messageGroupingTime: "FAST" });
    const intent = await owner.client.post(`/api/agents/${agent.id}/intents`, {
      name: "Track Order",
      description: "o cliente quer saber do pedido",
      triggerOnTypes: ["TEXT"],
      requiredFields: [{ name: "order", type: "string", description: "número do pedido" }],
      webhookUrl: intentHook.url("/intent"),
    });
    assert.equal(intent.status, 201);
    const channel = await seedChannel(app, workspaceId, agent.id);
    const db = app.deps.db;
    // Oldest first; the replay lists the latest first: INVOICE, HELLO, HUMAN, TRACK.
    for (const [i, content] of [TRACK, HUMAN, HELLO, INVOICE].entries()) {
      const m = await customerMessage(app, {
        workspaceId,
        agentId: agent.id,
        channelId: channel.id,
        contact: { externalId: `551190000000${i}`, name: `Cliente ${i}` },
        content,
      });
      await waitUntil(
        () => db.message.findUnique({ where: { id: m.messageId } }),
        (r) => r?.answeredAt !== null,
      );
    }
    const ctx = await actorOf(app, manager.token, workspaceId);
    const approvalOf = async (id: string) => (await manager.client.get(`/api/approvals/${id}`)).body;
    const { page, refused, incidents, close } = await suite.open("/");
    await signIn(page, manager);
    await page.getByRole("link", { name: "Approvals" }).click();
    await page.getByText("Nothing waits for a decision").waitFor();
    await liveFeeds(app, 1);

    /** The replay's counts as the page shows them ("Replayed 4 of 4", "Same 1"...). */
    const shownCounts = (card: Locator) => texts(card.locator('dl[aria-label="Replay counts"] > div'));
    /** The counts the API gives, in the page's words. */
    const apiCounts = (r: Record<string, number>) => [
      `Replayed ${r.done} of ${r.total}`,
      `Same ${r.same}`,
      `Changed ${r.changed}`,
      `Regressed ${r.regressed}`,
      `Failed ${r.failed}`,
      `Credits ${Math.round(r.credits * 10_000) / 10_000}`,
    ];
    const state = (card: Locator, text: string) =>
      card.getByRole("status").filter({ hasText: text }).waitFor();

    await tt.step("without a regression, Approve approves at once", async () => {
      const id = (await propose(ctx, {
        tool: "update_agent_training",
        target: { agentId: agent.id },
        change: { trainingContext: "Entregamos em todo o Brasil." },
        rationale: "frete",
      })).id;
      const card = page.getByRole("article", { name: "Change the agent's training context for Ana" });
      await state(card, "Done: 4 conversations replayed.");
      const replay = (await approvalOf(id)).replay;
      assert.deepEqual([replay.status, replay.same, replay.regressed], ["DONE", 4, 0]);
      assert.deepEqual(await shownCounts(card), apiCounts(replay));
      await card.getByRole("button", { name: "Approve" }).click();
      await card.getByText("Approved: the change was made.").waitFor();
      assert.equal(await card.getByRole("alertdialog").count(), 0);
      assert.equal((await approvalOf(id)).status, "APPROVED");
      const ana = await manager.client.get(`/api/agents/${agent.id}`);
      assert.equal(ana.body.trainingContext, "Entregamos em todo o Brasil.");
    });

    let approvalId = "";
    const card = page.getByRole("article", { name: "Change the agent's prompt for Ana" });

    await tt.step("the counts reach the page live as cases end", async () => {
      // The greeting's proposed answer waits: the other three cases end first.
      const release = hold((call) => lastUserMessage(call) === HELLO && isProposed(call));
      approvalId = (await propose(ctx, {
        tool: "update_agent_prompt",
        target: { agentId: agent.id },
        change: { systemPrompt: PROPOSED },
        rationale: "Mais formal.",
      })).id;
      await state(card, "Asking the model: 3 of 4 conversations replayed.");
      const running = (await approvalOf(approvalId)).replay;
      assert.deepEqual([running.status, running.done, running.total], ["RUNNING", 3, 4]);
      assert.deepEqual(await shownCounts(card), apiCounts(running));
      // The case still asked is listed last, waiting.
      const waiting = card.getByRole("article", { name: "Replayed conversation, PENDING" });
      await waiting.getByRole("region", { name: "Proposed answer" }).getByText("Waiting for the model.")
        .waitFor();
      release();
      await state(card, "Done: 4 conversations replayed.");
      const done = (await approvalOf(approvalId)).replay;
      assert.deepEqual(
        [done.status, done.done, done.same, done.changed, done.regressed, done.failed],
        ["DONE", 4, 1, 1, 1, 1],
      );
      assert.ok(done.credits > 0);
      assert.deepEqual(await shownCounts(card), apiCounts(done));
    });

    await tt.step(
      "cases REGRESSED first, each with the customer's messages, both answers with their words marked, effects and verdict",
      async () => {
        const cases = card.getByRole("list", { name: "Replayed conversations" }).getByRole("article");
        assert.deepEqual(await texts(cases.locator(".case-head .badge")), [
          "REGRESSED",
          "CHANGED",
          "SAME",
          "FAILED",
        ]);
        const [lost, better, same, failed] = [0, 1, 2, 3].map((i) => cases.nth(i));
        const side = (c: Locator, name: "Current answer" | "Proposed answer") =>
          c.getByRole("region", { name });
        /** An answer's effects as "label: value" rows (an intent's fields after its name). */
        const effectRows = (c: Locator, name: "Current answer" | "Proposed answer") =>
          texts(side(c, name).locator("dl.effects > div"));

        // The lost intent: the customer's message, the marked words, the intent with its field.
        assert.deepEqual(
          await texts(lost.getByRole("list", { name: "The customer's messages" }).getByRole("listitem")),
          [
            TRACK,
          ],
        );
        assert.equal(
          await side(lost, "Current answer").locator(".answer-text").innerText(),
          "Vou verificar. Seu pedido está a caminho.",
        );
        assert.equal(
          await side(lost, "Proposed answer").locator(".answer-text").innerText(),
          "Prezado cliente, seu pedido está a caminho.",
        );
        assert.deepEqual(await texts(side(lost, "Current answer").locator("del")), [
          "Vou",
          "verificar.",
          "Seu",
        ]);
        assert.deepEqual(await texts(side(lost, "Proposed answer").locator("ins")), [
          "Prezado",
          "cliente,",
          "seu",
        ]);
        assert.deepEqual(await effectRows(lost, "Current answer"), [
          "Intent Track Order lost order 123",
          "Transfer to a person No",
        ]);
        assert.deepEqual(await effectRows(lost, "Proposed answer"), [
          "Intents None",
          "Transfer to a person No",
        ]);
        await lost.getByText("The proposed answer loses the intent Track Order of the stored reply.")
          .waitFor();
        assert.equal(await lost.getByText("Pinned").count(), 0);

        // The judged improvement: both transfer; the judge's line.
        assert.deepEqual(await effectRows(better, "Current answer"), [
          "Intents None",
          "Transfer to a person Yes: pediu um humano",
        ]);
        assert.deepEqual(await effectRows(better, "Proposed answer"), [
          "Intents None",
          "Transfer to a person Yes: pediu um humano",
        ]);
        assert.deepEqual(await texts(better.locator(".reason")), ["Mais formal e igualmente útil."]);
        assert.deepEqual(await texts(same.locator(".reason")), ["Equivalentes."]);
        assert.deepEqual(await texts(side(same, "Proposed answer").locator("ins")), [
          "Prezado",
          "cliente,",
          "como",
        ]);

        // The failed case: why, the answer that came, none for the other.
        const failure = (await approvalOf(approvalId)).replay.cases.find(
          (c: { customerMessages: string[] }) => c.customerMessages[0] === INVOICE,
        );
        assert.equal(failure.status, "FAILED");
        assert.deepEqual(await texts(failed.locator(".case-error")), [failure.error]);
        assert.equal(
          await side(failed, "Current answer").locator(".answer-text").innerText(),
          "Claro, envio a fatura por e-mail.",
        );
        await side(failed, "Proposed answer").getByText("No answer: the model call failed.").waitFor();

        // Side by side at a desk.
        const [a, b] = [
          await side(lost, "Current answer").boundingBox(),
          await side(lost, "Proposed answer").boundingBox(),
        ];
        assert.ok(a && b && b.x >= a.x + a.width && Math.abs(a.y - b.y) < 1, JSON.stringify({ a, b }));
        await lost.scrollIntoViewIfNeeded();
        await screenshot(page, "replay");
      },
    );

    await tt.step("on a phone the answers stack, and the page fits the width", async () => {
      const phone = await suite.open("/", PHONE);
      await signIn(phone.page, manager);
      await phone.page.goto("/#/approvals");
      const onPhone = phone.page.getByRole("article", { name: "Change the agent's prompt for Ana" });
      await onPhone.getByRole("status").filter({ hasText: "Done: 4 conversations replayed." }).waitFor();
      const lost = onPhone.getByRole("article", { name: "Replayed conversation, REGRESSED" });
      const a = await lost.getByRole("region", { name: "Current answer" }).boundingBox();
      const b = await lost.getByRole("region", { name: "Proposed answer" }).boundingBox();
      assert.ok(a && b && b.y >= a.y + a.height && Math.abs(a.x - b.x) < 1, JSON.stringify({ a, b }));
      await assertFitsWidth(phone.page, "an approval with its replay");
      await lost.scrollIntoViewIfNeeded();
      await screenshot(phone.page, "replay-phone");
      assert.deepEqual([phone.refused, phone.incidents], [[], []]);
      await phone.close();
    });

    await tt.step("Replay again starts a rerun, shown live", async () => {
      const calls = model.calls.length;
      const release = hold(() => true);
      await card.getByRole("button", { name: "Replay again" }).click();
      // The rerun asks the model again; its cases wait, and the page says so.
      await model.waitForCalls(calls + 1);
      await state(card, "Asking the model: 0 of 4 conversations replayed.");
      const rerun = (await approvalOf(approvalId)).replay;
      assert.deepEqual([rerun.status, rerun.done, rerun.total], ["RUNNING", 0, 4]);
      assert.deepEqual(rerun.cases.map((c: { status: string }) => c.status), [
        "PENDING",
        "PENDING",
        "PENDING",
        "PENDING",
      ]);
      assert.equal(await card.getByRole("article", { name: "Replayed conversation, PENDING" }).count(), 4);
      release();
      await state(card, "Done: 4 conversations replayed.");
      const done = (await approvalOf(approvalId)).replay;
      assert.deepEqual([done.same, done.changed, done.regressed, done.failed], [1, 1, 1, 1]);
      assert.deepEqual(await shownCounts(card), apiCounts(done));
    });

    await tt.step("a read answered after the replay's events does not set its counts back", async () => {
      // The list's read on a CREATED event is answered only after the replay's last events: read
      // while the rerun waits (0 of 4), it is older than them.
      const release = hold(() => true);
      await card.getByRole("button", { name: "Replay again" }).click();
      await state(card, "Asking the model: 0 of 4 conversations replayed.");
      const isListRead = (r: Request) => r.url().includes("ConsolePendingApprovals");
      let read = false, answer!: () => void;
      const answered = new Promise<void>((r) => answer = r);
      const graphql = (url: URL) => url.pathname === "/graphql";
      await page.route(graphql, async (route) => {
        if (!isListRead(route.request())) return route.fallback();
        const response = await route.fetch();
        read = true;
        await answered;
        await route.fulfill({ response });
      });
      // A change without a replay: CREATED, and the list read again.
      await propose(ctx, {
        tool: "update_intent",
        target: { intentId: intent.body.id },
        change: { description: "pedidos e entregas" },
        rationale: "descrição",
      });
      await eventually(() => Promise.resolve(read || undefined));
      release();
      await state(card, "Done: 4 conversations replayed.");
      const finished = page.waitForEvent("requestfinished", isListRead);
      answer();
      await finished;
      await page.unroute(graphql);
      // Its answer handled and rendered: two frames after the response's body was read.
      await page.evaluate(() =>
        new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null))))
      );
      await page.getByRole("article", { name: "Change an intent for Ana" }).waitFor();
      assert.deepEqual(await texts(card.getByRole("status")), ["DONE Done: 4 conversations replayed."]);
      assert.deepEqual(await shownCounts(card), apiCounts((await approvalOf(approvalId)).replay));
    });

    await tt.step(
      "Approve asks again when a case REGRESSED; the approval waits for Approve anyway",
      async () => {
        await card.getByRole("button", { name: "Approve" }).click();
        const question = card.getByRole("alertdialog", { name: "Approve despite regressions" });
        await question.waitFor();
        assert.equal(
          await question.locator("p").innerText(),
          "1 of 4 replayed conversations REGRESSED under this change: the proposed agent loses an action " +
            "the customer got, or answers worse. Approve it anyway?",
        );
        // The focus is on the safe answer.
        assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Cancel");
        assert.equal((await approvalOf(approvalId)).status, "PENDING");
        await question.getByRole("button", { name: "Cancel" }).click();
        await card.getByRole("button", { name: "Approve" }).waitFor();
        assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Approve");
        assert.equal((await approvalOf(approvalId)).status, "PENDING");
        await card.getByRole("button", { name: "Approve" }).click();
        await question.getByRole("button", { name: "Approve anyway" }).click();
        await card.getByText("Approved: the change was made.").waitFor();
        assert.equal((await approvalOf(approvalId)).status, "APPROVED");
        assert.equal((await manager.client.get(`/api/agents/${agent.id}`)).body.systemPrompt, PROPOSED);
        assert.equal(await card.getByRole("button").count(), 0);
      },
    );

    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    // A step that failed may have left answers held: the app stops only once they end.
    held = null;
    gate.resolve();
    await suite.close();
    await Promise.all([model.close(), graph.close(), intentHook.close()]);
  }
});
