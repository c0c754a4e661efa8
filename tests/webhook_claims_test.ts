/**
 * First attempts made by the process that published their events, without a job: each delivery is
 * claimed by that process until its attempt is recorded, and a dead process' claims are handed to
 * jobs at once (src/webhooks/recovery.ts). A real server process (src/main.ts) is killed with
 * SIGKILL while its own first attempts are in flight; the process started in its place makes them
 * again within seconds, once each. In-process: the recovery queues one job per delivery of a dead
 * process, none beside a job the dead process had already made for it, and leaves live claims alone.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { type ServerProcess, startServerProcess } from "./_helpers/server_process.ts";
import { publish } from "./_helpers/events.ts";
import { eventually, startReceiver } from "./_helpers/receiver.ts";
import { recoverDeadDeliveryClaims } from "../src/webhooks/recovery.ts";
import { WEBHOOK_DELIVERY_QUEUE } from "../src/webhooks/delivery.ts";

interface JobRow {
  id: string;
  data: { deliveryId: string; attempt: number; webhookId?: string };
  state: string;
  due: boolean;
}

const deliveryJobs = (t: Awaited<ReturnType<typeof startTestApp>>) =>
  t.app.deps.db.$queryRawUnsafe<JobRow[]>(
    `SELECT id::text, data, state::text, start_after <= now() AS due FROM pgboss.job WHERE name = $1 ORDER BY id`,
    WEBHOOK_DELIVERY_QUEUE,
  );

Deno.test("a server killed while making its events' first attempts itself: the next one makes them within seconds, once each", async () => {
  // This process only reads; the server processes publish and deliver.
  const t = await startTestApp({}, { workers: false });
  const receiver = startReceiver();
  const servers: ServerProcess[] = [];
  let unlock!: () => void;
  let locking: Promise<unknown> | undefined;
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const hook = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.received",
      url: receiver.url(),
    });
    assert.equal(hook.status, 201);
    servers.push(await startServerProcess(t.db.url));
    const [first] = servers;

    // The test holds the attempts' table: the server makes its first attempts, and its record of
    // them waits (the receiver answers at once, so none is handed off to a job meanwhile).
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => locked = resolve);
    const unlocked = new Promise<void>((resolve) => unlock = resolve);
    locking = t.app.deps.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`LOCK TABLE "DeliveryAttempt" IN SHARE MODE`);
      locked();
      await unlocked;
    }, { timeout: 120_000 });
    await isLocked;
    // Test events, published by the server: it claims their deliveries and calls the receiver itself.
    const deliveryIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${first.url}/api/agents/${agent.id}/webhooks/${hook.body.id}/test`, {
        method: "POST",
        headers: { authorization: `Bearer ${owner.token}`, "x-workspace-id": workspaceId },
      });
      assert.equal(res.status, 202);
      deliveryIds.push((await res.json()).id);
    }
    await receiver.waitForCalls(1, 20_000);
    await eventually(async () => {
      const [w] = await t.app.deps.db.$queryRaw<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'
           AND query LIKE '%INSERT INTO "DeliveryAttempt"%'`;
      return w.n >= 1 || undefined;
    }, 20_000);
    const before = receiver.calls.length;
    const [instance] = await t.app.deps.db.serverInstance.findMany({ where: { pid: first.child.pid } });
    await first.kill();
    // Its waiting statement ends once PostgreSQL sees its client gone (it checks every 500 ms): let
    // go of the table only then, or that statement would record the attempt after all.
    await eventually(async () => {
      const [w] = await t.app.deps.db.$queryRaw<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND query LIKE '%INSERT INTO "DeliveryAttempt"%'
           AND pid <> pg_backend_pid()`;
      return w.n === 0 || undefined;
    }, 20_000);
    unlock();
    await locking;

    const claimed = await t.app.deps.db.webhookDelivery.findMany({ where: { id: { in: deliveryIds } } });
    assert.deepEqual(claimed.map((d) => [d.status, d.attemptCount, d.claimedBy]), [
      ["PENDING", 0, instance.id],
      ["PENDING", 0, instance.id],
      ["PENDING", 0, instance.id],
    ]);
    assert.deepEqual(await deliveryJobs(t), [], "no job: the claims stand in for them");

    servers.push(await startServerProcess(t.db.url));
    const ready = performance.now();
    const succeeded = () =>
      t.app.deps.db.webhookDelivery.count({ where: { id: { in: deliveryIds }, status: "SUCCEEDED" } });
    await eventually(async () => (await succeeded()) === 3 || undefined, 30_000).catch((e) => {
      throw new Error(`${e.message}\nserver stderr:\n${servers.map((s) => s.stderr()).join("\n---\n")}`);
    });
    const recoveredInMs = performance.now() - ready;

    const deliveries = await t.app.deps.db.webhookDelivery.findMany({
      where: { id: { in: deliveryIds } },
      include: { attempts: true },
    });
    for (const d of deliveries) {
      assert.equal(d.claimedBy, null);
      assert.equal(d.attemptCount, 1, "an attempt not recorded before the kill is made again as attempt 1");
      assert.deepEqual(d.attempts.map((a) => [a.number, a.httpStatus]), [[1, 200]]);
    }
    // Handed to one job each, under the delivery's id.
    const jobs = await deliveryJobs(t);
    assert.deepEqual(jobs.map((j) => j.id).sort(), [...deliveryIds].sort());
    assert.deepEqual(jobs.map((j) => [j.data.attempt, j.state]), Array(3).fill([1, "completed"]));
    // At least once: every event sent again after the kill, always with its one key.
    assert.equal(receiver.calls.length, before + 3);
    const keys = new Map<string, Set<string>>();
    for (const c of receiver.calls) {
      const id = c.headers.get("webhook-id")!;
      keys.set(id, (keys.get(id) ?? new Set()).add(c.headers.get("x-idempotency-key")!));
    }
    assert.deepEqual([...keys.keys()].sort(), deliveries.map((d) => d.eventId).sort());
    for (const k of keys.values()) assert.equal(k.size, 1);
    assert.ok(
      recoveredInMs < 15_000,
      `made again ${Math.round(recoveredInMs)} ms after the new process was ready`,
    );
  } finally {
    unlock?.();
    await locking?.catch(() => {});
    for (const s of servers) await s.stop();
    await receiver.close();
    await t.close();
  }
});

Deno.test("the recovery queues each dead process' first attempt once, and leaves live claims alone", async () => {
  const t = await startTestApp({}, { workers: false });
  try {
    const db = t.app.deps.db;
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const hook = await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "message.received",
      url: "http://127.0.0.1:9/hook",
    });
    for (let n = 0; n < 4; n++) {
      await publish(t.app, { type: "message.received", workspaceId, agentId: agent.id, data: { n } });
    }
    const [lost, carriedOn, recorded, live] = await db.webhookDelivery.findMany({
      orderBy: { createdAt: "asc" },
    });
    // As a process would have left them: claimed, with no job (this app published them as jobs).
    await db.$executeRawUnsafe(`DELETE FROM pgboss.job WHERE name = $1`, WEBHOOK_DELIVERY_QUEUE);
    const dead = await db.serverInstance.create({ data: { host: "gone", pid: 1 } });
    await db.webhookDelivery.updateMany({
      where: { id: { in: [lost.id, carriedOn.id, recorded.id] } },
      data: { claimedBy: dead.id },
    });
    await db.webhookDelivery.update({ where: { id: live.id }, data: { claimedBy: t.app.deps.instance.id } });
    // The dead process had deferred one attempt (a job under the delivery's id), and another's
    // attempt was recorded (a failure: PENDING, attempt 2 due) but its claim not yet ended.
    await t.app.deps.jobs.send(db, WEBHOOK_DELIVERY_QUEUE, [{
      id: carriedOn.id,
      data: { deliveryId: carriedOn.id, attempt: 1, webhookId: hook.body.id },
      startAfterMs: 60_000,
    }]);
    await db.webhookDelivery.update({ where: { id: recorded.id }, data: { attemptCount: 1 } });

    assert.equal(await recoverDeadDeliveryClaims(t.app.deps), 3);
    const after = new Map((await db.webhookDelivery.findMany()).map((d) => [d.id, d.claimedBy]));
    assert.deepEqual(
      [after.get(lost.id), after.get(carriedOn.id), after.get(recorded.id), after.get(live.id)],
      [null, null, null, t.app.deps.instance.id],
    );
    const jobs = await deliveryJobs(t);
    assert.deepEqual(
      jobs.map((j) => [j.id, j.data, j.state, j.due]).sort(),
      [
        [lost.id, { deliveryId: lost.id, attempt: 1, webhookId: hook.body.id }, "created", true],
        [carriedOn.id, { deliveryId: carriedOn.id, attempt: 1, webhookId: hook.body.id }, "created", false],
      ].sort(),
    );
    // A second pass finds nothing.
    assert.equal(await recoverDeadDeliveryClaims(t.app.deps), 0);
    assert.equal((await deliveryJobs(t)).length, 2);
  } finally {
    await t.close();
  }
});
