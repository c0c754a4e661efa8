/**
 * An outbound message's delivery state, live, and sending a failed one again (docs/behaviour.md
 * "Live message states", "Sending a failed message again"): every change of an outbound message's
 * status or error reaches graphql-ws subscribers as `messageUpdated(conversationId)` and as
 * MESSAGE_UPDATED in `conversationEvents`, from the send's outcome and from Meta's status webhooks
 * (FAILED with Meta's reason; 131047 closing the conversation's window, shown with it); a FAILED
 * message is sent again as a new message, once, over REST and GraphQL, and the failed one stays as
 * it was. A Graph stand-in answers the sends; posts are Meta-shaped and signed.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import { graphError, startGraph } from "./_helpers/conversations.ts";
import { createWhatsAppChannel, customerWrites, envelope, postSigned } from "./_helpers/whatsapp.ts";
import { type Result, subscribe, subscribed, wsClient } from "./_helpers/live.ts";
import { sweepStaleSends } from "../src/conversations/outbound.ts";

const MESSAGE_UPDATED = `subscription ($id: ID!) {
  messageUpdated(conversationId: $id) { id status error errorMessage content sender resentFromId }
}`;
const CONVERSATION_EVENTS = `subscription ($agentId: ID!) {
  conversationEvents(agentId: $agentId) { type conversation { id window { open } } message { id status error } }
}`;

/** Meta's status webhook for the sent message `wamid` (its `errors` on `failed`). */
const statusPost = (phoneNumberId: string, wamid: string, status: string, errors?: unknown[]) =>
  envelope(phoneNumberId, {
    statuses: [{
      id: wamid,
      status,
      timestamp: "1749416383",
      recipient_id: "16505551234",
      ...(errors ? { errors } : {}),
    }],
  });

/** Meta's 131047 in a `failed` status (its status webhook reference). */
const REENGAGEMENT = {
  code: 131047,
  title: "Re-engagement message",
  message: "Re-engagement message",
  error_data: { details: "Message failed to send because more than 24 hours have passed." },
};

/** `promise`, or a failure after 15 s (a backstop: the tests wait on what the server sends). */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      timer = setTimeout(() => reject(new Error(`${what}: nothing in 15 s`)), 15_000)
    ),
  ]).finally(() => clearTimeout(timer));
}

/** The next result of `sub` that `keep` holds for (results before it are skipped). */
async function next(sub: { next(): Promise<Result> }, keep: (data: Result["data"]) => boolean, what: string) {
  return await within(
    (async () => {
      for (;;) {
        const r = await sub.next();
        assert.equal(r.errors, undefined, JSON.stringify(r.errors));
        if (keep(r.data)) return r.data;
      }
    })(),
    what,
  );
}

