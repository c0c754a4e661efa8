/**
 * The first send of a reply happens right after its commit (outbound.ts): the writer's transaction
 * stores the message claimed and queues no job; every other attempt claims it first, so the writer
 * and a racing job send it once; a claim left by a crashed sender is found by the stale-send sweep
 * once stale and taken over by the job it queues (injected clock). The app runs without workers:
 * the test plays every sender and the sweep itself.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { customerMessage, seedChannel, startGraph } from "./_helpers/conversations.ts";
import type { Receiver } from "./_helpers/receiver.ts";
import {
  MESSAGE_SEND_QUEUE,
  SEND_CLAIM_STALE_MS,
  sendCommitted,
  sendMessage,
  storeOutgoing,
  sweepStaleSends,
} from "../src/conversations/outbound.ts";

async function setup(graph: Receiver, clock: ManualClock) {
  const t = await startTestApp({ WHATSAPP_GRAPH_URL: graph.url("") }, { clock, workers: false });
  const { workspaceId, owner } = await t.seed.workspace();
  const agent = await t.seed.agent(owner.client);
  const channel = await seedChannel(t.app, workspaceId, agent.id);
  const m = await customerMessage(t.app, {
    workspaceId,
    agentId: agent.id,
    channelId: channel.id,
    content: "oi",
  });
  const deps = t.app.deps;
  /** An AI reply of `parts`, stored as the reply pipeline does (direct: the writer sends it). */
  const reply = (parts: string[]) =>
    deps.db.$transaction(async (tx) =>
      (await storeOutgoing(
        deps,
        tx,
        clock.now(),
        parts.map((content) => ({
          workspaceId,
          agentId: agent.id,
          conversationId: m.conversationId,
          channelId: channel.id,
          channelType: "WHATSAPP",
          sender: "AI" as const,
          content,
        })),
        { direct: true },
      )).stored.map((s) => s.id)
    );
  const target = { channelId: channel.id, channelType: "WHATSAPP", to: "5511999990000" };
  /** The writer's send right after its commit. */
  const writerSends = (ids: string[]) =>
    deps.db.message.findMany({ where: { id: { in: ids } }, orderBy: { createdAt: "asc" } })
      .then((rows) => sendCommitted(deps, target, rows));
  const row = (id: string) => deps.db.message.findUniqueOrThrow({ where: { id } });
  const jobs = (messageId: string) =>
    deps.db.$queryRawUnsafe<Array<{ attempt: number; state: string; delayMs: number }>>(
      `SELECT (data->>'attempt')::int AS attempt, state::text AS state,
              (extract(epoch FROM start_after - created_on) * 1000)::int AS "delayMs"
         FROM pgboss.job WHERE name = $1 AND data->>'messageId' = $2 ORDER BY created_on`,
      MESSAGE_SEND_QUEUE,
      messageId,
    );
  return { t, deps, reply, writerSends, row, jobs };
}

Deno.test("the writer's send and racing send jobs send each message once", async () => {
  const graph = startGraph();
  const clock = new ManualClock();
  const { t, deps, reply, writerSends, row, jobs } = await setup(graph, clock);
  try {
    const ids = await reply(["Olá!", "Como posso ajudar?"]);
    // Claimed by the writer's own transaction: no job can take them before it.
    for (const id of ids) assert.deepEqual((await row(id)).sendClaimedAt, clock.now());
    // No job: the writer sends them (the sweep covers its death).
    for (const id of ids) assert.deepEqual(await jobs(id), []);
    // The writer and four runs of a job of each at once (as a sweep's job racing a slow writer).
    await Promise.all([
      writerSends(ids),
      ...ids.flatMap((messageId) =>
        Array.from({ length: 4 }, () => sendMessage(deps, { messageId, attempt: 1 }))
      ),
    ]);
    assert.equal(graph.calls.length, 2);
    assert.deepEqual(
      graph.calls.map((c) => JSON.parse(c.body).text.body).sort(),
      ["Como posso ajudar?", "Olá!"],
    );
    for (const id of ids) {
      const m = await row(id);
      assert.equal(m.status, "SENT");
      assert.match(m.externalId ?? "", /^wamid\.TEST[01]$/);
      assert.equal(m.sendClaimedAt, null);
    }
    // A job that met the writer's claim in flight came back for later (at most one per loser);
    // when they run they find the messages sent: no call, nothing more queued.
    const before = await Promise.all(ids.map(async (id) => (await jobs(id)).length));
    for (const n of before) assert.ok(n >= 0 && n <= 4, `${n} send jobs`);
    clock.advance(SEND_CLAIM_STALE_MS + 1000);
    for (const [i, messageId] of ids.entries()) {
      for (let k = 0; k < before[i]; k++) await sendMessage(deps, { messageId, attempt: 1 });
    }
    assert.equal(graph.calls.length, 2);
    assert.deepEqual(await Promise.all(ids.map(async (id) => (await jobs(id)).length)), before);
    // Sent: the sweep finds nothing.
    assert.equal(await sweepStaleSends(deps, clock.now()), 0);
  } finally {
    await t.close();
    await graph.close();
  }
});

