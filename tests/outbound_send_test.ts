/**
 * Outgoing WhatsApp messages: sent with the channel's sealed token through the
 * Graph stand-in → SENT with the wamid; a Graph error → FAILED with the error, retried only when
 * WhatsApp calls it retryable (then SENT on the retry); never retried for a permanent one.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { customerMessage, graphError, seedChannel, startGraph, waitUntil } from "./_helpers/conversations.ts";
import type { Receiver } from "./_helpers/receiver.ts";

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

/** Meta's pacing refusals, as its error reference shows them. */
const THROUGHPUT = () =>
  graphError(400, 130429, "(#130429) Rate limit hit", "Cloud API message throughput has been reached.");
const PAIR_RATE = () =>
  graphError(
    400,
    131056,
    "(#131056) (Business Account, Consumer Account) pair rate limit hit",
    "Too many messages sent from the sender phone number to the same recipient phone number in a short period of time.",
  );

/** The delay (ms) of the queued send job of `attempt` for the message (queued just after its update). */
async function retryDelayOf(
  t: Awaited<ReturnType<typeof humanSends>>["t"],
  attempt: number,
): Promise<number> {
  const rows = await waitUntil(
    () =>
      t.app.deps.db.$queryRawUnsafe<Array<{ ms: number }>>(
        `SELECT (extract(epoch FROM start_after - created_on) * 1000)::int AS ms
           FROM pgboss.job WHERE name = 'message-send' AND (data->>'attempt')::int = $1`,
        attempt,
      ),
    (found) => found.length > 0,
  );
  assert.equal(rows.length, 1, `one send job of attempt ${attempt}`);
  return rows[0].ms;
}

Deno.test("Meta's throughput refusal (130429): PENDING, retried about 6 s later, one message at the customer", async () => {
  const graph = startGraph((i) =>
    i === 0
      ? THROUGHPUT()
      : Response.json({ messaging_product: "whatsapp", messages: [{ id: "wamid.PACED" }] })
  );
  const { t, row } = await humanSends(graph, "Olá, sem pressa");
  try {
    const paced = await waitUntil(row, (m) => (m.error as { code?: number } | null)?.code === 130429);
    assert.equal(paced.status, "PENDING");
    assert.equal((paced.error as { willRetry: boolean }).willRetry, true);
    const delay = await retryDelayOf(t, 2);
    assert.ok(delay >= 5_000 && delay <= 6_300, `retried after ${delay} ms`);
    const sent = await waitUntil(row, (m) => m.status === "SENT");
    assert.equal(sent.externalId, "wamid.PACED");
    assert.equal(sent.error, null);
    // The refused call delivered nothing: the customer has the one accepted message.
    assert.equal(graph.calls.length, 2);
    assert.equal(JSON.parse(graph.calls[1].body).text.body, "Olá, sem pressa");
  } finally {
    await t.close();
    await graph.close();
  }
});

Deno.test("Meta's pair rate refusal (131056) twice: PENDING, the next try 30 s after the second", async () => {
  const graph = startGraph(() => PAIR_RATE());
  const { t, row } = await humanSends(graph, "Olá outra vez");
  try {
    await graph.waitForCalls(2, 20_000);
    const paced = await waitUntil(row, (m) => (m.error as { attempt?: number } | null)?.attempt === 2);
    assert.equal(paced.status, "PENDING");
    assert.equal((paced.error as { code: number }).code, 131056);
    const delay = await retryDelayOf(t, 3);
    assert.ok(delay >= 29_000 && delay <= 30_300, `retried after ${delay} ms`);
    assert.equal(graph.calls.length, 2);
  } finally {
    await t.close();
    await graph.close();
  }
});
