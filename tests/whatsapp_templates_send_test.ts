/**
 * Sending approved WhatsApp templates (docs/behaviour.md "WhatsApp: templates"), REST and GraphQL,
 * against the Graph stand-in on 127.0.0.1: on a conversation whose window Meta closed with 131047
 * (the template goes out, with Meta's exact payload, stored TEMPLATE with the body filled in);
 * parameters that do not fit (422 TEMPLATE_PARAMETERS, no call to Meta); a template that is not
 * APPROVED or not there (422 TEMPLATE_NOT_APPROVED); NAMED parameters; a URL button; starting a
 * conversation with a number that has not written, whose reply the agent answers; roles and
 * workspaces. The channels' templates are synced through the API from the stand-in, which lists
 * Meta's published examples (tests/_helpers/templates.ts) in the shape of its message_templates page.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { type Call, eventually, startReceiver } from "./_helpers/receiver.ts";
import { eventsOf, lastUserMessage, reengagementError, startModelServer } from "./_helpers/conversations.ts";
import { createWhatsAppChannel, customerWrites, postSigned, textMessage } from "./_helpers/whatsapp.ts";
import { gqlOk, gqlRefused } from "./_helpers/roles.ts";
import {
  HELLO_WORLD,
  ORDER_DELIVERY_UPDATE,
  ORDER_SHIPPED,
  SEASONAL_PROMOTION,
  type TemplateFixture,
} from "./_helpers/templates.ts";

const SEND = `mutation ($id: ID!, $input: SendTemplateInput!) {
  sendTemplate(id: $id, input: $input) { id status window { open } }
}`;
const START = `mutation ($channelId: ID!, $input: StartTemplateConversationInput!) {
  startTemplateConversation(channelId: $channelId, input: $input) { id status contactId window { open closesAt } }
}`;
const MESSAGES = `query ($id: ID!) {
  conversation(id: $id) { messages(last: 1) { edges { node { type sender content template { name language } status } } } }
}`;

/**
 * The Graph stand-in: a business account listing `listed` (one page of Meta's message_templates
 * answer), and the sends (`sends`, in order), refused with 131047 at the indexes in `refused`.
 */
function templateGraph(listed: TemplateFixture[]) {
  const sends: Call[] = [];
  const refused = new Set<number>();
  const receiver = startReceiver((call) => {
    if (call.path.endsWith("/message_templates")) {
      return Response.json({
        data: listed.map((t, i) => ({ ...t, id: String(546151681022936 + i) })),
        paging: { cursors: { before: "MAZDZD", after: "MjQZD" } },
      });
    }
    const i = sends.push(call) - 1;
    return refused.has(i) ? reengagementError() : Response.json({
      messaging_product: "whatsapp",
      contacts: [{ input: "16505551234", wa_id: "16505551234" }],
      messages: [{ id: `wamid.TEST${i}` }],
    });
  });
  return {
    url: receiver.url,
    sends,
    refused,
    waitForSends: (n: number) => eventually(() => Promise.resolve(sends.length >= n ? sends : undefined)),
    close: () => receiver.close(),
  };
}

