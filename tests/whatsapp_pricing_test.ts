/**
 * What Meta bills a message for (docs/behaviour.md "Channels and conversations"): the `pricing` of
 * its status webhooks is kept on the message, `{ category, billable }` in REST and GraphQL reads,
 * whatever the status move (a late `delivered` after `read` carries it too). The statuses are Meta's
 * documented shape (`pricing: { billable, pricing_model, category }`).
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import { startGraph } from "./_helpers/conversations.ts";
import { createWhatsAppChannel, customerWrites, envelope, postSigned } from "./_helpers/whatsapp.ts";

Deno.test("a status' pricing is kept on its message and read as { category, billable }", async () => {
  const graph = startGraph();
  const ta = await startTestApp({ WHATSAPP_GRAPH_URL: graph.url(""), GROUPING_MEDIUM_MS: "600000" });
  const db = ta.app.deps.db;
  try {
    const { owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const channel = await createWhatsAppChannel(owner.client, agent.id);
    const inbound = await customerWrites(ta, channel, "wamid.P1");
    const path = `/api/conversations/${inbound.conversationId}`;
    assert.equal((await owner.client.post(`${path}/takeover`)).status, 200);
    assert.equal((await owner.client.post(`${path}/messages`, { content: "Olá" })).status, 200);
    const sent = await eventually(() =>
      db.message.findFirst({ where: { conversationId: inbound.conversationId, status: "SENT" } }).then((m) =>
        m ?? undefined
      )
    );
    const status = (state: string) =>
      envelope(channel.phoneNumberId, {
        statuses: [{
          id: sent.externalId,
          status: state,
          timestamp: "1749416383",
          recipient_id: "16505551234",
          conversation: { id: "CONVERSATION_ID", origin: { type: "service" } },
          pricing: { billable: true, pricing_model: "PMP", category: "SERVICE", type: "regular" },
        }],
      });
    // Read first, then a late delivered: the status stays READ, the pricing is kept.
    assert.equal((await postSigned(ta.anon, channel.id, status("read"))).status, 200);
    assert.equal((await postSigned(ta.anon, channel.id, status("delivered"))).status, 200);
    // Both posts stored (their jobs done): the message READ, with its pricing.
    const priced = await eventually(() =>
      db.message.findUniqueOrThrow({ where: { id: sent.id } })
        .then((m) => m.status === "READ" && m.pricing !== null ? m : undefined)
    );
    assert.deepEqual(priced.pricing, { category: "service", billable: true });
    const rest = await owner.client.get(`${path}/messages`);
    const shown = (rest.body.data as Array<{ id: string; pricing: unknown }>).find((m) => m.id === sent.id);
    assert.deepEqual(shown?.pricing, { category: "service", billable: true });
    const gql = await owner.client.post("/graphql", {
      query:
        `query ($id: ID!) { conversation(id: $id) { messages(first: 10) { edges { node { id pricing { category billable } } } } } }`,
      variables: { id: inbound.conversationId },
    });
    const nodes = gql.body.data.conversation.messages.edges.map((e: { node: unknown }) => e.node);
    assert.deepEqual(nodes, [
      { id: inbound.id, pricing: null },
      { id: sent.id, pricing: { category: "service", billable: true } },
    ]);
  } finally {
    await ta.close();
    await graph.close();
  }
});
