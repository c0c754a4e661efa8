/**
 * Replies mostly wait for the model, so one process keeps many of them in flight: 48 conversations
 * whose windows close together all reach the model at once (it answers none until the 48th call
 * arrives), and all 48 are answered. With a small limit of replies at once, the model would never
 * see the 48th call while it held the others, and the test would end at its deadline.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { startGraph, startModelServer } from "./_helpers/conversations.ts";
import { createWhatsAppChannel, postSigned, textMessage } from "./_helpers/whatsapp.ts";

const CONVERSATIONS = 48;

Deno.test(`${CONVERSATIONS} replies in flight at once in one process, each answered`, async () => {
  const allIn = Promise.withResolvers<void>();
  let inFlight = 0;
  let most = 0;
  const model = startModelServer(async (call) => {
    most = Math.max(most, ++inFlight);
    if (most === CONVERSATIONS) allIn.resolve();
    await allIn.promise;
    inFlight--;
    return { content: `resposta: ${call.body.messages.at(-1).content}` };
  });
  const graph = startGraph();
  const t = await startTestApp({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: "200",
  });
  try {
    const { owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { messageGroupingTime: "FAST" });
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    // Signed Meta posts, each from its own customer, as WhatsApp delivers them.
    for (let i = 0; i < CONVERSATIONS; i++) {
      const from = `55119000${String(i).padStart(5, "0")}`;
      const res = await postSigned(
        owner.client,
        channel.id,
        textMessage(channel.phoneNumberId, `wamid.cap${i}`, `oi ${i}`, from),
      );
      assert.equal(res.status, 200);
    }
    // The deadline guards a hang only: the model holds every call until the last one arrives.
    await graph.waitForCalls(CONVERSATIONS, 60_000);
    assert.equal(most, CONVERSATIONS);
    assert.equal(model.calls.length, CONVERSATIONS);
    const texts = graph.calls.map((c) => JSON.parse(c.body).text.body).sort();
    assert.deepEqual(
      texts,
      Array.from({ length: CONVERSATIONS }, (_, i) => `resposta: oi ${i}`).sort(),
    );
  } finally {
    allIn.resolve();
    await t.close();
    await model.close();
    await graph.close();
  }
});
