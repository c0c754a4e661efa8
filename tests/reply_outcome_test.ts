/**
 * What a reply's release writes can fail no more than the reply: a wamid the channel repeats (one
 * another message already holds) is not kept, the message is SENT all the same, the claim is
 * released and the conversation answers its next message; the stale-send sweep sends nothing again.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { customerMessage, messagesOf, seedChannel, startModelServer } from "./_helpers/conversations.ts";
import { startReceiver } from "./_helpers/receiver.ts";
import { runReply } from "../src/conversations/pipeline/reply.ts";
import { sweepStaleSends } from "../src/conversations/outbound.ts";

const WINDOW_MS = 1000;

Deno.test("a wamid the channel repeats: SENT without it, the claim released, the next message answered, nothing sent twice", async () => {
  const model = startModelServer((call) => ({ content: `eco: ${call.body.messages.at(-1).content}` }));
  const graph = startReceiver(() =>
    Response.json({ messaging_product: "whatsapp", messages: [{ id: "wamid.SAME" }] })
  );
  const clock = new ManualClock();
  const t = await startTestApp({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: String(WINDOW_MS),
  }, { clock, workers: false });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { messageGroupingTime: "FAST" });
    const channel = await seedChannel(t.app, workspaceId, agent.id);
    const write = (content: string) =>
      customerMessage(t.app, { workspaceId, agentId: agent.id, channelId: channel.id, content });
    const { conversationId } = await write("um");
    clock.advance(WINDOW_MS);
    await runReply(t.app.deps, { conversationId });
    await write("dois");
    clock.advance(WINDOW_MS);
    await runReply(t.app.deps, { conversationId });

    const conversation = await t.app.deps.db.conversation.findUniqueOrThrow({
      where: { id: conversationId },
    });
    assert.equal(conversation.replyClaimedAt, null, "released");
    const rows = await messagesOf(t.app, conversationId);
    assert.deepEqual(
      rows.map((
        m,
      ) => [m.senderKind, m.content, m.status, m.externalId, m.sendClaimedAt, m.answeredAt !== null]),
      [
        ["CUSTOMER", "um", "RECEIVED", null, null, true],
        ["AI", "eco: um", "SENT", "wamid.SAME", null, false],
        ["CUSTOMER", "dois", "RECEIVED", null, null, true],
        ["AI", "eco: dois", "SENT", null, null, false],
      ],
    );
    assert.equal(await sweepStaleSends(t.app.deps, new Date(clock.now().getTime() + 10 * 60_000)), 0);
    assert.equal(graph.calls.length, 2);

    await write("três");
    clock.advance(WINDOW_MS);
    await runReply(t.app.deps, { conversationId });
    assert.equal(graph.calls.length, 3);
    assert.equal(JSON.parse(graph.calls[2].body).text.body, "eco: três");
  } finally {
    await t.close();
    await model.close();
    await graph.close();
  }
});
