/**
 * Fairness of delivery: a receiver that hangs holds at most its cap of
 * attempts in flight (WEBHOOK_CONCURRENCY per webhook in a process) and no worker waits on it, so
 * another workspace's deliveries keep arriving while it hangs.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { publish } from "./_helpers/events.ts";
import { eventually, startReceiver } from "./_helpers/receiver.ts";
import { WEBHOOK_CONCURRENCY } from "../src/jobs/workers/webhook_delivery.ts";

Deno.test("a hanging receiver holding its cap does not hold up another workspace's deliveries", async () => {
  const t = await startTestApp();
  const slow = startReceiver(() => "hang");
  const fast = startReceiver();
  try {
    const a = await t.seed.workspace("Slow Co");
    const b = await t.seed.workspace("Fast Co");
    const slowAgent = await t.seed.agent(a.owner.client);
    const fastAgent = await t.seed.agent(b.owner.client);
    await a.owner.client.post(`/api/agents/${slowAgent.id}/webhooks`, {
      event: "message.received",
      url: slow.url(),
    });
    await b.owner.client.post(`/api/agents/${fastAgent.id}/webhooks`, {
      event: "message.received",
      url: fast.url(),
    });
    const send = (workspaceId: string, agentId: string, n: number) =>
      publish(t.app, { type: "message.received", workspaceId, agentId, data: { n } });

    // Twice the cap for the hanging receiver: it takes the cap, the rest is deferred.
    const hanging = 2 * WEBHOOK_CONCURRENCY;
    await Promise.all(Array.from({ length: hanging }, (_, n) => send(a.workspaceId, slowAgent.id, n)));
    await slow.waitForCalls(WEBHOOK_CONCURRENCY, 4000);

    // Steady traffic to the fast receiver, interleaved with more for the hanging one, while the
    // hanging attempts still hold every slot of theirs. Fair means every fast delivery arrives
    // before any hanging attempt has ended (5 s timeout): no fast delivery waited on one.
    const fastEvents = 30;
    for (let n = 0; n < fastEvents; n++) {
      await send(b.workspaceId, fastAgent.id, n);
      await send(a.workspaceId, slowAgent.id, hanging + n);
    }
    const calls = await fast.waitForCalls(fastEvents, 30_000);
    const endedHangingAttempts = await t.app.deps.db.deliveryAttempt.count({
      where: { delivery: { webhook: { agentId: slowAgent.id } } },
    });
    assert.equal(endedHangingAttempts, 0, "a fast delivery arrived only after a hanging attempt ended");
    assert.equal(slow.calls.length, WEBHOOK_CONCURRENCY, "the hanging receiver never had more than its cap");
    assert.deepEqual(calls.map((c) => JSON.parse(c.body).data.n).sort((x, y) => x - y), [
      ...Array(fastEvents).keys(),
    ]);

    // Released, the hanging receiver gets the rest: nothing deferred is lost.
    slow.release();
    const total = hanging + fastEvents;
    await eventually(async () =>
      (await t.app.deps.db.webhookDelivery.count({
          where: { status: "SUCCEEDED", webhook: { agentId: slowAgent.id } },
        })) === total || undefined, 30_000);
  } finally {
    await slow.close();
    await fast.close();
    await t.close();
  }
});
