/**
 * An accepted inbound post is stored by the process that accepted it, without a worker fetching
 * its job (src/jobs/boss.ts `enqueueAndRun`): the job is inserted due 30 s later as the backstop
 * and completed by the run. A failed run queues the job for a worker; a run that has not ended
 * leaves the job waiting for its backstop time, untaken.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import { createWhatsAppChannel, postSigned, textMessage } from "./_helpers/whatsapp.ts";
import { WHATSAPP_INBOUND_QUEUE } from "../src/channels/whatsapp/process.ts";

interface JobRow {
  id: string;
  state: string;
  fetched: boolean;
  backstopMs: number;
  data: Record<string, unknown>;
}

Deno.test("jobs run where they were accepted", async (t) => {
  const ta = await startTestApp();
  const jobs = () =>
    ta.app.deps.db.$queryRawUnsafe<JobRow[]>(
      `SELECT id::text, state::text, started_on IS NOT NULL AS fetched,
              (extract(epoch FROM start_after - created_on) * 1000)::int AS "backstopMs", data
         FROM pgboss.job WHERE name = $1 ORDER BY created_on, id`,
      WHATSAPP_INBOUND_QUEUE,
    );
  const clear = () =>
    ta.app.deps.db.$executeRawUnsafe(`DELETE FROM pgboss.job WHERE name = $1`, WHATSAPP_INBOUND_QUEUE);
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);

    await t.step("a post is stored by the accepting process: its job completed, never fetched", async () => {
      const res = await postSigned(
        ta.anon,
        channel.id,
        textMessage(channel.phoneNumberId, "wamid.here-1", "hi"),
      );
      assert.equal(res.status, 200);
      await eventually(async () => (await jobs())[0]?.state === "completed" || undefined);
      const [job] = await jobs();
      assert.equal(job.fetched, false);
      assert.ok(job.backstopMs >= 29_900 && job.backstopMs <= 30_100, `backstop ${job.backstopMs} ms`);
      assert.equal(await ta.app.deps.db.message.count({ where: { externalId: "wamid.here-1" } }), 1);
      assert.equal((await jobs()).length, 1);
      await clear();
    });

    await t.step("a failed run: the job completed, a new one due in 1 s taken by a worker", async () => {
      const data = { channelId: channel.id, body: "{}" };
      await ta.app.deps.jobs.enqueueAndRun(
        WHATSAPP_INBOUND_QUEUE,
        data,
        () => Promise.reject(new Error("boom")),
      );
      await eventually(async () => {
        const rows = await jobs();
        return rows.length === 2 && rows.every((r) => r.state === "completed") || undefined;
      });
      const [first, second] = await jobs();
      assert.equal(first.fetched, false);
      assert.equal(first.backstopMs >= 29_900, true);
      // The retry went the usual way: fetched by a worker (which refuses the empty payload).
      assert.equal(second.fetched, true);
      assert.ok(second.backstopMs >= 900 && second.backstopMs <= 1100, `retry after ${second.backstopMs} ms`);
      assert.deepEqual(second.data, data);
      await clear();
    });

    await t.step("a run under way: its job waits for the backstop time, untaken", async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => release = resolve);
      let ran = 0;
      await ta.app.deps.jobs.enqueueAndRun(
        WHATSAPP_INBOUND_QUEUE,
        { channelId: channel.id, body: "{}" },
        async () => {
          ran++;
          await held;
        },
      );
      // Workers woken meanwhile (another post) do not take it: it is not due.
      const res = await postSigned(
        ta.anon,
        channel.id,
        textMessage(channel.phoneNumberId, "wamid.here-2", "hey"),
      );
      assert.equal(res.status, 200);
      await eventually(async () =>
        (await jobs()).filter((j) => j.state === "completed").length === 1 || undefined
      );
      const waiting = (await jobs()).filter((j) => j.state !== "completed");
      assert.equal(waiting.length, 1);
      assert.equal(waiting[0].state, "created");
      assert.equal(waiting[0].fetched, false);
      release();
      await eventually(async () => (await jobs()).every((j) => j.state === "completed") || undefined);
      assert.equal(ran, 1);
      assert.equal((await jobs()).length, 2);
    });
  } finally {
    await ta.close();
  }
});