Deno.test("WhatsApp templates: sent on a conversation and to a new number, checked before Meta sees them", async (t) => {
  const graph = templateGraph([
    SEASONAL_PROMOTION,
    ORDER_DELIVERY_UPDATE,
    ORDER_SHIPPED,
    HELLO_WORLD,
    { ...HELLO_WORLD, name: "hello_pending", status: "PENDING" },
  ]);
  const { refused } = graph;
  const model = startModelServer(() => ({ content: "Olá! Como posso ajudar?" }));
  // Agents with SLOW grouping never answer here (10 minutes); MEDIUM ones answer at once.
  const ta = await startTestApp({
    WHATSAPP_GRAPH_URL: graph.url(""),
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    GROUPING_MEDIUM_MS: "30",
  });
  const db = ta.app.deps.db;
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client, { messageGroupingTime: "SLOW" });
    /** A WhatsApp channel of the agent with its business account's templates synced over REST. */
    const syncedChannel = async (agentId: string) => {
      const made = await createWhatsAppChannel(owner.client, agentId);
      const patched = await owner.client.patch(`/api/agents/${agentId}/channels/${made.id}`, {
        config: { businessAccountId: "102290129340398" },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      const synced = await owner.client.post(`/api/channels/${made.id}/templates/sync`);
      assert.equal(synced.status, 200, JSON.stringify(synced.body));
      assert.equal(synced.body.data.length, 5);
      return made;
    };
    const channel = await syncedChannel(agent.id);
    const first = await customerWrites(ta, channel, "wamid.IN1");
    const conversationId = first.conversationId;
    const path = `/api/conversations/${conversationId}`;
    const sentOf = (i: number) => JSON.parse(graph.sends[i].body);

    await t.step(
      "after Meta's 131047, a template goes out with Meta's exact payload, stored TEMPLATE",
      async () => {
        assert.equal((await owner.client.post(`${path}/takeover`)).status, 200);
        refused.add(0);
        assert.equal((await owner.client.post(`${path}/messages`, { content: "Bom dia" })).status, 200);
        await eventually(async () => (await owner.client.get(path)).body.window.open === false || undefined);
        assert.equal(
          (await owner.client.post(`${path}/messages`, { content: "Oi?" })).body.code,
          "WINDOW_CLOSED",
        );

        const res = await owner.client.post(`${path}/template`, {
          name: "seasonal_promotion_text_only",
          language: "en_US",
          parameters: { header: "Summer Sale", body: ["25OFF", "15%"] },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.id, conversationId);
        assert.equal(res.body.status, "HUMAN");
        const [, call] = await graph.waitForSends(2);
        assert.equal(call.path, `/${channel.phoneNumberId}/messages`);
        assert.equal(call.headers.get("authorization"), "Bearer test-access-token");
        // Meta's "Send message templates": messaging_product, to, type template, the template object.
        assert.deepEqual(JSON.parse(call.body), {
          messaging_product: "whatsapp",
          to: "16505551234",
          type: "template",
          template: {
            name: "seasonal_promotion_text_only",
            language: { code: "en_US" },
            components: [
              { type: "header", parameters: [{ type: "text", text: "Summer Sale" }] },
              { type: "body", parameters: [{ type: "text", text: "25OFF" }, { type: "text", text: "15%" }] },
            ],
          },
        });
        const content =
          "Shop now through the end of August and use code 25OFF to get 15% off of all merchandise.";
        const stored = await eventually(() =>
          db.message.findFirst({ where: { conversationId, type: "TEMPLATE", status: "SENT" } }).then((m) =>
            m ?? undefined
          )
        );
        assert.equal(stored.senderKind, "HUMAN");
        assert.equal(stored.senderUserId, owner.userId);
        assert.equal(stored.content, content);
        assert.equal(stored.externalId, "wamid.TEST1");
        assert.deepEqual(stored.template, { name: "seasonal_promotion_text_only", language: "en_US" });
        assert.deepEqual(
          stored.payload,
          JSON.parse(call.body).template,
          "every attempt sends the stored payload",
        );
        // REST and GraphQL read it alike.
        const rest = (await owner.client.get(`${path}/messages`)).body.data.at(-1);
        assert.deepEqual(
          { type: rest.type, sender: rest.sender, content: rest.content, template: rest.template },
          { type: "TEMPLATE", sender: "HUMAN", content, template: stored.template },
        );
        const gql = gqlOk(await owner.client.graphql(MESSAGES, { id: conversationId }));
        assert.deepEqual(gql.conversation.messages.edges[0].node, {
          type: "TEMPLATE",
          sender: "HUMAN",
          content,
          template: { name: "seasonal_promotion_text_only", language: "en_US" },
          status: "SENT",
        });
        const sent = (await eventsOf(ta.app, conversationId)).filter((e) => e.type === "message.sent").at(-1);
        assert.deepEqual([sent?.data.sender, sent?.data.message.type, sent?.data.message.content], [
          "HUMAN",
          "TEMPLATE",
          content,
        ]);
      },
    );

    await t.step(
      "parameters that do not fit: 422 TEMPLATE_PARAMETERS naming each, nothing stored or sent",
      async () => {
        const calls = graph.sends.length;
        const messages = await db.message.count({ where: { conversationId } });
        const input = {
          name: "seasonal_promotion_text_only",
          language: "en_US",
          parameters: { body: ["25OFF"] },
        };
        const res = await owner.client.post(`${path}/template`, input);
        assert.equal(res.status, 422);
        assert.equal(res.headers.get("content-type"), "application/problem+json");
        assert.equal(res.body.code, "TEMPLATE_PARAMETERS");
        assert.deepEqual(res.body.errors, [
          { path: "parameters.header", message: "the header's {{1}} needs a text value" },
          { path: "parameters.body", message: "the body takes 2 parameter(s) ({{1}}..{{2}}); 1 given" },
        ]);
        const refusedGql = gqlRefused(
          await owner.client.graphql(SEND, { id: conversationId, input }),
          "TEMPLATE_PARAMETERS",
        );
        assert.deepEqual(refusedGql.extensions.errors, res.body.errors);
        assert.equal(refusedGql.extensions.status, 422);
        assert.equal(graph.sends.length, calls, "no call to Meta");
        assert.equal(await db.message.count({ where: { conversationId } }), messages, "nothing stored");
      },
    );

    await t.step("a PENDING or unknown template: 422 TEMPLATE_NOT_APPROVED", async () => {
      const calls = graph.sends.length;
      for (
        const [name, language] of [["hello_pending", "en_US"], ["no_such_template", "en_US"], [
          "hello_pending",
          "pt_BR",
        ]]
      ) {
        const res = await owner.client.post(`${path}/template`, { name, language });
        assert.equal(res.status, 422, name);
        assert.equal(res.body.code, "TEMPLATE_NOT_APPROVED");
        gqlRefused(
          await owner.client.graphql(SEND, { id: conversationId, input: { name, language } }),
          "TEMPLATE_NOT_APPROVED",
        );
      }
      assert.match(
        (await owner.client.post(`${path}/template`, { name: "hello_pending", language: "en_US" })).body
          .detail,
        /is PENDING/,
      );
      assert.equal(graph.sends.length, calls);
    });

    await t.step("NAMED parameters and a LOCATION header, over GraphQL", async () => {
      const answer = gqlOk(
        await owner.client.graphql(SEND, {
          id: conversationId,
          input: {
            name: "order_delivery_update",
            language: "en_US",
            parameters: {
              header: { latitude: 37.483307, longitude: 122.148981, name: "Pablo Morales" },
              body: { customer_name: "Mark", order_number: "566701" },
            },
          },
        }),
      );
      assert.deepEqual(answer.sendTemplate, { id: conversationId, status: "HUMAN", window: { open: false } });
      await graph.waitForSends(3);
      assert.deepEqual(sentOf(2).template, {
        name: "order_delivery_update",
        language: { code: "en_US" },
        components: [
          {
            type: "header",
            parameters: [{
              type: "location",
              location: { latitude: 37.483307, longitude: 122.148981, name: "Pablo Morales" },
            }],
          },
          {
            type: "body",
            parameters: [
              { type: "text", parameter_name: "customer_name", text: "Mark" },
              { type: "text", parameter_name: "order_number", text: "566701" },
            ],
          },
        ],
      });
    });

    await t.step("an IMAGE header and a URL button's suffix", async () => {
      const res = await owner.client.post(`${path}/template`, {
        name: "order_shipped",
        language: "pt-BR",
        parameters: {
          header: { link: "https://www.luckyshrub.com/media/order.jpg" },
          body: ["Maria", "ORD-9271"],
          buttons: ["ORD-9271"],
        },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await graph.waitForSends(4);
      assert.deepEqual(sentOf(3).template, {
        name: "order_shipped",
        language: { code: "pt_BR" },
        components: [
          {
            type: "header",
            parameters: [{ type: "image", image: { link: "https://www.luckyshrub.com/media/order.jpg" } }],
          },
          { type: "body", parameters: [{ type: "text", text: "Maria" }, { type: "text", text: "ORD-9271" }] },
          { type: "button", sub_type: "url", index: "0", parameters: [{ type: "text", text: "ORD-9271" }] },
        ],
      });
      const row = await eventually(() =>
        db.message.findFirst({
          where: { conversationId, content: "Olá Maria, seu pedido ORD-9271 foi enviado." },
        })
          .then((m) => m ?? undefined)
      );
      assert.deepEqual(row.template, { name: "order_shipped", language: "pt_BR" });
    });

    await t.step("an agent's reminderTemplate: written and read over REST and GraphQL", async () => {
      // PUT replaces the whole agent: it keeps not answering.
      const kept = { name: "Ana", messageGroupingTime: "SLOW" };
      const reminderTemplate = {
        name: "seasonal_promotion_text_only",
        language: "en_US",
        parameters: { header: "Summer Sale", body: ["25OFF", "15%"] },
      };
      const put = await owner.client.put(`/api/agents/${agent.id}`, { ...kept, reminderTemplate });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.deepEqual(
        (await owner.client.get(`/api/agents/${agent.id}`)).body.reminderTemplate,
        reminderTemplate,
      );
      const read = `query ($id: ID!) { agent(id: $id) { reminderTemplate { name language parameters } } }`;
      assert.deepEqual(
        gqlOk(await owner.client.graphql(read, { id: agent.id })).agent.reminderTemplate,
        reminderTemplate,
      );
      const replaced = gqlOk(
        await owner.client.graphql(
          `mutation ($id: ID!, $input: ReplaceAgentInput!) {
            replaceAgent(id: $id, input: $input) { reminderTemplate { name language parameters } }
          }`,
          {
            id: agent.id,
            input: { ...kept, reminderTemplate: { name: "order_shipped", language: "pt_BR" } },
          },
        ),
      );
      assert.deepEqual(replaced.replaceAgent.reminderTemplate, {
        name: "order_shipped",
        language: "pt_BR",
        parameters: {},
      });
      const bad = await owner.client.put(`/api/agents/${agent.id}`, {
        ...kept,
        reminderTemplate: { language: "en_US", parameters: { body: "x" } },
      });
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body.errors.map((e: { path: string }) => e.path), [
        "reminderTemplate.name",
        "reminderTemplate.parameters.body",
      ]);
      const cleared = await owner.client.put(`/api/agents/${agent.id}`, {
        ...kept,
        reminderTemplate: null,
      });
      assert.equal(cleared.body.reminderTemplate, null);
    });

    await t.step(
      "roles and workspaces: VIEWER 403, another workspace's ids 404, CLOSED and API 409",
      async () => {
        const calls = graph.sends.length;
        const input = { name: "hello_pending", language: "en_US" };
        const viewer = await ta.seed.member(workspaceId, "VIEWER");
        assert.equal((await viewer.client.post(`${path}/template`, input)).status, 403);
        assert.equal(
          (await viewer.client.post(`/api/channels/${channel.id}/templates/send`, {
            ...input,
            to: "15550001111",
          }))
            .status,
          403,
        );
        gqlRefused(await viewer.client.graphql(SEND, { id: conversationId, input }), "FORBIDDEN");
        const agentMember = await ta.seed.member(workspaceId, "AGENT");
        assert.equal(
          (await agentMember.client.post(`${path}/template`, input)).body.code,
          "TEMPLATE_NOT_APPROVED",
        );
        const other = await ta.seed.workspace("Other");
        assert.equal((await other.owner.client.post(`${path}/template`, input)).status, 404);
        assert.equal(
          (await other.owner.client.post(`/api/channels/${channel.id}/templates/send`, {
            ...input,
            to: "15550001111",
          }))
            .status,
          404,
        );
        gqlRefused(
          await other.owner.client.graphql(START, {
            channelId: channel.id,
            input: { ...input, to: "15550001111" },
          }),
          "NOT_FOUND",
        );
        const api = await owner.client.post(`/api/agents/${agent.id}/channels`, {
          type: "API",
          label: "App",
        });
        const apiMessage = await owner.client.post(`/api/channels/${api.body.id}/messages`, {
          contact: { externalId: "c-1" },
          type: "TEXT",
          content: "Hello",
        });
        const onApi = await owner.client.post(
          `/api/conversations/${apiMessage.body.conversationId}/template`,
          input,
        );
        assert.deepEqual([onApi.status, onApi.body.code], [409, "NOT_WHATSAPP"]);
        const startOnApi = await owner.client.post(`/api/channels/${api.body.id}/templates/send`, {
          ...input,
          to: "15550001111",
        });
        assert.deepEqual([startOnApi.status, startOnApi.body.code], [409, "NOT_WHATSAPP"]);
        assert.equal((await owner.client.post(`${path}/close`)).status, 200);
        const closed = await owner.client.post(`${path}/template`, input);
        assert.deepEqual([closed.status, closed.body.code], [409, "CONVERSATION_CLOSED"]);
        assert.equal(graph.sends.length, calls);
      },
    );

    await t.step(
      "a number that has not written: a template starts the conversation, the agent answers the reply",
      async () => {
        // This agent answers at once (MEDIUM grouping: 30 ms here).
        const answering = await ta.seed.agent(owner.client, { messageGroupingTime: "MEDIUM", name: "Bia" });
        const line = await syncedChannel(answering.id);
        const calls = graph.sends.length;
        const res = await owner.client.post(`/api/channels/${line.id}/templates/send`, {
          to: "+55 11 98888-7777",
          name: "hello_world",
          language: "en_US",
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        assert.equal(res.body.status, "OPEN");
        assert.equal(res.body.contactId, "5511988887777");
        assert.deepEqual(
          res.body.window,
          { open: false, closesAt: null },
          "closed until the customer writes",
        );
        await graph.waitForSends(calls + 1);
        assert.deepEqual(sentOf(calls), {
          messaging_product: "whatsapp",
          to: "5511988887777",
          type: "template",
          template: { name: "hello_world", language: { code: "en_US" } },
        });
        const opened = (await eventsOf(ta.app, res.body.id)).map((e) => e.type);
        assert.deepEqual(opened.slice(0, 2), ["conversation.opened", "message.sent"]);
        // Again over GraphQL: the open conversation is the one used.
        const again = gqlOk(
          await owner.client.graphql(START, {
            channelId: line.id,
            input: { to: "5511988887777", name: "hello_world", language: "en_US" },
          }),
        );
        assert.equal(again.startTemplateConversation.id, res.body.id);
        await graph.waitForSends(calls + 2);

        // The customer answers: the same conversation, and the agent replies in it.
        const reply = await postSigned(
          ta.anon,
          line.id,
          textMessage(line.phoneNumberId, "wamid.REPLY1", "Sim, quero saber mais", "5511988887777"),
        );
        assert.equal(reply.status, 200);
        const [call] = await model.waitForCalls(1);
        assert.equal(lastUserMessage(call), "Sim, quero saber mais");
        await graph.waitForSends(calls + 3);
        assert.deepEqual(sentOf(calls + 2), {
          messaging_product: "whatsapp",
          to: "5511988887777",
          type: "text",
          text: { body: "Olá! Como posso ajudar?" },
        });
        const conversations = await db.conversation.findMany({ where: { channelId: line.id } });
        assert.deepEqual(conversations.map((c) => c.id), [res.body.id]);
        const ai = await db.message.findFirstOrThrow({
          where: { conversationId: res.body.id, senderKind: "AI" },
        });
        assert.equal(ai.content, "Olá! Como posso ajudar?");
      },
    );
  } finally {
    await ta.close();
    await graph.close();
    await model.close();
  }
});