Deno.test("message states live, and a failed message sent again once", async (t) => {
  // Call 1 ("Está aí?") is refused for good (131026, undeliverable); the others are accepted.
  const graph = startGraph((i) =>
    i === 1
      ? graphError(
        400,
        131026,
        "(#131026) Message undeliverable",
        "Receiver is incapable of receiving this message",
      )
      : Response.json({ messaging_product: "whatsapp", messages: [{ id: `wamid.OUT${i}` }] })
  );
  // The agent does not answer (a long grouping window): people write here.
  const ta = await startTestApp({
    PORT: "0",
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_MEDIUM_MS: "600000",
  });
  const db = ta.app.deps.db;
  const { port } = await ta.app.start();
  const { workspaceId, owner } = await ta.seed.workspace();
  const agent = await ta.seed.agent(owner.client);
  const channel = await createWhatsAppChannel(owner.client, agent.id);
  const first = await customerWrites(ta, channel, "wamid.IN1");
  const conversationId = first.conversationId;
  const path = `/api/conversations/${conversationId}`;
  assert.equal((await owner.client.post(`${path}/takeover`)).status, 200);
  const ws = wsClient(port, { token: owner.token, workspaceId });
  const updates = subscribe(ws, MESSAGE_UPDATED, { id: conversationId });
  const events = subscribe(ws, CONVERSATION_EVENTS, { agentId: agent.id });
  const sentOf = (content: string) =>
    eventually(() =>
      db.message.findFirst({ where: { conversationId, content, status: "SENT" } }).then((m) => m ?? undefined)
    );
  try {
    await subscribed(ta.app, 2);

    await t.step("a reply's send and Meta's statuses: SENT, DELIVERED, READ, each pushed once", async () => {
      assert.equal((await owner.client.post(`${path}/messages`, { content: "Bom dia" })).status, 200);
      const sent = await next(updates, () => true, "SENT");
      assert.equal(sent.messageUpdated.status, "SENT");
      assert.equal(sent.messageUpdated.content, "Bom dia");
      const event = await next(
        events,
        (d) => d.conversationEvents.type === "MESSAGE_UPDATED",
        "MESSAGE_UPDATED",
      );
      assert.deepEqual(event.conversationEvents.message, {
        id: sent.messageUpdated.id,
        status: "SENT",
        error: null,
      });
      assert.equal(event.conversationEvents.conversation.id, conversationId);
      const { externalId } = await sentOf("Bom dia");
      for (const status of ["delivered", "read"]) {
        const post = statusPost(channel.phoneNumberId, externalId!, status);
        assert.equal((await postSigned(ta.anon, channel.id, post)).status, 200);
        const update = await next(updates, () => true, status);
        assert.deepEqual(
          [update.messageUpdated.id, update.messageUpdated.status],
          [sent.messageUpdated.id, status.toUpperCase()],
        );
        const e = await next(events, (d) => d.conversationEvents.type === "MESSAGE_UPDATED", status);
        assert.equal(e.conversationEvents.message.status, status.toUpperCase());
      }
      // A status that moves nothing (delivered after read) changes nothing and pushes nothing: the
      // next update is the next step's.
      const late = statusPost(channel.phoneNumberId, externalId!, "delivered");
      assert.equal((await postSigned(ta.anon, channel.id, late)).status, 200);
    });

    let failedId = "";
    await t.step("a send Meta refuses: FAILED with Meta's reason, live", async () => {
      assert.equal((await owner.client.post(`${path}/messages`, { content: "Está aí?" })).status, 200);
      const failed = await next(updates, () => true, "FAILED");
      assert.equal(failed.messageUpdated.status, "FAILED", "the late `delivered` pushed nothing");
      assert.equal(failed.messageUpdated.content, "Está aí?");
      assert.equal(failed.messageUpdated.error.code, 131026);
      assert.match(failed.messageUpdated.error.message, /Message undeliverable/);
      assert.equal(
        failed.messageUpdated.errorMessage,
        "(#131026) Message undeliverable: Receiver is incapable of receiving this message",
      );
      failedId = failed.messageUpdated.id;
      const e = await next(events, (d) => d.conversationEvents.type === "MESSAGE_UPDATED", "FAILED event");
      assert.equal(e.conversationEvents.message.id, failedId);
      assert.equal(e.conversationEvents.message.error.code, 131026);
      assert.equal(graph.calls.length, 2);
    });

    await t.step("resend: one new message sent once to Meta, the failed one as it was", async () => {
      const before = await db.message.findUniqueOrThrow({ where: { id: failedId } });
      // Two clicks at once: one copy, one refusal.
      const [a, b] = await Promise.all([
        owner.client.post(`/api/messages/${failedId}/resend`),
        owner.client.post(`/api/messages/${failedId}/resend`),
      ]);
      const [created, refused] = a.status === 201 ? [a, b] : [b, a];
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, "MESSAGE_ALREADY_RESENT");
      assert.equal(created.body.content, "Está aí?");
      assert.equal(created.body.sender, "HUMAN");
      assert.equal(created.body.senderUserId, owner.userId);
      assert.equal(created.body.resentFromId, failedId);
      assert.notEqual(created.body.id, failedId);
      const update = await next(updates, (d) => d.messageUpdated.id === created.body.id, "the copy SENT");
      assert.equal(update.messageUpdated.status, "SENT");
      assert.equal(update.messageUpdated.resentFromId, failedId);
      await graph.waitForCalls(3);
      assert.equal(graph.calls.length, 3, "sent once");
      assert.equal(JSON.parse(graph.calls[2].body).text.body, "Está aí?");
      assert.deepEqual(await db.message.findUniqueOrThrow({ where: { id: failedId } }), before, "unchanged");
      assert.equal(await db.message.count({ where: { resentFromId: failedId } }), 1);
      const again = await owner.client.post(`/api/messages/${failedId}/resend`);
      assert.equal(again.status, 409);
      assert.equal(again.body.code, "MESSAGE_ALREADY_RESENT");
    });

    await t.step("resend refused: a sent message, a customer's, another role or workspace", async () => {
      const calls = graph.calls.length;
      const messages = await db.message.count();
      const read = await db.message.findFirstOrThrow({ where: { conversationId, content: "Bom dia" } });
      assert.equal(read.status, "READ");
      for (const id of [read.id, first.id]) {
        const rest = await owner.client.post(`/api/messages/${id}/resend`);
        assert.equal(rest.status, 409);
        assert.equal(rest.body.code, "MESSAGE_NOT_RESENDABLE");
        const gql = await owner.client.post("/graphql", {
          query: `mutation ($id: ID!) { resendMessage(id: $id) { id } }`,
          variables: { id },
        });
        assert.equal(gql.body.errors[0].extensions.code, "MESSAGE_NOT_RESENDABLE");
      }
      const viewer = await ta.seed.member(workspaceId, "VIEWER");
      assert.equal((await viewer.client.post(`/api/messages/${failedId}/resend`)).status, 403);
      const other = await ta.seed.workspace("Other");
      const foreign = await other.owner.client.post(`/api/messages/${failedId}/resend`);
      assert.equal(foreign.status, 404);
      // Nor can another workspace follow this conversation's message states.
      const otherWs = wsClient(port, { token: other.owner.token, workspaceId: other.workspaceId });
      try {
        const refused = await within(
          subscribe(otherWs, MESSAGE_UPDATED, { id: conversationId }).next(),
          "404",
        );
        assert.equal(refused.errors?.[0].extensions.code, "NOT_FOUND");
      } finally {
        await otherWs.dispose();
      }
      assert.equal((await owner.client.post(`/api/messages/nope/resend`)).status, 404);
      assert.equal(graph.calls.length, calls, "nothing sent");
      assert.equal(await db.message.count(), messages, "nothing stored");
    });

    await t.step("131047 in a later status: FAILED with Meta's reason, the window closed, live", async () => {
      assert.equal((await owner.client.post(`${path}/messages`, { content: "Até logo" })).status, 200);
      const sent = await next(updates, () => true, "SENT");
      assert.equal(sent.messageUpdated.content, "Até logo");
      await next(
        events,
        (d) =>
          d.conversationEvents.type === "MESSAGE_UPDATED" &&
          d.conversationEvents.message.id === sent.messageUpdated.id,
        "SENT event",
      );
      const { externalId } = await sentOf("Até logo");
      const post = statusPost(channel.phoneNumberId, externalId!, "failed", [REENGAGEMENT]);
      assert.equal((await postSigned(ta.anon, channel.id, post)).status, 200);
      const failed = await next(updates, () => true, "FAILED");
      assert.equal(failed.messageUpdated.status, "FAILED");
      assert.equal(failed.messageUpdated.error.errors[0].code, 131047);
      assert.equal(failed.messageUpdated.error.errors[0].title, "Re-engagement message");
      assert.equal(
        failed.messageUpdated.errorMessage,
        "(#131047) Re-engagement message: Message failed to send because more than 24 hours have passed.",
      );
      // REST shows the same reason.
      const listed = await owner.client.get(`${path}/messages`);
      const shown = listed.body.data.find((m: { id: string }) => m.id === failed.messageUpdated.id);
      assert.equal(shown.errorMessage, failed.messageUpdated.errorMessage);
      const e = await next(events, (d) => d.conversationEvents.type === "MESSAGE_UPDATED", "window event");
      assert.equal(e.conversationEvents.message.status, "FAILED");
      assert.deepEqual(e.conversationEvents.conversation, { id: conversationId, window: { open: false } });

      // Sent again over GraphQL: a text outside the window is refused as a reply is, nothing sent.
      const calls = graph.calls.length;
      const gql = await owner.client.post("/graphql", {
        query: `mutation ($id: ID!) { resendMessage(id: $id) { id } }`,
        variables: { id: failed.messageUpdated.id },
      });
      assert.equal(gql.body.errors[0].extensions.code, "WINDOW_CLOSED");
      const rest = await owner.client.post(`/api/messages/${failed.messageUpdated.id}/resend`);
      assert.equal(rest.status, 409);
      assert.equal(rest.body.code, "WINDOW_CLOSED");

      // The customer writes again: the GraphQL resend goes out, once.
      await customerWrites(ta, channel, "wamid.IN2");
      const resent = await owner.client.post("/graphql", {
        query: `mutation ($id: ID!) { resendMessage(id: $id) { id content status resentFromId } }`,
        variables: { id: failed.messageUpdated.id },
      });
      assert.equal(resent.body.errors, undefined, JSON.stringify(resent.body.errors));
      assert.equal(resent.body.data.resendMessage.content, "Até logo");
      assert.equal(resent.body.data.resendMessage.resentFromId, failed.messageUpdated.id);
      await graph.waitForCalls(calls + 1);
      const update = await next(
        updates,
        (d) => d.messageUpdated.id === resent.body.data.resendMessage.id,
        "SENT",
      );
      assert.equal(update.messageUpdated.status, "SENT");
      assert.equal(graph.calls.length, calls + 1);
    });

    await t.step(
      "a sender that stopped mid-call: the stale-send sweep's UNCONFIRMED is pushed too",
      async () => {
        const long = new Date(Date.now() - 10 * 60_000);
        const stuck = await db.message.create({
          data: {
            conversationId,
            channelId: channel.id,
            direction: "OUTBOUND",
            senderKind: "AI",
            content: "Em que posso ajudar?",
            status: "PENDING",
            sendClaimedAt: long,
            sendClaimedBy: ta.app.deps.instance.id,
            sendStartedAt: long,
          },
        });
        assert.equal(await sweepStaleSends(ta.app.deps, new Date()), 0, "nothing to send again");
        const update = await next(updates, () => true, "UNCONFIRMED");
        assert.deepEqual([update.messageUpdated.id, update.messageUpdated.status], [stuck.id, "UNCONFIRMED"]);
      },
    );
  } finally {
    await updates.stop();
    await events.stop();
    await ws.dispose();
    await ta.close();
    await graph.close();
  }
});

