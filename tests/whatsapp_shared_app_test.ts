/**
 * One Meta app serving several numbers through one callback URL (docs/behaviour.md "Channels and
 * conversations"): a signed post at one WhatsApp channel's URL that carries another channel's
 * `phone_number_id` is stored on that other channel when its app secret signs the post too; a
 * number whose channel has another app secret stores nothing; a post carrying both numbers stores
 * each message on its own channel. The posts are Meta's envelope (entry[].changes[].value.metadata).
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import { APP_SECRET, createWhatsAppChannel, postSigned, textMessage } from "./_helpers/whatsapp.ts";

Deno.test("one app, several numbers: another number's messages are stored on that number's channel", async () => {
  const ta = await startTestApp();
  const db = ta.app.deps.db;
  /** The channel a stored WhatsApp message (by its wamid) landed on; undefined while not stored. */
  const channelOf = async (wamid: string) =>
    (await db.message.findFirst({ where: { externalId: wamid }, select: { channelId: true } }))?.channelId;
  const inboundJobs = async () =>
    (await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'whatsapp-inbound'`,
    ))[0].n;
  try {
    // Two workspaces, each with a number of the same Meta app (the same app secret).
    const first = await ta.seed.workspace();
    const second = await ta.seed.workspace();
    const firstAgent = await ta.seed.agent(first.owner.client);
    const a = await createWhatsAppChannel(first.owner.client, firstAgent.id);
    const secondAgent = await ta.seed.agent(second.owner.client);
    const b = await createWhatsAppChannel(second.owner.client, secondAgent.id);
    // A third number, of another app.
    const c = await createWhatsAppChannel(second.owner.client, secondAgent.id);
    const patched = await second.owner.client.patch(`/api/agents/${secondAgent.id}/channels/${c.id}`, {
      config: { appSecret: "another-app-secret-0123456789" },
    });
    assert.equal(patched.status, 200);

    // At a's URL, a message of b's number: stored on b, nothing on a.
    const res = await postSigned(ta.anon, a.id, textMessage(b.phoneNumberId, "wamid.shared-1", "hola"));
    assert.equal(res.status, 200);
    assert.equal(await eventually(() => channelOf("wamid.shared-1")), b.id);
    assert.equal(await db.message.count({ where: { channelId: a.id } }), 0);

    // At a's URL, a message of c's number, whose channel has another app secret: nothing queued.
    const before = await inboundJobs();
    const other = await postSigned(ta.anon, a.id, textMessage(c.phoneNumberId, "wamid.shared-2", "oi"));
    assert.equal(other.status, 200);
    assert.equal(await inboundJobs(), before);
    assert.equal(await db.message.count({ where: { channelId: c.id } }), 0);

    // One post with a message of each of a's and b's numbers (two entries): each on its own channel.
    const ofA = textMessage(a.phoneNumberId, "wamid.shared-3", "from a's number");
    const ofB = textMessage(b.phoneNumberId, "wamid.shared-4", "from b's number");
    const both = { object: ofA.object, entry: [...ofA.entry, ...ofB.entry] };
    assert.equal((await postSigned(ta.anon, a.id, both, APP_SECRET)).status, 200);
    assert.equal(await eventually(() => channelOf("wamid.shared-3")), a.id);
    assert.equal(await eventually(() => channelOf("wamid.shared-4")), b.id);
    assert.equal(await db.message.count({ where: { externalId: { startsWith: "wamid.shared-" } } }), 3);
    // b's messages are in b's workspace only: a's agent has one conversation, its own number's.
    const conversations = await first.owner.client.get(`/api/agents/${firstAgent.id}/conversations`);
    assert.equal(conversations.status, 200);
    assert.equal(conversations.body.data.length, 1);
  } finally {
    await ta.close();
  }
});
