/**
 * WhatsApp's 24-hour customer service window (docs/behaviour.md "Channels and conversations"): a
 * conversation's reads carry `window { open closesAt }` (the customer's latest message + 24 h; always
 * open on API channels); outside it a human reply is 409 WINDOW_CLOSED and stores nothing, and any
 * other message is FAILED WINDOW_CLOSED without reaching Meta; Meta's
 * 131047, in the send's answer or later in a `failed` status, closes it until the customer writes
 * again. Meta-shaped answers and posts (its error reference and status webhook examples).
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import { reengagementError, startGraph } from "./_helpers/conversations.ts";
import { MESSAGE_SEND_QUEUE } from "../src/conversations/outbound.ts";
import { createWhatsAppChannel, customerWrites, envelope, postSigned } from "./_helpers/whatsapp.ts";

const WINDOW = `query ($id: ID!) { conversation(id: $id) { window { open closesAt } } }`;

Deno.test("the 24-hour window: read, refused human replies, and Meta's 131047 closing it", async (t) => {
  // Call 1 is refused with 131047; the others are accepted.
  const graph = startGraph((i) =>
    i === 1
      ? reengagementError()
      : Response.json({ messaging_product: "whatsapp", messages: [{ id: `wamid.OUT${i}` }] })
  );
  // The agent does not answer (a long grouping window): only people write here.
  const ta = await startTestApp({ WHATSAPP_GRAPH_URL: graph.url(""), GROUPING_MEDIUM_MS: "600000" });
  const db = ta.app.deps.db;
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const first = await customerWrites(ta, channel, "wamid.IN1");
    const path = `/api/conversations/${first.conversationId}`;
    const windowOf = async () => {
      const rest = (await owner.client.get(path)).body.window;
      const graphql = await owner.client.post("/graphql", {
        query: WINDOW,
        variables: { id: first.conversationId },
      });
      assert.deepEqual(graphql.body.data.conversation.window, rest, "GraphQL shows what REST shows");
      return rest as { open: boolean; closesAt: string | null };
    };
    const humans = () =>
      db.message.count({ where: { conversationId: first.conversationId, senderKind: "HUMAN" } });
    assert.equal((await owner.client.post(`${path}/takeover`)).status, 200);

    await t.step("open for 24 hours after the customer's latest message", async () => {
      const conversation = await db.conversation.findUniqueOrThrow({ where: { id: first.conversationId } });
      const closesAt = new Date(conversation.lastContactMessageAt!.getTime() + 24 * 3600_000).toISOString();
      assert.deepEqual(await windowOf(), { open: true, closesAt });
      const sent = await owner.client.post(`${path}/messages`, { content: "Bom dia" });
      assert.equal(sent.status, 200);
      await eventually(() => Promise.resolve(graph.calls.length === 1 || undefined));
    });

    await t.step(
      "131047 in the send's answer: the message FAILED, the window closed, the next reply 409",
      async () => {
        assert.equal((await owner.client.post(`${path}/messages`, { content: "Ainda aí?" })).status, 200);
        const failed = await eventually(() =>
          db.message.findFirst({
            where: { conversationId: first.conversationId, content: "Ainda aí?", status: "FAILED" },
          })
            .then((m) => m ?? undefined)
        );
        assert.equal((failed.error as { code: number }).code, 131047);
        assert.equal((await windowOf()).open, false);
        const before = await humans();
        const refused = await owner.client.post(`${path}/messages`, { content: "Olá?" });
        assert.equal(refused.status, 409);
        assert.equal(refused.body.code, "WINDOW_CLOSED");
        assert.match(refused.body.detail, /131047/);
        assert.equal(await humans(), before, "nothing stored");
        assert.equal(graph.calls.length, 2, "nothing sent");
      },
    );

    await t.step("the customer writes again: open again", async () => {
      await customerWrites(ta, channel, "wamid.IN2");
      assert.equal((await windowOf()).open, true);
      assert.equal((await owner.client.post(`${path}/messages`, { content: "Voltou!" })).status, 200);
      await eventually(() => Promise.resolve(graph.calls.length === 3 || undefined));
    });

    await t.step("131047 later, in a failed status: the window closes", async () => {
      const sent = await eventually(() =>
        db.message.findFirst({ where: { content: "Voltou!", status: "SENT" } }).then((m) => m ?? undefined)
      );
      const status = envelope(channel.phoneNumberId, {
        statuses: [{
          id: sent.externalId,
          status: "failed",
          timestamp: "1749416383",
          recipient_id: "16505551234",
          errors: [{
            code: 131047,
            title: "Re-engagement message",
            message: "Re-engagement message",
            error_data: { details: "Message failed to send because more than 24 hours have passed." },
          }],
        }],
      });
      assert.equal((await postSigned(ta.anon, channel.id, status)).status, 200);
      // Applied by the inbound job after the 200: waited for on REST, then both transports compared.
      await eventually(async () => (await owner.client.get(path)).body.window.open === false || undefined);
      assert.equal((await windowOf()).open, false);
      assert.equal((await owner.client.post(`${path}/messages`, { content: "Oi?" })).status, 409);
    });

    await t.step(
      "24 hours after the customer's latest message: closed, the reply refused with closesAt",
      async () => {
        await customerWrites(ta, channel, "wamid.IN3");
        assert.equal((await windowOf()).open, true);
        const old = new Date(Date.now() - 25 * 3600_000);
        await db.conversation.update({
          where: { id: first.conversationId },
          data: { lastContactMessageAt: old },
        });
        const closesAt = new Date(old.getTime() + 24 * 3600_000).toISOString();
        assert.deepEqual(await windowOf(), { open: false, closesAt });
        const refused = await owner.client.post(`${path}/messages`, { content: "Desculpe a demora" });
        assert.equal(refused.status, 409);
        assert.equal(refused.body.code, "WINDOW_CLOSED");
        assert.ok(refused.body.detail.includes(closesAt), refused.body.detail);
      },
    );

    await t.step(
      "a message whose window closed before its send (an AI reply, a reminder): FAILED WINDOW_CLOSED, not sent",
      async () => {
        const calls = graph.calls.length;
        const late = await db.message.create({
          data: {
            conversationId: first.conversationId,
            channelId: channel.id,
            direction: "OUTBOUND",
            senderKind: "AI",
            content: "Resposta tardia",
            status: "PENDING",
          },
        });
        await ta.app.deps.jobs.send(db, MESSAGE_SEND_QUEUE, [{ data: { messageId: late.id, attempt: 1 } }]);
        const failed = await eventually(() =>
          db.message.findFirst({ where: { id: late.id, status: "FAILED" } }).then((m) => m ?? undefined)
        );
        assert.equal((failed.error as { code: string }).code, "WINDOW_CLOSED");
        assert.equal(graph.calls.length, calls, "nothing sent to Meta");
      },
    );

    await t.step("an API channel's conversation is always open, with no closesAt", async () => {
      const api = await owner.client.post(`/api/agents/${agent.id}/channels`, { type: "API", label: "App" });
      const m = await owner.client.post(`/api/channels/${api.body.id}/messages`, {
        contact: { externalId: "c-1", name: "Caio" },
        type: "TEXT",
        content: "Hello",
      });
      const read = await owner.client.get(`/api/conversations/${m.body.conversationId}`);
      assert.deepEqual(read.body.window, { open: true, closesAt: null });
    });
  } finally {
    await ta.close();
    await graph.close();
  }
});
