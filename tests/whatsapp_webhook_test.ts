/**
 * Inbound WhatsApp (docs/behaviour.md "Channels and conversations"): the verify handshake; signed
 * posts (X-Hub-Signature-256 over the raw bytes; missing or wrong: 401 and nothing stored or queued);
 * every message type of Meta's reference examples stored by the queued worker with its type,
 * placeholder content, media id and mime type, payload; deduplication on the WhatsApp id (twice in a
 * row, twice at once, and at once on two app instances of one database); status callbacks; a CLOSED
 * conversation gives a new one; conversation.opened and message.received land in DomainEvent.
 */
import assert from "node:assert/strict";
import { buildApp } from "../src/app.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { Client, startTestApp, type TestApp, testConfig } from "./_helpers/app.ts";
import { assertProblem } from "./_helpers/problem.ts";
import { eventually } from "./_helpers/receiver.ts";
import { startMediaGraph } from "./_helpers/media.ts";
import { hubSignature } from "../src/channels/whatsapp/signature.ts";
import {
  APP_SECRET,
  createWhatsAppChannel,
  customerMessage,
  envelope,
  postSigned,
  textMessage,
  VERIFY_TOKEN,
} from "./_helpers/whatsapp.ts";

/** Waits until the inbound worker has completed `n` jobs (a state of the database, not a delay). */
async function jobsDone(t: TestApp, n: number): Promise<void> {
  await eventually(async () => {
    const [row] = await t.app.deps.db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'whatsapp-inbound' AND state = 'completed'`,
    );
    return row.n >= n ? true : undefined;
  });
}

async function queued(t: TestApp): Promise<number> {
  const [row] = await t.app.deps.db.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'whatsapp-inbound'`,
  );
  return row.n;
}

async function eventTypes(t: TestApp, conversationId?: string): Promise<string[]> {
  const rows = await t.app.deps.db.domainEvent.findMany({
    where: conversationId ? { conversationId } : {},
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { type: true },
  });
  return rows.map((r) => r.type);
}

Deno.test("inbound WhatsApp: handshake, signatures, every type, dedup, statuses, events", async (t) => {
  // The media messages' files are asked of a Graph stand-in that has none (their media.error says so).
  const graph = startMediaGraph();
  const ta = await startTestApp({ WHATSAPP_GRAPH_URL: graph.url });
  const db = ta.app.deps.db;
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const apiChannel = await owner.client.post(`/api/agents/${agent.id}/channels`, {
      type: "API",
      label: "App",
    });
    const anon = ta.anon;
    const phone = channel.phoneNumberId;
    let jobs = 0;

    await t.step(
      "verify handshake: the challenge as text/plain, recorded as verifiedAt; wrong token 403; unknown channel 404",
      async () => {
        const q = (token: string, mode = "subscribe") =>
          `/webhooks/whatsapp/${channel.id}?hub.mode=${mode}&hub.verify_token=${token}&hub.challenge=1158201444`;
        const read = async () =>
          (await owner.client.get(`/api/agents/${agent.id}/channels`)).body.data.find((
            c: { id: string },
          ) => c.id === channel.id);
        const before = await read();
        assert.equal(before.verifiedAt, null);
        // Refused handshakes are not recorded.
        assertProblem(await anon.get(q("wrong")), 403, "FORBIDDEN");
        assertProblem(await anon.get(q(VERIFY_TOKEN, "unsubscribe")), 403, "FORBIDDEN");
        assert.equal((await read()).verifiedAt, null);
        const ok = await anon.get(q(VERIFY_TOKEN));
        assert.equal(ok.status, 200);
        assert.match(ok.headers.get("content-type")!, /^text\/plain/);
        assert.equal(ok.body, 1158201444);
        const after = await read();
        assert.match(after.verifiedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.ok(Date.parse(after.verifiedAt) >= Date.parse(before.createdAt), after.verifiedAt);
        // Not a change the owner made.
        assert.equal(after.updatedAt, before.updatedAt);
        const listed = await owner.client.graphql(
          `query($id: ID!) { channels(agentId: $id) { edges { node { id verifiedAt } } } }`,
          { id: agent.id },
        );
        assert.deepEqual(listed.body.data.channels.edges.map((e: { node: unknown }) => e.node), [
          { id: channel.id, verifiedAt: after.verifiedAt },
          { id: apiChannel.body.id, verifiedAt: null },
        ]);
        assertProblem(await anon.get(`/webhooks/whatsapp/nope?hub.mode=subscribe`), 404, "NOT_FOUND");
        assertProblem(
          await anon.get(`/webhooks/whatsapp/${apiChannel.body.id}?hub.mode=subscribe`),
          404,
          "NOT_FOUND",
        );
      },
    );

    await t.step("missing, wrong or re-encoded signature: 401, nothing queued or stored", async () => {
      const payload = textMessage(phone, "wamid.unsigned", "hello");
      assertProblem(await postSigned(anon, channel.id, payload, null), 401, "UNAUTHENTICATED");
      assertProblem(await postSigned(anon, channel.id, payload, "another-secret"), 401, "UNAUTHENTICATED");
      // Signed over other bytes (the same JSON, spaced): the raw bytes are what count.
      const raw = JSON.stringify(payload);
      const res = await anon.post(`/webhooks/whatsapp/${channel.id}`, JSON.stringify(payload, null, 1), {
        "content-type": "application/json",
        "x-hub-signature-256": hubSignature(raw, APP_SECRET),
      });
      assertProblem(res, 401, "UNAUTHENTICATED");
      assertProblem(await postSigned(anon, "unknown-channel", payload), 404, "NOT_FOUND");
      assert.equal(await queued(ta), 0);
      assert.equal(await db.message.count(), 0);
      assert.equal(await db.contact.count(), 0);
    });

    await t.step(
      "signed but not a payload: 200, nothing queued; over 1 MiB: 413",
      async () => {
        assert.equal((await postSigned(anon, channel.id, "{not json")).status, 200);
        assert.equal(
          (await postSigned(anon, channel.id, { object: "whatsapp_business_account" })).status,
          200,
        );
        const huge = textMessage(phone, "wamid.huge", "x".repeat(1024 * 1024));
        assertProblem(await postSigned(anon, channel.id, huge), 413, "PAYLOAD_TOO_LARGE");
        assert.equal(await queued(ta), 0);
      },
    );

    await t.step("another phone number's records: 200, nothing queued", async () => {
      const res = await postSigned(anon, channel.id, textMessage("999999", "wamid.other-number", "hi"));
      assert.equal(res.status, 200);
      assert.equal(await queued(ta), 0);
    });

    let conversationId = "";
    await t.step("every message type is stored with its type, content, media and payload", async () => {
      const cases: Array<[string, unknown, Record<string, unknown>]> = [
        ["text", { body: "Does it come in another color?" }, {
          type: "TEXT",
          content: "Does it come in another color?",
        }],
        ["image", {
          caption: "This is a caption",
          mime_type: "image/jpeg",
          sha256: "x",
          id: "1003383421387256",
        }, {
          type: "IMAGE",
          content: "[image] This is a caption",
          mediaId: "1003383421387256",
          mediaMimeType: "image/jpeg",
        }],
        ["audio", { mime_type: "audio/ogg; codecs=opus", sha256: "x", id: "1003383421387257", voice: true }, {
          type: "AUDIO",
          content: "[audio]",
          mediaId: "1003383421387257",
          mediaMimeType: "audio/ogg; codecs=opus",
        }],
        ["document", { filename: "invoice.pdf", mime_type: "application/pdf", sha256: "x", id: "9" }, {
          type: "DOCUMENT",
          content: "[document] invoice.pdf",
          mediaId: "9",
          mediaMimeType: "application/pdf",
        }],
        ["interactive", { type: "button_reply", button_reply: { id: "cancel-button", title: "Cancel" } }, {
          type: "TEXT",
          content: "Cancel",
          payload: { reply: { id: "cancel-button", title: "Cancel" } },
        }],
        ["button", { payload: "approve_67_schedule", text: "Approve" }, {
          type: "TEXT",
          content: "Approve",
          payload: { reply: { id: "approve_67_schedule", title: "Approve" } },
        }],
        ["location", { latitude: -23.5, longitude: -46.6, name: "Office", address: "Av. Paulista" }, {
          type: "LOCATION",
          content: "[location] Office, Av. Paulista",
          payload: {
            location: { latitude: -23.5, longitude: -46.6, name: "Office", address: "Av. Paulista" },
          },
        }],
        ["video", { mime_type: "video/mp4", id: "7" }, { type: "OTHER", content: "[video]", mediaId: "7" }],
      ];
      for (const [i, [type, part]] of cases.entries()) {
        const res = await postSigned(anon, channel.id, customerMessage(phone, `wamid.type-${i}`, type, part));
        assert.equal(res.status, 200, JSON.stringify(res.body));
      }
      jobs += cases.length;
      await jobsDone(ta, jobs);
      // The media messages are announced (message.received) once their media work ended.
      await eventually(async () =>
        (await db.message.count({ where: { mediaPending: true } })) === 0 || undefined
      );
      const messages = await db.message.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
      assert.equal(messages.length, cases.length);
      for (const [i, [, , expected]] of cases.entries()) {
        const m = messages.find((m) => m.externalId === `wamid.type-${i}`)!;
        assert.ok(m, `message ${i} stored`);
        for (const [k, v] of Object.entries(expected)) {
          assert.deepEqual((m as Record<string, unknown>)[k], v, `${cases[i][0]}.${k}`);
        }
        assert.equal(m.senderKind, "CUSTOMER");
        assert.equal(m.direction, "INBOUND");
        assert.equal(m.status, "RECEIVED");
        assert.equal(m.channelId, channel.id);
      }
      const conversations = await db.conversation.findMany();
      assert.equal(conversations.length, 1, "one conversation for the contact");
      conversationId = conversations[0].id;
      assert.equal(conversations[0].status, "OPEN");
      assert.equal(conversations[0].agentId, agent.id);
      const contacts = await db.contact.findMany();
      assert.deepEqual(contacts.map((c) => [c.externalId, c.name]), [["16505551234", "Sheena Nelson"]]);
      const types = await eventTypes(ta, conversationId);
      assert.equal(types.filter((e) => e === "conversation.opened").length, 1);
      assert.equal(types.filter((e) => e === "message.received").length, cases.length);
      assert.equal(types[0], "conversation.opened");
      const received = await db.domainEvent.findFirstOrThrow({
        where: { type: "message.received", conversationId },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      });
      const data = (received.payload as { data: { message: Record<string, unknown> } }).data.message;
      assert.deepEqual(Object.keys(data).sort(), ["content", "createdAt", "id", "type"]);
    });

    await t.step(
      "the same WhatsApp id twice in a row, and twice at once: stored and announced once",
      async () => {
        const before = await db.message.count();
        const once = textMessage(phone, "wamid.dup-1", "only once");
        assert.equal((await postSigned(anon, channel.id, once)).status, 200);
        assert.equal((await postSigned(anon, channel.id, once)).status, 200);
        const twice = textMessage(phone, "wamid.dup-2", "at once");
        const answers = await Promise.all([1, 2, 3].map(() => postSigned(anon, channel.id, twice)));
        assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
        jobs += 5;
        await jobsDone(ta, jobs);
        assert.equal(await db.message.count(), before + 2);
        for (const id of ["wamid.dup-1", "wamid.dup-2"]) {
          const m = await db.message.findFirstOrThrow({ where: { externalId: id } });
          const events = await db.domainEvent.count({
            where: { type: "message.received", payload: { path: ["data", "message", "id"], equals: m.id } },
          });
          assert.equal(events, 1, `${id}: one message.received`);
        }
      },
    );

    await t.step("status callbacks move the outbound message forward; failed keeps the errors", async () => {
      const out = (externalId: string) =>
        db.message.create({
          data: {
            conversationId,
            channelId: channel.id,
            direction: "OUTBOUND",
            senderKind: "AI",
            content: "reply",
            status: "SENT",
            externalId,
          },
        });
      const a = await out("wamid.out-a");
      const b = await out("wamid.out-b");
      const status = (id: string, s: string, extra: Record<string, unknown> = {}) => ({
        id,
        status: s,
        timestamp: "1750263773",
        recipient_id: "16505551234",
        ...extra,
      });
      const errors = [{ code: 131026, title: "Message undeliverable", message: "Message undeliverable" }];
      await postSigned(anon, channel.id, envelope(phone, { statuses: [status(a.externalId!, "delivered")] }));
      await postSigned(anon, channel.id, envelope(phone, { statuses: [status(a.externalId!, "read")] }));
      // Late and out of order: a `delivered` after `read` does not move it back.
      await postSigned(anon, channel.id, envelope(phone, { statuses: [status(a.externalId!, "delivered")] }));
      await postSigned(
        anon,
        channel.id,
        envelope(phone, { statuses: [status(b.externalId!, "failed", { errors })] }),
      );
      // A status of a message we never sent changes nothing.
      await postSigned(anon, channel.id, envelope(phone, { statuses: [status("wamid.unknown", "read")] }));
      jobs += 5;
      await jobsDone(ta, jobs);
      const [ra, rb] = await Promise.all(
        [a, b].map((m) => db.message.findUniqueOrThrow({ where: { id: m.id } })),
      );
      assert.equal(ra.status, "READ");
      assert.equal(ra.error, null);
      assert.equal(rb.status, "FAILED");
      assert.deepEqual((rb.error as { errors: Array<{ code: number }> }).errors.map((e) => e.code), [131026]);
    });

    await t.step("a message on a CLOSED conversation opens a new one", async () => {
      await db.conversation.update({ where: { id: conversationId }, data: { status: "CLOSED" } });
      await postSigned(anon, channel.id, textMessage(phone, "wamid.after-close", "hello again"));
      jobs += 1;
      await jobsDone(ta, jobs);
      const m = await db.message.findFirstOrThrow({ where: { externalId: "wamid.after-close" } });
      assert.notEqual(m.conversationId, conversationId);
      const fresh = await db.conversation.findUniqueOrThrow({ where: { id: m.conversationId } });
      assert.equal(fresh.status, "OPEN");
      assert.deepEqual(await eventTypes(ta, fresh.id), ["conversation.opened", "message.received"]);
      assert.equal(await db.conversation.count(), 2);
    });
  } finally {
    await ta.close();
    await graph.close();
  }
});

Deno.test("inbound WhatsApp: the same message posted to two app instances at once is stored once", async () => {
  const ta = await startTestApp();
  const second = await buildApp(
    testConfig(ta.db.url),
    { logger: silentLogger, bootstrap: false },
  );
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const clients = [ta.anon, new Client(second)];
    const N = 10;
    const posts: Promise<{ status: number }>[] = [];
    for (let i = 0; i < N; i++) {
      // Each message twice, once to each instance, at the same moment; two senders.
      const payload = textMessage(channel.phoneNumberId, `wamid.twin-${i}`, `m${i}`, i % 2 ? "5511" : "5522");
      for (const c of clients) posts.push(postSigned(c, channel.id, payload));
    }
    assert.deepEqual((await Promise.all(posts)).map((p) => p.status), Array(2 * N).fill(200));
    await jobsDone(ta, 2 * N);
    const db = ta.app.deps.db;
    assert.equal(await db.message.count(), N);
    assert.equal(await db.domainEvent.count({ where: { type: "message.received" } }), N);
    // One conversation per sender, however the two instances interleaved.
    assert.equal(await db.conversation.count(), 2);
    assert.equal(await db.domainEvent.count({ where: { type: "conversation.opened" } }), 2);
  } finally {
    await second.stop();
    await ta.close();
  }
});
