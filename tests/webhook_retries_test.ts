/**
 * Event webhook retries: 3 attempts at 0 s, 1 s and 5 s for every
 * kind of failure, lastError afterwards, nothing more; then a manual redelivery. Real time: the
 * gaps are measured at the receivers, with a tolerance.
 */
import assert from "node:assert/strict";
import { startTestApp, type TestApp } from "./_helpers/app.ts";
import { assertProblem } from "./_helpers/problem.ts";
import { publish } from "./_helpers/events.ts";
import {
  type Call,
  eventually,
  sha256HexOf,
  startClosingReceiver,
  startReceiver,
  verifyStandardWebhook,
} from "./_helpers/receiver.ts";

async function settled(t: TestApp, webhookId: string) {
  return await eventually(async () => {
    const d = await t.app.deps.db.webhookDelivery.findFirst({
      where: { webhookId },
      include: { attempts: { orderBy: { number: "asc" } } },
    });
    return d && d.status !== "PENDING" ? d : undefined;
  });
}

/** Gaps between calls are 1 s then 4 s after the failure (the failures here take milliseconds). */
function assertSpacing(at: number[], what: string) {
  assert.equal(at.length, 3, `${what}: 3 attempts`);
  const [g1, g2] = [at[1] - at[0], at[2] - at[1]];
  assert.ok(g1 >= 950 && g1 <= 1500, `${what}: 1st gap ${Math.round(g1)} ms, expected about 1000`);
  assert.ok(g2 >= 3950 && g2 <= 5000, `${what}: 2nd gap ${Math.round(g2)} ms, expected about 4000`);
}

