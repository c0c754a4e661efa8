/**
 * The retry schedule of event deliveries is counted from each failure (the end of the failed
 * attempt: 5 s after it started for a timeout), not from when the failure was recorded: the next
 * attempt is due 1 s after the first failure and 4 s after the second, and none follows the third.
 * Attempts are recorded here by hand under an injected clock; the assertions read the delay each
 * scheduled job was given (pg-boss' start_after less created_on, one database clock reading).
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { publish } from "./_helpers/events.ts";
import { dueAttempts, recordAttempts, WEBHOOK_DELIVERY_QUEUE } from "../src/webhooks/delivery.ts";

Deno.test("the next attempt is due 1 s, then 4 s, after each failure, however late it was recorded", async () => {
  const clock = new ManualClock();
  const t = await startTestApp({}, { clock, workers: false });
  const deps = t.app.deps;
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const hook = (await owner.client.post(`/api/agents/${agent.id}/webhooks`, {
      event: "human.transferred",
      url: "http://127.0.0.1:9/hook",
    })).body;
    const publishOne = () =>
      publish(t.app, {
        type: "human.transferred",
        workspaceId,
        agentId: agent.id,
        data: { transferSummary: "wants a person", reason: "TAG" },
      });
    const deliveryOf = (eventId: string) =>
      deps.db.webhookDelivery.findFirstOrThrow({ where: { eventId, webhookId: hook.id } });
    /** The retries scheduled for a delivery: attempt number and its delay in ms. */
    const retries = (deliveryId: string) =>
      deps.db.$queryRawUnsafe<Array<{ attempt: number; delayMs: number }>>(
        `SELECT (data->>'attempt')::int AS attempt,
                round(extract(epoch FROM start_after - created_on) * 1000)::int AS "delayMs"
           FROM pgboss.job WHERE name = $1 AND data->>'deliveryId' = $2 AND (data->>'attempt')::int > 1
          ORDER BY 1`,
        WEBHOOK_DELIVERY_QUEUE,
        deliveryId,
      );
    /**
     * The retries as scheduled, each delay within 250 ms above the expected one: pg-boss dates a job
     * at its transaction's start, while its due instant counts from the moment it is inserted, a
     * few milliseconds later.
     */
    const assertRetries = async (
      deliveryId: string,
      expected: Array<{ attempt: number; delayMs: number }>,
    ) => {
      const actual = await retries(deliveryId);
      assert.deepEqual(actual.map((r) => r.attempt), expected.map((e) => e.attempt));
      actual.forEach((r, i) => {
        const want = expected[i].delayMs;
        assert.ok(
          r.delayMs >= want && r.delayMs < want + 250,
          `attempt ${r.attempt}: ${r.delayMs} ms, not ${want}`,
        );
      });
    };
    /** Records a failed attempt that took `durationMs` and was recorded `lateMs` after it ended. */
    const fail = async (deliveryId: string, attempt: number, durationMs: number, lateMs: number) => {
      const [due] = await dueAttempts(deps, [{ deliveryId, attempt, webhookId: hook.id }]);
      assert.ok(due, `attempt ${attempt} is due`);
      const startedAt = clock.now();
      clock.advance(durationMs + lateMs);
      const timedOut = durationMs === 5000;
      const [result] = await recordAttempts(deps, [{
        due,
        outcome: {
          ok: false,
          httpStatus: timedOut ? null : 500,
          error: timedOut ? "timed out after 5000 ms" : null,
          startedAt,
          durationMs,
        },
      }]);
      return result;
    };

    const d = await deliveryOf(await publishOne());
    // A timeout (failed 5 s in), recorded 300 ms after it failed: the next attempt 700 ms later.
    assert.equal(await fail(d.id, 1, 5000, 300), "retrying");
    await assertRetries(d.id, [{ attempt: 2, delayMs: 700 }]);
    // A 500 after 40 ms, recorded 1.5 s late (the database was busy): 4 s from the failure.
    clock.advance(700);
    assert.equal(await fail(d.id, 2, 40, 1500), "retrying");
    await assertRetries(d.id, [{ attempt: 2, delayMs: 700 }, { attempt: 3, delayMs: 2500 }]);
    clock.advance(2500);
    assert.equal(await fail(d.id, 3, 5000, 0), "failed");
    assert.equal((await retries(d.id)).length, 2, "no attempt after the third");

    // Recorded after its wait was already over: due at once.
    const late = await deliveryOf(await publishOne());
    assert.equal(await fail(late.id, 1, 5000, 1200), "retrying");
    await assertRetries(late.id, [{ attempt: 2, delayMs: 0 }]);
    // Recorded at the moment it failed: the full second.
    const prompt = await deliveryOf(await publishOne());
    assert.equal(await fail(prompt.id, 1, 40, 0), "retrying");
    await assertRetries(prompt.id, [{ attempt: 2, delayMs: 1000 }]);
  } finally {
    await t.close();
  }
});