Deno.test("resend keeps the sender and the template, outside the window too; a CLOSED conversation refuses it", async () => {
  const graph = startGraph();
  const ta = await startTestApp({ WHATSAPP_GRAPH_URL: graph.url("") });
  const db = ta.app.deps.db;
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const customer = await customerWrites(ta, channel, "wamid.IN9");
    // An AI reply that failed (as a send's outcome writes it).
    const failed = await db.message.create({
      data: {
        conversationId: customer.conversationId,
        channelId: channel.id,
        direction: "OUTBOUND",
        senderKind: "AI",
        content: "Olá! Como posso ajudar?",
        status: "FAILED",
        error: { status: 0, code: null, message: "timeout", retryable: true, attempt: 3, willRetry: false },
      },
    });
    const created = await owner.client.post(`/api/messages/${failed.id}/resend`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(
      [created.body.sender, created.body.senderUserId, created.body.content, created.body.resentFromId],
      ["AI", null, "Olá! Como posso ajudar?", failed.id],
    );
    await graph.waitForCalls(1);
    assert.equal(JSON.parse(graph.calls[0].body).text.body, "Olá! Como posso ajudar?");

    // A person's template that failed: sent again as the same template, whatever the window.
    await db.conversation.update({
      where: { id: customer.conversationId },
      data: { lastContactMessageAt: new Date(Date.now() - 25 * 3600_000) },
    });
    const send = { name: "hello_world", language: { code: "en_US" } };
    const template = await db.message.create({
      data: {
        conversationId: customer.conversationId,
        channelId: channel.id,
        direction: "OUTBOUND",
        senderKind: "HUMAN",
        senderUserId: owner.userId,
        type: "TEMPLATE",
        content: "Hello World",
        template: { name: "hello_world", language: "en_US" },
        payload: send,
        status: "FAILED",
      },
    });
    const again = await owner.client.post(`/api/messages/${template.id}/resend`);
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.deepEqual(
      [again.body.type, again.body.template, again.body.payload, again.body.sender],
      ["TEMPLATE", { name: "hello_world", language: "en_US" }, send, "HUMAN"],
    );
    await graph.waitForCalls(2);
    const call = JSON.parse(graph.calls[1].body);
    assert.deepEqual([call.type, call.template], ["template", send]);

    const second = await db.message.create({
      data: {
        conversationId: customer.conversationId,
        channelId: channel.id,
        direction: "OUTBOUND",
        senderKind: "AI",
        content: "Ainda aí?",
        status: "FAILED",
      },
    });
    const path = `/api/conversations/${customer.conversationId}`;
    assert.equal((await owner.client.post(`${path}/close`)).status, 200);
    const refused = await owner.client.post(`/api/messages/${second.id}/resend`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.code, "CONVERSATION_CLOSED");
    assert.equal(await db.message.count({ where: { resentFromId: second.id } }), 0);
    assert.equal(graph.calls.length, 2);
  } finally {
    await ta.close();
    await graph.close();
  }
});