Deno.test("a message claimed by a sender that crashed is queued by the stale-send sweep once the claim is stale", async () => {
  const graph = startGraph();
  const clock = new ManualClock(new Date("2026-11-20T10:00:00.000Z"));
  const { t, deps, reply, writerSends, row, jobs } = await setup(graph, clock);
  try {
    const [id] = await reply(["Olá!"]);
    // Stored claimed by its writer, which died before its send (sendCommitted never runs).
    assert.deepEqual((await row(id)).sendClaimedAt, clock.now());
    // Another message, sent by its live writer a moment later: never the sweep's.
    clock.advance(1000);
    const [other] = await reply(["Outra."]);
    await writerSends([other]);
    assert.equal(graph.calls.length, 1);

    // A sweep while the claim is fresh queues nothing.
    clock.advance(SEND_CLAIM_STALE_MS - 1000 - 1);
    assert.equal(await sweepStaleSends(deps, clock.now()), 0);
    assert.deepEqual(await jobs(id), []);

    // Stale: one send job (attempt 1), which takes the claim over and sends it.
    clock.advance(1);
    assert.equal(await sweepStaleSends(deps, clock.now()), 1);
    const queued = await jobs(id);
    assert.deepEqual(queued.map((j) => [j.attempt, j.state]), [[1, "created"]]);
    assert.deepEqual(await jobs(other), []);
    await sendMessage(deps, { messageId: id, attempt: 1 });
    assert.equal(graph.calls.length, 2);
    assert.equal(JSON.parse(graph.calls[1].body).text.body, "Olá!");
    const sent = await row(id);
    assert.equal(sent.status, "SENT");
    assert.equal(sent.externalId, "wamid.TEST1");
    assert.equal(sent.sendClaimedAt, null);

    // Sent: later sweeps and runs of the job do nothing.
    clock.advance(SEND_CLAIM_STALE_MS);
    await sendMessage(deps, { messageId: id, attempt: 1 });
    assert.equal(graph.calls.length, 2);
    assert.equal(await sweepStaleSends(deps, clock.now()), 0);
    assert.deepEqual(await jobs(id), queued);
  } finally {
    await t.close();
    await graph.close();
  }
});

Deno.test("a retryable failure of the writer's send: FAILED, retried by a job, nothing for the sweep", async () => {
  const graph = startGraph((i) =>
    i === 0
      ? Response.json({ error: { message: "Something went wrong", code: 131000 } }, { status: 503 })
      : Response.json({ messaging_product: "whatsapp", messages: [{ id: "wamid.RETRIED" }] })
  );
  const clock = new ManualClock();
  const { t, deps, reply, writerSends, row, jobs } = await setup(graph, clock);
  try {
    const [id] = await reply(["Olá!"]);
    await writerSends([id]);
    const failed = await row(id);
    assert.equal(failed.status, "FAILED");
    assert.deepEqual(
      { ...(failed.error as Record<string, unknown>), message: undefined },
      { status: 503, code: 131000, message: undefined, retryable: true, attempt: 1, willRetry: true },
    );
    assert.equal(failed.sendClaimedAt, null);
    assert.deepEqual((await jobs(id)).map((j) => j.attempt), [2]);

    // Not claimed: the sweep leaves it to its retry, even long after.
    clock.advance(SEND_CLAIM_STALE_MS * 2);
    assert.equal(await sweepStaleSends(deps, clock.now()), 0);
    // A stray attempt 1 finds it FAILED: not its to send.
    await sendMessage(deps, { messageId: id, attempt: 1 });
    assert.equal(graph.calls.length, 1);
    // The retry sends it.
    await sendMessage(deps, { messageId: id, attempt: 2 });
    assert.equal(graph.calls.length, 2);
    const sent = await row(id);
    assert.equal(sent.status, "SENT");
    assert.equal(sent.externalId, "wamid.RETRIED");
    assert.equal(sent.error, null);
    assert.equal((await jobs(id)).length, 1);
  } finally {
    await t.close();
    await graph.close();
  }
});
