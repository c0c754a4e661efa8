/**
 * Durability of event delivery (at least once, docs/behaviour.md "Event webhooks and outbound calls"): a real server
 * process (src/main.ts) is killed with SIGKILL while its attempts are in flight; after a restart,
 * every accepted event is delivered.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { type ServerProcess, startServerProcess } from "./_helpers/server_process.ts";
import { publish } from "./_helpers/events.ts";
import { eventually, startReceiver } from "./_helpers/receiver.ts";

Deno.test("a server killed with SIGKILL mid-delivery loses nothing: after a restart every accepted event is delivered", async () => {
  // This process only publishes; the server processes do the delivering.
  const t = await startTestApp({}, { workers: false });
  const receiver = startReceiver(() => "hang");
  const servers: ServerProcess[] = [];
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.received",
      url: receiver.url(),
    });
    const send = (n: number) =>
      publish(t.app, { type: "message.received", workspaceId, agentId: agent.id, data: { n } });
    const before: string[] = [];
    for (let i = 0; i < 20; i++) before.push(await send(i));

    servers.push(await startServerProcess(t.db.url));
    // Every attempt is in flight in the server (the receiver holds them all), then the server dies.
    await receiver.waitForCalls(20, 20_000);
    servers[0].child.kill("SIGKILL");
    assert.equal((await servers[0].child.status).signal, "SIGKILL");
    await servers[0].reading;
    assert.equal(await t.app.deps.db.deliveryAttempt.count(), 0, "nothing was recorded before the kill");

    // Accepted while no server runs.
    const during: string[] = [];
    for (let i = 20; i < 25; i++) during.push(await send(i));
    receiver.release();
    const killedAt = performance.now();

    servers.push(await startServerProcess(t.db.url));
    await eventually(
      async () =>
        (await t.app.deps.db.webhookDelivery.count({ where: { status: "SUCCEEDED" } })) === 25 || undefined,
      30_000,
    ).catch((e) => {
      throw new Error(`${e.message}\nserver stderr:\n${servers.map((s) => s.stderr()).join("\n---\n")}`);
    });
    const recoveredInMs = performance.now() - killedAt;

    const deliveries = await t.app.deps.db.webhookDelivery.findMany({ include: { attempts: true } });
    assert.deepEqual(deliveries.map((d) => d.eventId).sort(), [...before, ...during].sort());
    for (const d of deliveries) {
      assert.equal(d.attemptCount, 1, "the killed attempt was never recorded, so its retry is attempt 1");
      assert.deepEqual(d.attempts.map((a) => [a.number, a.httpStatus]), [[1, 200]]);
    }
    // At least once: the killed attempts were sent again, with the same idempotency key.
    const keysById = new Map<string, Set<string>>();
    for (const c of receiver.calls) {
      const id = c.headers.get("webhook-id")!;
      keysById.set(id, (keysById.get(id) ?? new Set()).add(c.headers.get("x-idempotency-key")!));
    }
    assert.deepEqual([...keysById.keys()].sort(), [...before, ...during].sort());
    for (const keys of keysById.values()) assert.equal(keys.size, 1);
    assert.ok(recoveredInMs < 20_000, `recovered in ${Math.round(recoveredInMs)} ms`);
  } finally {
    for (const s of servers) await s.stop();
    await receiver.close();
    await t.close();
  }
});
