/** Event webhook timeout (5 s per attempt): a receiver that does not answer is cut off. */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { publish } from "./_helpers/events.ts";
import { eventually, startReceiver } from "./_helpers/receiver.ts";

Deno.test("a receiver that does not answer within 5 s is cut off, and the next attempt follows 1 s later", async () => {
  const t = await startTestApp();
  const receiver = startReceiver((_call, index) => index === 0 ? "hang" : new Response("ok"));
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const hook = (await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "human.transferred",
      url: receiver.url(),
    }))
      .body;
    await publish(t.app, {
      type: "human.transferred",
      workspaceId,
      agentId: agent.id,
      data: { transferSummary: "wants a person", reason: "TAG" },
    });
    const [first, second] = await receiver.waitForCalls(2);
    // As the receiver saw it (each arrival may come a little after its send on a loaded machine).
    assert.ok(
      second.at - first.at >= 5000,
      `the second call came ${Math.round(second.at - first.at)} ms after`,
    );
    assert.equal(second.headers.get("x-idempotency-key"), first.headers.get("x-idempotency-key"));

    const d = await eventually(async () => {
      const row = await t.app.deps.db.webhookDelivery.findFirst({
        where: { webhookId: hook.id, status: "SUCCEEDED" },
        include: { attempts: { orderBy: { number: "asc" } } },
      });
      return row ?? undefined;
    });
    assert.equal(d.attemptCount, 2);
    const [a1, a2] = d.attempts;
    assert.equal(a1.httpStatus, null);
    assert.equal(a1.error, "timed out after 5000 ms");
    assert.ok(a1.durationMs >= 5000 && a1.durationMs < 6000, `attempt 1 took ${a1.durationMs} ms`);
    // The next attempt waits 1 s from the failure (not the 4 s of the attempt after it).
    const wait = a2.startedAt.getTime() - (a1.startedAt.getTime() + a1.durationMs);
    assert.ok(wait >= 990 && wait < 3000, `attempt 2 started ${wait} ms after attempt 1 ended`);
    assert.equal(a2.httpStatus, 200);
    assert.equal(JSON.parse(second.body).data.transferSummary, "wants a person");
    const webhook = await owner.client.get(`/api/agents/${agent.id}/webhooks/${hook.id}`);
    assert.equal(webhook.body.lastError, null, "no lastError while attempts remain");
  } finally {
    await receiver.close();
    await t.close();
  }
});
