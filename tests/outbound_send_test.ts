/**
 * Outgoing WhatsApp messages: sent with the channel's sealed token through the
 * Graph stand-in → SENT with the wamid; a Graph error → FAILED with the error, retried only when
 * WhatsApp calls it retryable (then SENT on the retry); never retried for a permanent one.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { customerMessage, seedChannel, startGraph, waitUntil } from "./_helpers/conversations.ts";
import type { Receiver } from "./_helpers/receiver.ts";

const graphError = (status: number, code: number, message: string) =>
  Response.json({ error: { message, type: "OAuthException", code, fbtrace_id: "x" } }, { status });

async function humanSends(graph: Receiver, content: string) {
  const t = await startTestApp({ WHATSAPP_GRAPH_URL: graph.url(""), GROUPING_MEDIUM_MS: "600000" });
  const { workspaceId, owner } = await t.seed.workspace();
  const agent = await t.seed.agent(owner.client);
  const channel = await seedChannel(t.app, workspaceId, agent.id);
  const m = await customerMessage(t.app, {
    workspaceId,
    agentId: agent.id,
    channelId: channel.id,
    content: "oi",
  });
  const path = `/api/conversations/${m.conversationId}`;
  assert.equal((await owner.client.post(`${path}/takeover`)).status, 200);
  assert.equal((await owner.client.post(`${path}/messages`, { content })).status, 200);
  const row = () =>
    t.app.deps.db.message.findFirstOrThrow({
      where: { conversationId: m.conversationId, senderKind: "HUMAN" },
    });
  return { t, row };
}

Deno.test("a permanent Graph error: FAILED with the error, sent once, never retried", async () => {
  const graph = startGraph(() => graphError(400, 131026, "Message undeliverable"));
  const { t, row } = await humanSends(graph, "Olá");
  try {
    const failed = await waitUntil(row, (m) => m.status === "FAILED");
    assert.deepEqual(failed.error, {
      status: 400,
      code: 131026,
      message: (failed.error as { message: string }).message,
      retryable: false,
      attempt: 1,
      willRetry: false,
    });
    assert.match((failed.error as { message: string }).message, /Message undeliverable/);
    assert.equal(failed.externalId, null);
    // Nothing more is queued for it, once the send job itself has finished (it may still be
    // active for a moment after the message row says FAILED).
    const sendJobs = (states: string) =>
      t.app.deps.db.$queryRawUnsafe<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'message-send' AND state IN (${states})`,
      ).then(([{ n }]) => n);
    await waitUntil(() => sendJobs("'active'"), (active) => active === 0);
    assert.equal(await sendJobs("'created', 'retry', 'active'"), 0);
    assert.equal(graph.calls.length, 1);
  } finally {
    await t.close();
    await graph.close();
  }
});

Deno.test("a retryable Graph error: FAILED, then retried and SENT with the wamid", async () => {
  const graph = startGraph((i) =>
    i === 0
      ? graphError(503, 131000, "Something went wrong")
      : Response.json({ messaging_product: "whatsapp", messages: [{ id: "wamid.RETRIED" }] })
  );
  const { t, row } = await humanSends(graph, "Olá de novo");
  try {
    const sent = await waitUntil(row, (m) => m.status === "SENT");
    assert.equal(sent.externalId, "wamid.RETRIED");
    assert.equal(sent.error, null);
    assert.equal(graph.calls.length, 2);
    assert.equal(JSON.parse(graph.calls[1].body).text.body, "Olá de novo");
  } finally {
    await t.close();
    await graph.close();
  }
});

Deno.test("a Graph stand-in that keeps failing retryably: three attempts, then FAILED for good", async () => {
  const graph = startGraph(() => graphError(500, 2, "Service temporarily unavailable"));
  const { t, row } = await humanSends(graph, "Olá");
  try {
    await graph.waitForCalls(3, 20_000);
    const failed = await waitUntil(row, (m) => (m.error as { attempt?: number } | null)?.attempt === 3);
    assert.equal(failed.status, "FAILED");
    assert.equal((failed.error as { willRetry: boolean }).willRetry, false);
    assert.equal(graph.calls.length, 3);
  } finally {
    await t.close();
    await graph.close();
  }
});
