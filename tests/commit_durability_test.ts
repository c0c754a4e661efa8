/**
 * The job workers of the reply path commit without waiting for the disk (app.ts workerDeps); their
 * work is made durable by the job's completion. A WhatsApp send's start is the exception: the
 * statements that mark a call as begun (startSend, claimSend) turn their own commit synchronous,
 * so the mark, and every commit before it, is on disk before the call.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { customerMessage, seedChannel } from "./_helpers/conversations.ts";
import { storeOutgoing } from "../src/conversations/outbound.ts";
import { claimSend, startSend } from "../src/conversations/sql.ts";
import type { Tx } from "../src/db/client.ts";

const setting = async (db: Pick<Tx, "$queryRawUnsafe">) =>
  (await db.$queryRawUnsafe<Array<{ s: string }>>("SELECT current_setting('synchronous_commit') AS s"))[0].s;

Deno.test("requests commit synchronously, the reply path's workers asynchronously; a send's start is synchronous in either", async () => {
  const t = await startTestApp({}, { workers: false });
  try {
    const { deps, workerDeps } = t.app;
    assert.equal(await setting(deps.db), "on");
    assert.equal(await setting(workerDeps.db), "off");

    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const channel = await seedChannel(t.app, workspaceId, agent.id);
    const m = await customerMessage(t.app, {
      workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content: "oi",
    });
    const store = (direct: boolean) =>
      workerDeps.db.$transaction(async (tx) =>
        (await storeOutgoing(workerDeps, tx, new Date(), [{
          workspaceId,
          agentId: agent.id,
          conversationId: m.conversationId,
          channelId: channel.id,
          channelType: "WHATSAPP",
          sender: "AI" as const,
          content: "Olá!",
        }], { direct })).stored[0].id
      );

    // The writer's send: stored claimed, its call's start marked by startSend.
    const claimed = await store(true);
    await workerDeps.db.$transaction(async (tx) => {
      assert.equal(await setting(tx), "off");
      assert.equal(await startSend.run(tx, { now: new Date(), id: claimed }), 1);
      assert.equal(await setting(tx), "on", "startSend's commit waits for the disk");
    });
    // A send job's attempt: claimSend claims and marks the start in one statement.
    const queued = await store(false);
    await workerDeps.db.$transaction(async (tx) => {
      assert.equal(await setting(tx), "off");
      const rows = await claimSend.rows(tx, {
        now: new Date(),
        claimedBy: workerDeps.instance.id,
        messageId: queued,
        retry: false,
        stale: new Date(0),
      });
      assert.deepEqual(rows.map((r) => r.id), [queued]);
      assert.equal(await setting(tx), "on", "claimSend's commit waits for the disk");
    });
  } finally {
    await t.close();
  }
});
