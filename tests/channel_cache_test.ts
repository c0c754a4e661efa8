/**
 * Each process remembers its WhatsApp channels (src/channels/cache.ts); a change must still be seen
 * by the next inbound post, in the process that made it and in another process of the same database:
 * a new app secret, verify token or phone number id works at once everywhere (a remembered channel
 * that refuses is read again), the replaced secret stops working in the other process once the
 * change's NOTIFY arrives, and a deleted channel is 404 there too.
 */
import assert from "node:assert/strict";
import { buildApp } from "../src/app.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { Client, startTestApp, testConfig } from "./_helpers/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import {
  APP_SECRET,
  createWhatsAppChannel,
  postSigned,
  textMessage,
  VERIFY_TOKEN,
} from "./_helpers/whatsapp.ts";

Deno.test("channel cache: a change is seen by the next post, in this process and in another", async (t) => {
  const ta = await startTestApp();
  const other = await buildApp(
    testConfig(ta.db.url),
    // This process only serves: the jobs stay queued, so they can be counted.
    { logger: silentLogger, bootstrap: false, workers: false },
  );
  const b = new Client(other);
  const db = ta.app.deps.db;
  const queued = async () => {
    const [row] = await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'whatsapp-inbound'`,
    );
    return row.n;
  };
  let n = 0;
  const message = (phone: string) => textMessage(phone, `wamid.cache-${++n}`, `hello ${n}`);
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const patch = (config: Record<string, string>) =>
      owner.client.patch(`/api/agents/${agent.id}/channels/${channel.id}`, { config });

    await t.step("both processes remember the channel after a first post", async () => {
      assert.equal((await postSigned(ta.anon, channel.id, message(channel.phoneNumberId))).status, 200);
      assert.equal((await postSigned(b, channel.id, message(channel.phoneNumberId))).status, 200);
      assert.equal(await queued(), 2);
    });

    await t.step("a new app secret: the next post signed with it is accepted by both", async () => {
      const secret = "a-new-app-secret-0123456789";
      assert.equal((await patch({ appSecret: secret })).status, 200);
      assert.equal((await postSigned(b, channel.id, message(channel.phoneNumberId), secret)).status, 200);
      assert.equal(
        (await postSigned(ta.anon, channel.id, message(channel.phoneNumberId), secret)).status,
        200,
      );
      assert.equal(await queued(), 4);
      // The process that made the change forgot the old secret at once.
      const old = await postSigned(ta.anon, channel.id, message(channel.phoneNumberId), APP_SECRET);
      assert.equal(old.status, 401);
      assert.equal(old.body.code, "UNAUTHENTICATED");
      // The other one once the NOTIFY of the change has arrived.
      await eventually(async () =>
        (await postSigned(b, channel.id, message(channel.phoneNumberId), APP_SECRET)).status === 401 ||
        undefined
      );
      const queuedNow = await queued();
      assert.equal((await postSigned(b, channel.id, message(channel.phoneNumberId), APP_SECRET)).status, 401);
      assert.equal(await queued(), queuedNow);
      assert.equal((await patch({ appSecret: APP_SECRET })).status, 200);
    });

    await t.step("a new phone number id: the next post naming it is queued, not ignored", async () => {
      // Both processes remember the channel with its current number.
      assert.equal((await postSigned(b, channel.id, message(channel.phoneNumberId))).status, 200);
      const before = await queued();
      const phone = `9${channel.phoneNumberId}`.slice(0, 15);
      assert.equal((await patch({ phoneNumberId: phone })).status, 200);
      assert.equal((await postSigned(b, channel.id, message(phone))).status, 200);
      assert.equal(await queued(), before + 1);
      // A post naming the old number is now another number's: 200, nothing queued.
      assert.equal((await postSigned(b, channel.id, message(channel.phoneNumberId))).status, 200);
      assert.equal(await queued(), before + 1);
    });

    await t.step("a new verify token: the handshake answers it in the other process", async () => {
      const handshake = (token: string) =>
        b.get(
          `/webhooks/whatsapp/${channel.id}?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=challenge-42`,
        );
      assert.equal((await handshake(VERIFY_TOKEN)).status, 200);
      assert.equal((await patch({ verifyToken: "another-verify-token" })).status, 200);
      const res = await handshake("another-verify-token");
      assert.equal(res.status, 200);
      assert.equal(res.body, "challenge-42");
    });

    await t.step("a deleted channel is 404 in both processes", async () => {
      const res = await owner.client.delete(`/api/agents/${agent.id}/channels/${channel.id}`);
      assert.equal(res.status, 204);
      assert.equal((await postSigned(ta.anon, channel.id, message(channel.phoneNumberId))).status, 404);
      await eventually(async () =>
        (await postSigned(b, channel.id, message(channel.phoneNumberId))).status === 404 || undefined
      );
    });
  } finally {
    await other.stop();
    await ta.close();
  }
});