Deno.test("failing receivers (500, redirect, dropped connection, refused address) get 3 attempts at 0, 1 and 5 s, then lastError; a redelivery starts over", async () => {
  const t = await startTestApp();
  let answer500 = true;
  const failing = startReceiver(() => new Response("no", { status: answer500 ? 500 : 200 }));
  const redirecting = startReceiver((call) =>
    call.path === "/hook"
      ? new Response(null, { status: 302, headers: { location: "/elsewhere" } })
      : new Response("ok")
  );
  const closing = startClosingReceiver();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const register = async (url: string) =>
      (await owner.client.post(`/api/agents/${agent.id}/webhooks`, { event: "conversation.opened", url }))
        .body;
    const w500 = await register(failing.url());
    const w302 = await register(redirecting.url());
    const wClosed = await register(closing.url());
    const wRefused = await register(failing.url("/refused"));
    // As if its host now resolved to a metadata address: written directly, past the registration check.
    await t.app.deps.db.eventWebhook.update({
      where: { id: wRefused.id },
      data: { url: "http://169.254.169.254/latest/meta-data" },
    });

    const eventId = await publish(t.app, {
      type: "conversation.opened",
      workspaceId,
      agentId: agent.id,
      data: {},
    });
    const [calls500, calls302, callsClosed] = await Promise.all([
      failing.waitForCalls(3),
      redirecting.waitForCalls(3),
      closing.waitForCalls(3),
    ]);
    const [d500, d302, dClosed, dRefused] = await Promise.all(
      [w500, w302, wClosed, wRefused].map((w) => settled(t, w.id)),
    );

    assertSpacing(calls500.map((c) => c.at), "500");
    assertSpacing(calls302.map((c) => c.at), "302");
    assertSpacing(callsClosed.map((c) => c.at), "dropped connection");
    assertSpacing(dRefused.attempts.map((a) => a.startedAt.getTime()), "refused");

    const key = await sha256HexOf(eventId);
    const check = async (calls: Call[], secret: string) => {
      for (const c of calls) {
        assert.equal(c.headers.get("x-idempotency-key"), key, "the same key on every attempt");
        assert.equal(c.headers.get("webhook-id"), eventId);
        assert.ok(await verifyStandardWebhook(secret, c.headers, c.body));
      }
      assert.deepEqual(new Set(calls.map((c) => c.body)).size, 1, "the same body on every attempt");
    };
    await check(calls500, w500.signingSecret);
    await check(calls302, w302.signingSecret);
    await check(callsClosed, wClosed.signingSecret);
    assert.equal(
      redirecting.calls.filter((c) => c.path === "/elsewhere").length,
      0,
      "the redirect was not followed",
    );
    assert.equal(failing.calls.filter((c) => c.path === "/refused").length, 0);

    const attempts = (d: typeof d500) =>
      d.attempts.map((a) => ({ n: a.number, status: a.httpStatus, error: a.error }));
    assert.deepEqual(attempts(d500), [1, 2, 3].map((n) => ({ n, status: 500, error: null })));
    assert.deepEqual(
      attempts(d302),
      [1, 2, 3].map((n) => ({ n, status: 302, error: "redirect not followed" })),
    );
    for (const a of dClosed.attempts) {
      assert.equal(a.httpStatus, null);
      assert.ok(a.error && a.error.length > 0);
    }
    for (const a of dRefused.attempts) {
      assert.match(
        a.error ?? "",
        /^refused: url resolves to a private or reserved address \(169\.254\.169\.254\)/,
      );
    }
    for (const d of [d500, d302, dClosed, dRefused]) {
      assert.equal(d.status, "FAILED");
      assert.equal(d.attemptCount, 3);
    }

    const lastErrorOf = async (id: string) =>
      (await owner.client.get(`/api/agents/${agent.id}/webhooks/${id}`)).body.lastError;
    const lastError500 = await lastErrorOf(w500.id);
    assert.deepEqual({ ...lastError500, at: "" }, {
      status: 500,
      error: null,
      at: "",
      attempts: 3,
      deliveryId: d500.id,
      event: "conversation.opened",
    });
    assert.ok(Date.parse(lastError500.at) >= d500.attempts[2].startedAt.getTime());
    assert.match(lastError500.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal((await lastErrorOf(w302.id)).status, 302);
    assert.equal((await lastErrorOf(wClosed.id)).status, null);
    assert.equal((await lastErrorOf(wClosed.id)).error, dClosed.attempts[2].error);
    assert.match((await lastErrorOf(wRefused.id)).error, /^refused: /);

    // Nothing more is due: no job left to run for this event.
    const [{ n }] = await t.app.deps.db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook-delivery' AND state IN ('created', 'retry', 'active')`,
    );
    assert.equal(n, 0);

    // The log, over REST.
    const log = await owner.client.get(`/api/agents/${agent.id}/webhooks/${w500.id}/deliveries`);
    assert.equal(log.body.data[0].status, "FAILED");
    assert.deepEqual(log.body.data[0].attempts.map((a: { number: number }) => a.number), [1, 2, 3]);

    // Redelivery: a new cycle on the same delivery; the history stays, and so does lastError.
    answer500 = false;
    const path = `/api/agents/${agent.id}/webhooks/${w500.id}/deliveries/${d500.id}/redeliver`;
    const again = await owner.client.post(path);
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal(again.body.status, "PENDING");
    assert.equal(again.body.attemptCount, 3);
    const [, , , fourth] = await failing.waitForCalls(4);
    assert.equal(fourth.headers.get("x-idempotency-key"), key);
    assert.equal(fourth.body, calls500[0].body);
    const redone = await settled(t, w500.id);
    assert.equal(redone.status, "SUCCEEDED");
    assert.deepEqual(attempts(redone), [
      ...[1, 2, 3].map((n) => ({ n, status: 500, error: null })),
      { n: 4, status: 200, error: null },
    ]);
    assert.deepEqual(await lastErrorOf(w500.id), lastError500, "a later success does not erase lastError");
    assertProblem(await owner.client.post(path), 409, "DELIVERY_NOT_FAILED");
  } finally {
    await failing.close();
    await redirecting.close();
    await closing.close();
    await t.close();
  }
});
