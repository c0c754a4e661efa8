/**
 * The reply sweep queues a reply only for conversations their own jobs have evidently missed: one
 * claimed by a reply (for when that claim would be stale) and one more than SWEEP_GRACE_MS past its
 * due time; a conversation whose reply is merely waiting its turn (due less than that ago) is not
 * queued twice, nor is an answered or closed one. Clock injected; the sweep is called directly.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { customerMessage, seedChannel } from "./_helpers/conversations.ts";
import { SWEEP_GRACE_MS, sweepUnanswered } from "../src/conversations/pipeline/reply.ts";
import { REPLY_QUEUE } from "../src/conversations/pipeline/window.ts";

const WINDOW_MS = 1000;
const CLAIM_TTL_MS = 120_000;

Deno.test("the reply sweep: claimed (at stale time) and overdue conversations, not those waiting their turn", async () => {
  const clock = new ManualClock();
  const t = await startTestApp({
    GROUPING_FAST_MS: String(WINDOW_MS),
    REPLY_CLAIM_TTL_MS: String(CLAIM_TTL_MS),
  }, { clock, workers: false });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client, { messageGroupingTime: "FAST" });
    const channel = await seedChannel(t.app, workspaceId, agent.id);
    const db = t.app.deps.db;
    const conversationOf = async (externalId: string) =>
      (await customerMessage(t.app, {
        workspaceId,
        agentId: agent.id,
        channelId: channel.id,
        content: `olá de ${externalId}`,
        contact: { externalId, name: externalId },
      })).conversationId;

    const overdue = await conversationOf("5511900000001");
    const claimed = await conversationOf("5511900000002");
    const closed = await conversationOf("5511900000003");
    clock.advance(SWEEP_GRACE_MS);
    const waiting = await conversationOf("5511900000004");
    const answered = await conversationOf("5511900000005");
    const now = new Date(clock.now().getTime() + WINDOW_MS + 1);
    const claimedAt = new Date(now.getTime() - 1000);
    await db.conversation.update({ where: { id: claimed }, data: { replyClaimedAt: claimedAt } });
    await db.conversation.update({ where: { id: closed }, data: { status: "CLOSED" } });
    await db.message.updateMany({ where: { conversationId: answered }, data: { answeredAt: now } });
    await db.$executeRawUnsafe(`DELETE FROM pgboss.job WHERE name = $1`, REPLY_QUEUE);

    assert.equal(await sweepUnanswered(t.app.deps, now), 2);
    const jobs = await db.$queryRawUnsafe<Array<{ conversationId: string; afterMs: number }>>(
      `SELECT data->>'conversationId' AS "conversationId",
              (extract(epoch FROM start_after - created_on) * 1000)::float8 AS "afterMs"
         FROM pgboss.job WHERE name = $1 ORDER BY start_after`,
      REPLY_QUEUE,
    );
    assert.deepEqual(jobs.map((j) => j.conversationId), [overdue, claimed]);
    assert.ok(jobs[0].afterMs < 1000, `the overdue one at once (${jobs[0].afterMs} ms)`);
    // Due when the claim would be stale: CLAIM_TTL_MS after it was taken, a second before `now`.
    const staleIn = CLAIM_TTL_MS - 1000;
    assert.ok(
      Math.abs(jobs[1].afterMs - staleIn) < 2000,
      `the claimed one when its claim is stale (${jobs[1].afterMs} ms, ~${staleIn})`,
    );
    assert.ok(!jobs.some((j) => j.conversationId === waiting), "one waiting its turn is not queued twice");
  } finally {
    await t.close();
  }
});
