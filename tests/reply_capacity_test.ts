/**
 * Replies mostly wait for the model, so one process keeps many of them in flight: 48 conversations
 * whose windows close together all reach the model at once (it answers none until the 48th call
 * arrives), and all 48 are answered. The same for replies queued by a process that runs no workers
 * and taken by another's workers (32 at once). With a small limit of replies at once, the model
 * would never see the last call while it held the others, and the test would end at its deadline.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { customerMessage, seedChannel, startGraph, startModelServer } from "./_helpers/conversations.ts";
import { buildApp } from "../src/app.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { testConfig } from "./_helpers/app.ts";
import { createWhatsAppChannel, postSigned, textMessage } from "./_helpers/whatsapp.ts";

const CONVERSATIONS = 48;
const FETCHED = 32;

/** A model stand-in that answers no call until `n` are in flight at once. */
function heldModel(n: number) {
  const allIn = Promise.withResolvers<void>();
  let inFlight = 0;
  const held = {
    most: 0,
    release: () => allIn.resolve(),
    model: startModelServer(async (call) => {
      held.most = Math.max(held.most, ++inFlight);
      if (held.most === n) allIn.resolve();
      await allIn.promise;
      inFlight--;
      return { content: `resposta: ${call.body.messages.at(-1).content}` };
    }),
  };
  return held;
}

const answers = (n: number) => Array.from({ length: n }, (_, i) => `resposta: oi ${i}`).sort();

Deno.test(`${CONVERSATIONS} replies in flight at once in one process, each answered`, async () => {
  const held = heldModel(CONVERSATIONS);
  const { model } = held;
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
    assert.equal(held.most, CONVERSATIONS);
    assert.equal(model.calls.length, CONVERSATIONS);
    assert.deepEqual(graph.calls.map((c) => JSON.parse(c.body).text.body).sort(), answers(CONVERSATIONS));
  } finally {
    held.release();
    await t.close();
    await model.close();
    await graph.close();
  }
});

Deno.test(`replies queued by a process without workers: another process' workers take ${FETCHED} at once`, async () => {
  const held = heldModel(FETCHED);
  const graph = startGraph();
  const env = {
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: held.model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: "200",
  };
  // This process stores the messages: its window listener queues the replies in the database.
  const t = await startTestApp(env, { workers: false });
  const workers = await buildApp(testConfig(t.db.url, env), { logger: silentLogger, bootstrap: false });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { messageGroupingTime: "FAST" });
    const channel = await seedChannel(t.app, workspaceId, agent.id);
    await Promise.all(Array.from({ length: FETCHED }, (_, i) =>
      customerMessage(t.app, {
        workspaceId,
        agentId: agent.id,
        channelId: channel.id,
        contact: { externalId: `55119100${String(i).padStart(5, "0")}`, name: `Cliente ${i}` },
        content: `oi ${i}`,
      })));
    // The deadline guards a hang only: the model holds every call until the last one arrives.
    await graph.waitForCalls(FETCHED, 60_000);
    assert.equal(held.most, FETCHED);
    assert.deepEqual(graph.calls.map((c) => JSON.parse(c.body).text.body).sort(), answers(FETCHED));
  } finally {
    held.release();
    await workers.stop();
    await t.close();
    await held.model.close();
    await graph.close();
  }
});
