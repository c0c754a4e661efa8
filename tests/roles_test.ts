/**
 * The role table (which role may call what) over every GraphQL mutation and query and its REST
 * twin, for OWNER, MANAGER, AGENT, VIEWER and an API token (which acts as MANAGER). Each capability
 * has one row and one allow-list, held against GraphQL and REST in the same run: allowed calls
 * succeed (GraphQL: data, no errors; REST: the row's status) and a write changes the database, a
 * read does not; refused ones answer FORBIDDEN (GraphQL: exactly one error with that code; REST:
 * 403 problem+json) and change nothing. The table must name every root field of the schema, so a
 * new mutation without a row fails here. A refused role gets its 403 whatever body it sends.
 */
import assert from "node:assert/strict";
import { HELLO_WORLD, metaTemplate, startTemplateGraph, storeTemplates } from "./_helpers/templates.ts";
import { Client, type Reply, startTestApp } from "./_helpers/app.ts";
import { assertProblem, restTablesOf, snapshot } from "./_helpers/problem.ts";
import {
  EVERYONE,
  gql,
  gqlOk,
  gqlRefused,
  OWNER_ONLY,
  PEOPLE,
  seedRoleCast,
  SUPERVISORS,
  USAGE_READERS,
  type Who,
  WRITERS,
} from "./_helpers/roles.ts";
import { buildSchema } from "../src/graphql/schema.ts";
import type { App } from "../src/app.ts";
import { HOOK, INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { startModelServer } from "./_helpers/conversations.ts";
import { actorOf, APPROVAL_DECIDERS, APPROVAL_READERS, newApproval } from "./_helpers/approvals.ts";

const { schema } = buildSchema();

interface Ids {
  workspaceId: string;
  agentId: string;
  intentId: string;
  webhookId: string;
  versionId: string;
  deliveryId: string;
  inviteId: string;
  tokenId: string;
  /** A WHATSAPP channel, an API channel and a conversation of the agent (handoff rows set up one
   * in the state they need). */
  channelId: string;
  apiChannelId: string;
  conversationId: string;
  /** The user id of a member a row changes or removes. */
  memberId?: string;
  /** Login of a user (login row) or the token of an invite (acceptInvite row). */
  email?: string;
  inviteToken?: string;
  /** Set when the row made a workspace of its own: the API token of that workspace. */
  token?: string;
  /** A PENDING approval (the decision rows make their own). */
  approvalId?: string;
  /** A FAILED outbound message (resend), a saved reply. */
  messageId?: string;
  savedReplyId?: string;
}

interface Row {
  name: string;
  /** The root field of Query or Mutation the row calls. */
  field: string;
  allowed: Who[];
  read?: boolean;
  /** Each call by a new caller of the role (the call ends or changes the caller's own session). */
  fresh?: boolean;
  /** A write of tables `snapshot(app)` leaves out only (events and deliveries, sessions). */
  outsideRestTables?: boolean;
  /** Runs with the row's (fresh) client before the database is read: what the call needs of its caller. */
  prepare?: (c: Client) => Promise<void>;
  setup?: (ids: Ids) => Promise<Ids>;
  gql: (ids: Ids) => [string, Record<string, unknown>?];
  /** The same capability over REST, with its success status. */
  rest: { ok: number; call: (c: Client, ids: Ids) => Promise<Reply> };
}

const PASSWORD = "correct horse battery"; // every seeded user's (tests/_helpers/app.ts)

/** The REST snapshot plus the tables only GraphQL rows here also write (deliveries, sessions). */
const fullSnapshot = (app: App) =>
  snapshot(app, [
    "DomainEvent",
    "WebhookDelivery",
    "DeliveryAttempt",
    "Session",
    "Conversation",
    "Message",
    "ApprovalReplay",
    "ApprovalReplayCase",
    "ReplayPin",
  ]);

Deno.test("roles over GraphQL and REST, held to the same allow-lists", async (t) => {
  // No workers: a test event or redelivery stays queued, so only the call itself changes rows.
  const model = startModelServer(() => ({ content: "ok" }));
  // A business account's one template, for the template sync's row.
  const graph = startTemplateGraph([metaTemplate(1)]);
  const ta = await startTestApp({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
  }, {
    workers: false,
  });
  const { app, seed } = ta;
  const db = app.deps.db;
  try {
    const { workspaceId, owner, users, clientOf } = await seedRoleCast(app, seed, "Roles GraphQL");
    const { MANAGER: manager, AGENT: agentUser, VIEWER: viewer } = users;
    const o = owner.client;
    const freshClient = async (who: Who, ids: Ids): Promise<Client> => {
      if (who === "TOKEN") {
        const made = await o.post(`/api/workspaces/${ids.workspaceId}/api-tokens`, { label: "fresh" });
        return new Client(app, made.body.token, ids.workspaceId);
      }
      return (await seed.member(ids.workspaceId, who)).client;
    };

    let n = 0;
    const newAgent = async () => (await o.post("/api/agents", { name: `Agent ${++n}` })).body.id as string;
    const newIntent = async (agentId: string) =>
      (await o.post(`/api/agents/${agentId}/intents`, { name: `Intent ${++n}`, ...INTENT_FIELDS })).body
        .id as string;
    const newWebhook = async (agentId: string) =>
      (await o.post(`/api/agents/${agentId}/webhooks`, HOOK)).body.id as string;
    /** A FAILED delivery of the webhook (what redelivery needs), written directly. */
    const newFailedDelivery = async (agentId: string, webhookId: string) => {
      const event = await db.domainEvent.create({
        data: { workspaceId, agentId, type: "message.sent", payload: {} },
      });
      const d = await db.webhookDelivery.create({
        data: { webhookId, eventId: event.id, status: "FAILED", attemptCount: 3, idempotencyKey: `k${++n}` },
      });
      return d.id;
    };
    const newChannel = async (agentId: string, businessAccountId?: string) =>
      (await o.post(`/api/agents/${agentId}/channels`, {
        type: "WHATSAPP",
        label: "Sales",
        config: {
          phoneNumberId: `900${++n}`,
          accessToken: "t",
          appSecret: "s",
          verifyToken: "v",
          businessAccountId,
        },
      })).body.id as string;
    /** A conversation of the agent on an API channel, written directly (conversations start inbound). */
    const newConversation = async (i: Ids, status: "OPEN" | "HUMAN") => {
      const channel = await db.channel.create({
        data: { workspaceId: i.workspaceId, agentId: i.agentId, type: "API", label: `L${++n}` },
      });
      const contact = await db.contact.create({
        data: { workspaceId: i.workspaceId, externalId: `c${++n}`, name: "Maria" },
      });
      const conv = await db.conversation.create({
        data: {
          workspaceId: i.workspaceId,
          agentId: i.agentId,
          channelId: channel.id,
          contactId: contact.id,
          status,
        },
      });
      return { ...i, conversationId: conv.id };
    };
    /** A conversation of the agent on its WhatsApp channel (fixture.channelId), written directly. */
    const newWhatsAppConversation = async (i: Ids) => {
      const contact = await db.contact.create({
        data: { workspaceId: i.workspaceId, externalId: `1555${++n}`, name: "Maria" },
      });
      const conv = await db.conversation.create({
        data: {
          workspaceId: i.workspaceId,
          agentId: i.agentId,
          channelId: i.channelId,
          contactId: contact.id,
        },
      });
      return { ...i, conversationId: conv.id };
    };
    const ATTENDANTS: Who[] = ["OWNER", "MANAGER", "AGENT", "TOKEN"];
    const newInvite = async (ids: Ids, role = "VIEWER") =>
      (await o.post(`/api/workspaces/${ids.workspaceId}/invites`, { email: `x${++n}@example.test`, role }))
        .body;

    const agentId = await newAgent();
    await o.put(`/api/agents/${agentId}/prompt`, { systemPrompt: "First", rationale: "r" });
    const webhookId = await newWebhook(agentId);
    const fixture: Ids = {
      workspaceId,
      agentId,
      intentId: await newIntent(agentId),
      webhookId,
      versionId: (await o.get(`/api/agents/${agentId}/prompt-versions?limit=1`)).body.data[0].id,
      deliveryId: await newFailedDelivery(agentId, webhookId),
      inviteId: (await newInvite({ workspaceId } as Ids, "AGENT")).id,
      tokenId: (await o.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "fixture" })).body.id,
      channelId: await newChannel(agentId),
      apiChannelId: (await o.post(`/api/agents/${agentId}/channels`, { type: "API", label: "App" })).body.id,
      conversationId: "",
    };
    fixture.conversationId = (await o.post(`/api/channels/${fixture.apiChannelId}/messages`, {
      contact: { externalId: "roles-1" },
      type: "TEXT",
      content: "hi",
    })).body.conversationId;
    await storeTemplates(app, { id: fixture.channelId, workspaceId }, [HELLO_WORLD]);
    const contactOfFixture =
      (await db.conversation.findUniqueOrThrow({ where: { id: fixture.conversationId } }))
        .contactId;
    fixture.savedReplyId =
      (await o.post("/api/saved-replies", { shortcut: "thanks", content: "Obrigado!" })).body.id;
    const ownerCtx = await actorOf(app, owner.token, workspaceId);
    fixture.approvalId = await newApproval(ownerCtx, agentId);
    const a = (i: Ids) => `/api/agents/${i.agentId}`;
    const ws = (i: Ids) => `/api/workspaces/${i.workspaceId}`;
    const hook = (i: Ids) => `${a(i)}/webhooks/${i.webhookId}`;
    const withMember = (role: "AGENT" | "MANAGER") => async (i: Ids) => ({
      ...i,
      memberId: (await seed.member(i.workspaceId, role)).userId,
    });

    // The supervisor: a conversation made anew by each read, a message for each reset to erase.
    const withoutSupervisorConversation = async (i: Ids) => {
      await db.supervisorConversation.deleteMany({ where: { workspaceId: i.workspaceId } });
      return i;
    };
    const withSupervisorMessage = async (i: Ids) => {
      const conv = await db.supervisorConversation.upsert({
        where: { workspaceId: i.workspaceId },
        create: { workspaceId: i.workspaceId },
        update: {},
      });
      await db.supervisorMessage.create({ data: { conversationId: conv.id, role: "USER", content: "x" } });
      return i;
    };

    const rows: Row[] = [
      // Conversations: conversation:attend (take over, reply in, release, close).
      ...([
        ["takeoverConversation", "takeover", "OPEN"],
        ["releaseConversation", "release", "HUMAN"],
        ["closeConversation", "close", "OPEN"],
      ] as const).map(([field, path, status]): Row => ({
        name: field,
        field,
        allowed: ATTENDANTS,
        setup: (i) => newConversation(i, status),
        gql: (i) => [`mutation($id: ID!) { ${field}(id: $id) { id status } }`, { id: i.conversationId }],
        rest: { ok: 200, call: (c, i) => c.post(`/api/conversations/${i.conversationId}/${path}`) },
      })),
      {
        name: "replyInConversation",
        field: "replyInConversation",
        allowed: ATTENDANTS,
        setup: (i) => newConversation(i, "HUMAN"),
        gql: (i) => [
          'mutation($id: ID!) { replyInConversation(id: $id, input: { content: "Oi" }) { id status } }',
          { id: i.conversationId },
        ],
        rest: {
          ok: 200,
          call: (c, i) => c.post(`/api/conversations/${i.conversationId}/messages`, { content: "Oi" }),
        },
      },
      // WhatsApp templates (conversation:attend): on a WhatsApp conversation, and to a new number.
      {
        name: "sendTemplate",
        field: "sendTemplate",
        allowed: ATTENDANTS,
        setup: newWhatsAppConversation,
        gql: (i) => [
          'mutation($id: ID!) { sendTemplate(id: $id, input: { name: "hello_world", language: "en_US" }) { id } }',
          { id: i.conversationId },
        ],
        rest: {
          ok: 200,
          call: (c, i) =>
            c.post(`/api/conversations/${i.conversationId}/template`, {
              name: "hello_world",
              language: "en_US",
            }),
        },
      },
      {
        name: "startTemplateConversation",
        field: "startTemplateConversation",
        allowed: ATTENDANTS,
        gql: (i) => [
          `mutation($ch: ID!, $to: String!) { startTemplateConversation(channelId: $ch,
            input: { to: $to, name: "hello_world", language: "en_US" }) { id } }`,
          { ch: i.channelId, to: `1555000${++n}` },
        ],
        rest: {
          ok: 201,
          call: (c, i) =>
            c.post(`/api/channels/${i.channelId}/templates/send`, {
              to: `1555000${++n}`,
              name: "hello_world",
              language: "en_US",
            }),
        },
      },
      // Queries: reads of everyone, except invites and API tokens (members:manage).
      {
        name: "viewer",
        field: "viewer",
        allowed: EVERYONE,
        read: true,
        gql: () => ["{ viewer { user { id } workspaces { id role } } }"],
        rest: { ok: 200, call: (c) => c.get("/api/auth/me") },
      },
      {
        name: "workspaces",
        field: "workspaces",
        allowed: EVERYONE,
        read: true,
        gql: () => ["{ workspaces { id name role } }"],
        rest: { ok: 200, call: (c) => c.get("/api/workspaces") },
      },
      {
        name: "members",
        field: "members",
        allowed: EVERYONE,
        read: true,
        gql: () => ["{ members { edges { node { id role } } } }"],
        rest: { ok: 200, call: (c, i) => c.get(`${ws(i)}/members`) },
      },
      {
        name: "invites",
        field: "invites",
        allowed: WRITERS,
        read: true,
        gql: () => ["{ invites { edges { node { id email } } } }"],
        rest: { ok: 200, call: (c, i) => c.get(`${ws(i)}/invites`) },
      },
      {
        name: "apiTokens",
        field: "apiTokens",
        allowed: WRITERS,
        read: true,
        gql: () => ["{ apiTokens { edges { node { id label createdBy { id } } } } }"],
        rest: { ok: 200, call: (c, i) => c.get(`${ws(i)}/api-tokens`) },
      },
      {
        name: "agents",
        field: "agents",
        allowed: EVERYONE,
        read: true,
        gql: () => ["{ agents { edges { node { id counts { intents } } } } }"],
        rest: { ok: 200, call: (c) => c.get("/api/agents") },
      },
      {
        name: "agent with its connections",
        field: "agent",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          `query($id: ID!) { agent(id: $id) { id intents { edges { node { id } } }
            webhooks { edges { node { id headers } } } promptVersions { edges { node { id } } } } }`,
          { id: i.agentId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(a(i)) },
      },
      {
        name: "promptVersions",
        field: "promptVersions",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          "query($a: ID!) { promptVersions(agentId: $a) { edges { node { id rationale } } } }",
          { a: i.agentId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`${a(i)}/prompt-versions`) },
      },
      {
        name: "webhookDeliveries",
        field: "webhookDeliveries",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          "query($a: ID!, $w: ID!) { webhookDeliveries(agentId: $a, webhookId: $w) { edges { node { id status } } } }",
          { a: i.agentId, w: i.webhookId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`${hook(i)}/deliveries`) },
      },
      {
        name: "invitation",
        field: "invitation",
        allowed: EVERYONE,
        read: true,
        setup: async (i) => ({ ...i, inviteToken: (await newInvite(i)).inviteUrl.split("/").pop() }),
        gql: (
          i,
        ) => ["query($t: String!) { invitation(token: $t) { email role existingUser } }", {
          t: i.inviteToken,
        }],
        rest: { ok: 200, call: (c, i) => c.get(`/invite/${i.inviteToken}`) },
      },
      {
        name: "intents",
        field: "intents",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          "query($a: ID!) { intents(agentId: $a) { edges { node { id webhookUrl } } } }",
          { a: i.agentId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`${a(i)}/intents`) },
      },
      {
        name: "intent",
        field: "intent",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          "query($a: ID!, $id: ID!) { intent(agentId: $a, id: $id) { id webhookUrl } }",
          { a: i.agentId, id: i.intentId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`${a(i)}/intents/${i.intentId}`) },
      },
      {
        name: "webhooks",
        field: "webhooks",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          "query($a: ID!) { webhooks(agentId: $a) { edges { node { id url headers } } } }",
          { a: i.agentId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`${a(i)}/webhooks`) },
      },
      {
        name: "webhook with its delivery log",
        field: "webhook",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          `query($a: ID!, $id: ID!) { webhook(agentId: $a, id: $id) { id headers
            deliveries { edges { node { id status } } } } }`,
          { a: i.agentId, id: i.webhookId },
        ],
        // (Its delivery log over REST is the webhookDeliveries row's.)
        rest: { ok: 200, call: (c, i) => c.get(hook(i)) },
      },
      {
        name: "webhookDelivery",
        field: "webhookDelivery",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          `query($a: ID!, $w: ID!, $id: ID!) { webhookDelivery(agentId: $a, webhookId: $w, id: $id) {
            id status attempts { number } } }`,
          { a: i.agentId, w: i.webhookId, id: i.deliveryId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`${hook(i)}/deliveries/${i.deliveryId}`) },
      },

      // Agents, prompts, intents, webhooks and their deliveries: agent:write.
      {
        name: "createAgent",
        field: "createAgent",
        allowed: WRITERS,
        gql: () => ['mutation { createAgent(input: { name: "New" }) { id } }'],
        rest: { ok: 201, call: (c) => c.post("/api/agents", { name: "New" }) },
      },
      {
        name: "replaceAgent",
        field: "replaceAgent",
        allowed: WRITERS,
        gql: (i) => [
          "mutation($id: ID!, $n: String!) { replaceAgent(id: $id, input: { name: $n }) { id } }",
          { id: i.agentId, n: `Renamed ${++n}` },
        ],
        rest: { ok: 200, call: (c, i) => c.put(a(i), { name: `Renamed ${++n}` }) },
      },
      {
        name: "setAgentStatus",
        field: "setAgentStatus",
        allowed: WRITERS,
        setup: async (i) => ({ ...i, agentId: await newAgent() }),
        gql: (
          i,
        ) => ["mutation($id: ID!) { setAgentStatus(id: $id, input: { status: PAUSED }) { id status } }", {
          id: i.agentId,
        }],
        rest: { ok: 200, call: (c, i) => c.patch(`${a(i)}/status`, { status: "PAUSED" }) },
      },
      {
        name: "updateAgentPrompt",
        field: "updateAgentPrompt",
        allowed: WRITERS,
        gql: (i) => [
          "mutation($id: ID!, $in: UpdateAgentPromptInput!) { updateAgentPrompt(id: $id, input: $in) { id } }",
          { id: i.agentId, in: { systemPrompt: `P ${++n}`, rationale: "why" } },
        ],
        rest: {
          ok: 200,
          call: (c, i) => c.put(`${a(i)}/prompt`, { systemPrompt: `P ${++n}`, rationale: "why" }),
        },
      },
      {
        name: "revertAgentPrompt",
        field: "revertAgentPrompt",
        allowed: WRITERS,
        gql: (i) => [
          "mutation($id: ID!, $v: ID!) { revertAgentPrompt(id: $id, versionId: $v) { id } }",
          { id: i.agentId, v: i.versionId },
        ],
        rest: { ok: 200, call: (c, i) => c.post(`${a(i)}/prompt-versions/${i.versionId}/revert`) },
      },
      {
        name: "deleteAgent",
        field: "deleteAgent",
        allowed: WRITERS,
        setup: async (i) => ({ ...i, agentId: await newAgent() }),
        gql: (i) => ["mutation($id: ID!) { deleteAgent(id: $id) }", { id: i.agentId }],
        rest: { ok: 204, call: (c, i) => c.delete(a(i)) },
      },
      {
        name: "createIntent",
        field: "createIntent",
        allowed: WRITERS,
        gql: (i) => [
          "mutation($a: ID!, $in: CreateIntentInput!) { createIntent(agentId: $a, input: $in) { id } }",
          { a: i.agentId, in: { name: `Made ${++n}`, ...INTENT_FIELDS } },
        ],
        rest: {
          ok: 201,
          call: (c, i) => c.post(`${a(i)}/intents`, { name: `Made ${++n}`, ...INTENT_FIELDS }),
        },
      },
      {
        name: "updateIntent",
        field: "updateIntent",
        allowed: WRITERS,
        gql: (i) => [
          `mutation($a: ID!, $id: ID!, $d: String!) {
            updateIntent(agentId: $a, id: $id, input: { description: $d }) { id } }`,
          { a: i.agentId, id: i.intentId, d: `d ${++n}` },
        ],
        rest: {
          ok: 200,
          call: (c, i) => c.patch(`${a(i)}/intents/${i.intentId}`, { description: `d ${++n}` }),
        },
      },
      {
        name: "deleteIntent",
        field: "deleteIntent",
        allowed: WRITERS,
        setup: async (i) => ({ ...i, intentId: await newIntent(i.agentId) }),
        gql: (i) => ["mutation($a: ID!, $id: ID!) { deleteIntent(agentId: $a, id: $id) }", {
          a: i.agentId,
          id: i.intentId,
        }],
        rest: { ok: 204, call: (c, i) => c.delete(`${a(i)}/intents/${i.intentId}`) },
      },
      {
        name: "createWebhook",
        field: "createWebhook",
        allowed: WRITERS,
        gql: (i) => [
          `mutation($a: ID!, $in: CreateWebhookInput!) {
            createWebhook(agentId: $a, input: $in) { webhook { id } signingSecret } }`,
          { a: i.agentId, in: HOOK },
        ],
        rest: { ok: 201, call: (c, i) => c.post(`${a(i)}/webhooks`, HOOK) },
      },
      {
        name: "updateWebhook",
        field: "updateWebhook",
        allowed: WRITERS,
        gql: (i) => [
          `mutation($a: ID!, $id: ID!, $u: String!) {
            updateWebhook(agentId: $a, id: $id, input: { url: $u }) { id } }`,
          { a: i.agentId, id: i.webhookId, u: `https://example.com/${++n}` },
        ],
        rest: { ok: 200, call: (c, i) => c.patch(hook(i), { url: `https://example.com/${++n}` }) },
      },
      {
        name: "rotateWebhookSecret",
        field: "rotateWebhookSecret",
        allowed: WRITERS,
        gql: (i) => [
          "mutation($a: ID!, $id: ID!) { rotateWebhookSecret(agentId: $a, id: $id) { signingSecret } }",
          { a: i.agentId, id: i.webhookId },
        ],
        rest: { ok: 200, call: (c, i) => c.post(`${hook(i)}/rotate-secret`) },
      },
      {
        name: "deleteWebhook",
        field: "deleteWebhook",
        allowed: WRITERS,
        setup: async (i) => ({ ...i, webhookId: await newWebhook(i.agentId) }),
        gql: (i) => ["mutation($a: ID!, $id: ID!) { deleteWebhook(agentId: $a, id: $id) }", {
          a: i.agentId,
          id: i.webhookId,
        }],
        rest: { ok: 204, call: (c, i) => c.delete(hook(i)) },
      },
      {
        name: "sendWebhookTest",
        field: "sendWebhookTest",
        allowed: WRITERS,
        outsideRestTables: true,
        gql: (i) => ["mutation($a: ID!, $id: ID!) { sendWebhookTest(agentId: $a, id: $id) { id status } }", {
          a: i.agentId,
          id: i.webhookId,
        }],
        rest: { ok: 202, call: (c, i) => c.post(`${hook(i)}/test`) },
      },
      {
        name: "redeliverWebhookDelivery",
        field: "redeliverWebhookDelivery",
        allowed: WRITERS,
        outsideRestTables: true,
        setup: async (i) => ({ ...i, deliveryId: await newFailedDelivery(i.agentId, i.webhookId) }),
        gql: (i) => [
          `mutation($a: ID!, $w: ID!, $id: ID!) {
            redeliverWebhookDelivery(agentId: $a, webhookId: $w, id: $id) { id status } }`,
          { a: i.agentId, w: i.webhookId, id: i.deliveryId },
        ],
        rest: { ok: 202, call: (c, i) => c.post(`${hook(i)}/deliveries/${i.deliveryId}/redeliver`) },
      },

      // Approvals: OWNER and MANAGER (supervisor:use); deciding needs a person (API token 403).
      {
        name: "approvals",
        field: "approvals",
        allowed: [...APPROVAL_READERS],
        read: true,
        gql: () => ["{ approvals(status: PENDING) { edges { node { id status before after } } } }"],
        rest: { ok: 200, call: (c) => c.get("/api/approvals?status=PENDING") },
      },
      {
        name: "approval",
        field: "approval",
        allowed: [...APPROVAL_READERS],
        read: true,
        gql: (i) => ["query($id: ID!) { approval(id: $id) { id tool before after } }", { id: i.approvalId }],
        rest: { ok: 200, call: (c, i) => c.get(`/api/approvals/${i.approvalId}`) },
      },
      {
        name: "supervisorChanges",
        field: "supervisorChanges",
        allowed: [...APPROVAL_READERS],
        read: true,
        gql: () => ["{ supervisorChanges { edges { node { id status } } } }"],
        rest: { ok: 200, call: (c) => c.get("/api/supervisor/changes") },
      },
      ...(["approve", "reject"] as const).map((verb): Row => ({
        name: `${verb}Approval`,
        field: `${verb}Approval`,
        allowed: [...APPROVAL_DECIDERS],
        setup: async (i) => ({ ...i, approvalId: await newApproval(ownerCtx, i.agentId) }),
        gql: (i) => [`mutation($id: ID!) { ${verb}Approval(id: $id) { id status } }`, { id: i.approvalId }],
        rest: { ok: 200, call: (c, i) => c.post(`/api/approvals/${i.approvalId}/${verb}`) },
      })),
      // Replays: as approvals (supervisor:use).
      {
        name: "replayApproval",
        field: "replayApproval",
        allowed: [...APPROVAL_READERS],
        outsideRestTables: true,
        setup: async (i) => ({ ...i, approvalId: await newApproval(ownerCtx, i.agentId) }),
        gql: (
          i,
        ) => ["mutation($id: ID!) { replayApproval(id: $id) { id replay { status } } }", {
          id: i.approvalId,
        }],
        rest: { ok: 202, call: (c, i) => c.post(`/api/approvals/${i.approvalId}/replay`) },
      },
      {
        name: "replayCases",
        field: "replayCases",
        allowed: [...APPROVAL_READERS],
        read: true,
        gql: (i) => [
          "query($a: ID!) { replayCases(agentId: $a) { edges { node { conversationId } } } }",
          { a: i.agentId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`${a(i)}/replay-cases`) },
      },
      {
        name: "pinReplayCase",
        field: "pinReplayCase",
        allowed: [...APPROVAL_READERS],
        outsideRestTables: true,
        setup: async (i) => {
          await db.replayPin.deleteMany({ where: { agentId: i.agentId } });
          return i;
        },
        gql: (i) => [
          "mutation($a: ID!, $c: String!) { pinReplayCase(agentId: $a, input: { conversationId: $c }) { conversationId } }",
          { a: i.agentId, c: i.conversationId },
        ],
        rest: {
          ok: 201,
          call: (c, i) => c.post(`${a(i)}/replay-cases`, { conversationId: i.conversationId }),
        },
      },
      {
        name: "unpinReplayCase",
        field: "unpinReplayCase",
        allowed: [...APPROVAL_READERS],
        outsideRestTables: true,
        setup: async (i) => {
          await db.replayPin.upsert({
            where: { agentId_conversationId: { agentId: i.agentId, conversationId: i.conversationId } },
            create: { agentId: i.agentId, conversationId: i.conversationId },
            update: {},
          });
          return i;
        },
        gql: (i) => [
          "mutation($a: ID!, $c: ID!) { unpinReplayCase(agentId: $a, conversationId: $c) }",
          { a: i.agentId, c: i.conversationId },
        ],
        rest: { ok: 204, call: (c, i) => c.delete(`${a(i)}/replay-cases/${i.conversationId}`) },
      },

      // Channels (agent:write; reads for everyone), the API channel's messages, conversation reads.
      {
        name: "channels",
        field: "channels",
        allowed: EVERYONE,
        read: true,
        gql: (
          i,
        ) => ["query($a: ID!) { channels(agentId: $a) { edges { node { id inboundUrl } } } }", {
          a: i.agentId,
        }],
        rest: { ok: 200, call: (c, i) => c.get(`${a(i)}/channels`) },
      },
      {
        name: "createChannel",
        field: "createChannel",
        allowed: WRITERS,
        gql: (i) => [
          `mutation($a: ID!) { createChannel(agentId: $a, input: { type: API, label: "x" }) { id } }`,
          { a: i.agentId },
        ],
        rest: { ok: 201, call: (c, i) => c.post(`${a(i)}/channels`, { type: "API", label: "x" }) },
      },
      {
        name: "updateChannel",
        field: "updateChannel",
        allowed: WRITERS,
        gql: (i) => [
          `mutation($a: ID!, $id: ID!, $l: String!) { updateChannel(agentId: $a, id: $id, input: { label: $l }) { id } }`,
          { a: i.agentId, id: i.channelId, l: `L${++n}` },
        ],
        rest: { ok: 200, call: (c, i) => c.patch(`${a(i)}/channels/${i.channelId}`, { label: `L${++n}` }) },
      },
      {
        name: "deleteChannel",
        field: "deleteChannel",
        allowed: WRITERS,
        setup: async (i) => ({ ...i, channelId: await newChannel(i.agentId) }),
        gql: (i) => ["mutation($a: ID!, $id: ID!) { deleteChannel(agentId: $a, id: $id) }", {
          a: i.agentId,
          id: i.channelId,
        }],
        rest: { ok: 204, call: (c, i) => c.delete(`${a(i)}/channels/${i.channelId}`) },
      },
      // A channel's templates: listed for everyone, synced by writers (agent:write).
      {
        name: "templates",
        field: "templates",
        allowed: EVERYONE,
        read: true,
        gql: (i) => ["query($ch: ID!) { templates(channelId: $ch) { edges { node { name } } } }", {
          ch: i.channelId,
        }],
        rest: { ok: 200, call: (c, i) => c.get(`/api/channels/${i.channelId}/templates`) },
      },
      {
        name: "syncTemplates",
        field: "syncTemplates",
        allowed: WRITERS,
        // A new channel each time: its first sync stores the template.
        setup: async (i) => ({ ...i, channelId: await newChannel(i.agentId, "102290129340398") }),
        gql: (i) => ["mutation($id: ID!) { syncTemplates(id: $id) { data { name } } }", { id: i.channelId }],
        rest: { ok: 200, call: (c, i) => c.post(`/api/channels/${i.channelId}/templates/sync`) },
      },
      {
        name: "postChannelMessage",
        field: "postChannelMessage",
        allowed: WRITERS,
        gql: (i) => [
          `mutation($ch: ID!) { postChannelMessage(channelId: $ch,
            input: { contact: { externalId: "c1" }, type: "TEXT", content: "hi" }) { id sender } }`,
          { ch: i.apiChannelId },
        ],
        rest: {
          ok: 201,
          call: (c, i) =>
            c.post(`/api/channels/${i.apiChannelId}/messages`, {
              contact: { externalId: "c1" },
              type: "TEXT",
              content: "hi",
            }),
        },
      },
      {
        name: "conversations",
        field: "conversations",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          "query($a: ID!) { conversations(agentId: $a, status: OPEN) { edges { node { id status } } } }",
          { a: i.agentId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`${a(i)}/conversations?status=OPEN`) },
      },
      {
        name: "inbox",
        field: "inbox",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          'query($a: ID!) { inbox(agentId: $a, status: OPEN, search: "Maria") { edges { node { id unread } } } }',
          { a: i.agentId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`/api/conversations?agentId=${i.agentId}&search=Maria`) },
      },
      // Assignment (conversation:attend): to nobody, which every attendant may do to a conversation
      // the AGENT holds; a member's read marker (members only: an API token has none).
      {
        name: "assignConversation",
        field: "assignConversation",
        allowed: ATTENDANTS,
        setup: async (i) => {
          const made = await newConversation(i, "HUMAN");
          await db.conversation.update({
            where: { id: made.conversationId },
            data: { assignedUserId: agentUser.userId },
          });
          return made;
        },
        gql: (i) => [
          "mutation($id: ID!) { assignConversation(id: $id, input: { userId: null }) { id assignee { id } } }",
          { id: i.conversationId },
        ],
        rest: {
          ok: 200,
          call: (c, i) => c.post(`/api/conversations/${i.conversationId}/assign`, { userId: null }),
        },
      },
      {
        name: "markConversationRead",
        field: "markConversationRead",
        allowed: PEOPLE,
        setup: (i) => newConversation(i, "OPEN"),
        gql: (i) => ["mutation($id: ID!) { markConversationRead(id: $id) }", { id: i.conversationId }],
        rest: { ok: 204, call: (c, i) => c.post(`/api/conversations/${i.conversationId}/read`) },
      },
      {
        name: "conversation",
        field: "conversation",
        allowed: EVERYONE,
        read: true,
        gql: (
          i,
        ) => ["query($id: ID!) { conversation(id: $id) { id contact { name } } }", { id: i.conversationId }],
        rest: { ok: 200, call: (c, i) => c.get(`/api/conversations/${i.conversationId}`) },
      },
      {
        name: "conversationMessages",
        field: "conversationMessages",
        allowed: EVERYONE,
        read: true,
        gql: (i) => [
          "query($id: ID!) { conversationMessages(conversationId: $id) { edges { node { id content } } } }",
          { id: i.conversationId },
        ],
        rest: { ok: 200, call: (c, i) => c.get(`/api/conversations/${i.conversationId}/messages`) },
      },
      // A failed message sent again (conversation:attend), a fresh one each call (sent again once).
      {
        name: "resendMessage",
        field: "resendMessage",
        allowed: ATTENDANTS,
        setup: async (i) => {
          const withConversation = await newConversation(i, "HUMAN");
          const failed = await db.message.create({
            data: {
              conversationId: withConversation.conversationId,
              channelId: (await db.conversation.findUniqueOrThrow({
                where: { id: withConversation.conversationId },
              })).channelId,
              direction: "OUTBOUND",
              senderKind: "HUMAN",
              content: "Oi",
              status: "FAILED",
            },
          });
          return { ...withConversation, messageId: failed.id };
        },
        gql: (i) => ["mutation($id: ID!) { resendMessage(id: $id) { id status } }", { id: i.messageId }],
        rest: { ok: 201, call: (c, i) => c.post(`/api/messages/${i.messageId}/resend`) },
      },
      {
        name: "contactConversations",
        field: "contactConversations",
        allowed: EVERYONE,
        read: true,
        gql: () => [
          "query($id: ID!) { contactConversations(contactId: $id) { edges { node { id status } } } }",
          { id: contactOfFixture },
        ],
        rest: { ok: 200, call: (c) => c.get(`/api/contacts/${contactOfFixture}/conversations`) },
      },
      // Saved replies: every member reads, OWNER and MANAGER write (saved-replies:write).
      {
        name: "savedReplies",
        field: "savedReplies",
        allowed: EVERYONE,
        read: true,
        gql: () => ["{ savedReplies { edges { node { id shortcut content } } } }"],
        rest: { ok: 200, call: (c) => c.get("/api/saved-replies") },
      },
      {
        name: "savedReply",
        field: "savedReply",
        allowed: EVERYONE,
        read: true,
        gql: (i) => ["query($id: ID!) { savedReply(id: $id) { id shortcut } }", { id: i.savedReplyId }],
        rest: { ok: 200, call: (c, i) => c.get(`/api/saved-replies/${i.savedReplyId}`) },
      },
      {
        name: "createSavedReply",
        field: "createSavedReply",
        allowed: WRITERS,
        gql: () => [
          'mutation($s: String!) { createSavedReply(input: { shortcut: $s, content: "Olá!" }) { id } }',
          { s: `hi${++n}` },
        ],
        rest: {
          ok: 201,
          call: (c) => c.post("/api/saved-replies", { shortcut: `hi${++n}`, content: "Olá!" }),
        },
      },
      {
        name: "updateSavedReply",
        field: "updateSavedReply",
        allowed: WRITERS,
        gql: (i) => [
          "mutation($id: ID!, $c: String!) { updateSavedReply(id: $id, input: { content: $c }) { id } }",
          { id: i.savedReplyId, c: `Olá ${++n}` },
        ],
        rest: {
          ok: 200,
          call: (c, i) => c.patch(`/api/saved-replies/${i.savedReplyId}`, { content: `Olá ${++n}` }),
        },
      },
      {
        name: "deleteSavedReply",
        field: "deleteSavedReply",
        allowed: WRITERS,
        setup: async (i) => ({
          ...i,
          savedReplyId:
            (await o.post("/api/saved-replies", { shortcut: `bye${++n}`, content: "Tchau" })).body.id,
        }),
        gql: (i) => ["mutation($id: ID!) { deleteSavedReply(id: $id) }", { id: i.savedReplyId }],
        rest: { ok: 204, call: (c, i) => c.delete(`/api/saved-replies/${i.savedReplyId}`) },
      },

      // Invites and API tokens: members:manage; only an OWNER invites an OWNER.
      ...(["AGENT", "MANAGER", "OWNER"] as const).map((role): Row => ({
        name: `createInvite (${role})`,
        field: "createInvite",
        allowed: role === "OWNER" ? OWNER_ONLY : WRITERS,
        gql: () => [
          "mutation($in: CreateInviteInput!) { createInvite(input: $in) { invite { id } inviteUrl } }",
          { in: { email: `i${++n}@example.test`, role } },
        ],
        rest: {
          ok: 201,
          call: (c, i) => c.post(`${ws(i)}/invites`, { email: `i${++n}@example.test`, role }),
        },
      })),
      {
        name: "deleteInvite",
        field: "deleteInvite",
        allowed: WRITERS,
        setup: async (i) => ({ ...i, inviteId: (await newInvite(i)).id }),
        gql: (i) => ["mutation($id: ID!) { deleteInvite(id: $id) }", { id: i.inviteId }],
        rest: { ok: 204, call: (c, i) => c.delete(`${ws(i)}/invites/${i.inviteId}`) },
      },
      {
        name: "createApiToken",
        field: "createApiToken",
        allowed: WRITERS,
        gql: () => ['mutation { createApiToken(input: { label: "t" }) { apiToken { id } token } }'],
        rest: { ok: 201, call: (c, i) => c.post(`${ws(i)}/api-tokens`, { label: "t" }) },
      },
      {
        name: "revokeApiToken",
        field: "revokeApiToken",
        allowed: WRITERS,
        setup: async (i) => ({
          ...i,
          tokenId: (await o.post(`${ws(i)}/api-tokens`, { label: "gone" })).body.id,
        }),
        gql: (i) => ["mutation($id: ID!) { revokeApiToken(id: $id) }", { id: i.tokenId }],
        rest: { ok: 204, call: (c, i) => c.delete(`${ws(i)}/api-tokens/${i.tokenId}`) },
      },

      // Members: OWNER any role; MANAGER (and so the API token) only AGENT and VIEWER.
      {
        name: "changeMemberRole (AGENT to VIEWER)",
        field: "changeMemberRole",
        allowed: WRITERS,
        setup: withMember("AGENT"),
        gql: (i) => [
          "mutation($u: ID!) { changeMemberRole(userId: $u, input: { role: VIEWER }) { id role } }",
          { u: i.memberId },
        ],
        rest: { ok: 200, call: (c, i) => c.patch(`${ws(i)}/members/${i.memberId}`, { role: "VIEWER" }) },
      },
      {
        name: "changeMemberRole (AGENT to MANAGER)",
        field: "changeMemberRole",
        allowed: OWNER_ONLY,
        setup: withMember("AGENT"),
        gql: (i) => [
          "mutation($u: ID!) { changeMemberRole(userId: $u, input: { role: MANAGER }) { id role } }",
          { u: i.memberId },
        ],
        rest: { ok: 200, call: (c, i) => c.patch(`${ws(i)}/members/${i.memberId}`, { role: "MANAGER" }) },
      },
      {
        name: "removeMember (an AGENT)",
        field: "removeMember",
        allowed: WRITERS,
        setup: withMember("AGENT"),
        gql: (i) => ["mutation($u: ID!) { removeMember(userId: $u) }", { u: i.memberId }],
        rest: { ok: 204, call: (c, i) => c.delete(`${ws(i)}/members/${i.memberId}`) },
      },
      {
        name: "removeMember (a MANAGER)",
        field: "removeMember",
        allowed: OWNER_ONLY,
        setup: withMember("MANAGER"),
        gql: (i) => ["mutation($u: ID!) { removeMember(userId: $u) }", { u: i.memberId }],
        rest: { ok: 204, call: (c, i) => c.delete(`${ws(i)}/members/${i.memberId}`) },
      },

      // Accounts: login and acceptInvite need no credential (the one sent is ignored); logout and
      // password are a person's.
      {
        name: "login",
        field: "login",
        allowed: EVERYONE,
        outsideRestTables: true,
        setup: async (i) => ({ ...i, email: (await seed.user()).email }),
        gql: (i) => [
          "mutation($in: LoginInput!) { login(input: $in) { token } }",
          { in: { email: i.email, password: PASSWORD } },
        ],
        rest: { ok: 200, call: (c, i) => c.post("/api/auth/login", { email: i.email, password: PASSWORD }) },
      },
      {
        name: "acceptInvite",
        field: "acceptInvite",
        allowed: EVERYONE,
        setup: async (i) => ({ ...i, inviteToken: (await newInvite(i)).inviteUrl.split("/").pop() }),
        gql: (i) => [
          'mutation($t: String!) { acceptInvite(token: $t, input: { password: "a long password" }) { token } }',
          { t: i.inviteToken },
        ],
        rest: {
          ok: 200,
          call: (c, i) => c.post(`/invite/${i.inviteToken}`, { password: "a long password" }),
        },
      },
      {
        name: "logout",
        field: "logout",
        allowed: PEOPLE,
        outsideRestTables: true,
        fresh: true,
        gql: () => ["mutation { logout }"],
        rest: { ok: 204, call: (c) => c.post("/api/auth/logout") },
      },
      {
        name: "logoutOtherSessions",
        field: "logoutOtherSessions",
        allowed: PEOPLE,
        outsideRestTables: true,
        fresh: true,
        // The caller's other session, for it to end (an API token has none).
        prepare: async (c) => {
          const user = (await c.get("/api/auth/me")).body.user;
          if (user) await new Client(app).post("/api/auth/login", { email: user.email, password: PASSWORD });
        },
        gql: () => ["mutation { logoutOtherSessions { ended } }"],
        rest: { ok: 200, call: (c) => c.post("/api/auth/logout-others") },
      },
      {
        name: "changePassword",
        field: "changePassword",
        allowed: PEOPLE,
        fresh: true,
        gql: () => [
          "mutation($in: ChangePasswordInput!) { changePassword(input: $in) }",
          { in: { currentPassword: PASSWORD, newPassword: "another long password" } },
        ],
        rest: {
          ok: 204,
          call: (c) =>
            c.post("/api/auth/password", { currentPassword: PASSWORD, newPassword: "another long password" }),
        },
      },

      // The supervisor: OWNER, MANAGER and so the API token; AGENT and VIEWER FORBIDDEN.
      {
        name: "supervisorConversation (created when absent)",
        field: "supervisorConversation",
        allowed: SUPERVISORS,
        setup: withoutSupervisorConversation,
        gql: () => ["{ supervisorConversation { id messages { id role } } }"],
        rest: { ok: 200, call: (c) => c.get("/api/supervisor/conversation") },
      },
      {
        name: "sendSupervisorMessage",
        field: "sendSupervisorMessage",
        allowed: SUPERVISORS,
        gql: () => [
          'mutation { sendSupervisorMessage(input: { message: "Hello" }) { reply { id credits } approvals { id } } }',
        ],
        rest: { ok: 200, call: (c) => c.post("/api/supervisor/chat", { message: "Hello" }) },
      },
      {
        name: "resetSupervisorConversation",
        field: "resetSupervisorConversation",
        allowed: SUPERVISORS,
        setup: withSupervisorMessage,
        gql: () => ["mutation { resetSupervisorConversation }"],
        rest: { ok: 204, call: (c) => c.delete("/api/supervisor/conversation") },
      },
      {
        name: "supervisorCredits",
        field: "supervisorCredits",
        allowed: SUPERVISORS,
        read: true,
        gql: () => ["{ supervisorCredits(input: { days: 7 }) { day credits } }"],
        rest: { ok: 200, call: (c) => c.get("/api/supervisor/credits?days=7") },
      },

      // The acting workspace: every reader; what its messages cost (usage:read): OWNER and MANAGER.
      {
        name: "workspace",
        field: "workspace",
        allowed: EVERYONE,
        read: true,
        gql: () => ["{ workspace { id name role } }"],
        rest: { ok: 200, call: (c, i) => c.get(ws(i)) },
      },
      {
        name: "usage",
        field: "workspace",
        allowed: USAGE_READERS,
        read: true,
        gql: () => [
          '{ workspace { usage(from: "2026-11-01", to: "2026-11-02") { from to data { channelId } } } }',
        ],
        rest: { ok: 200, call: (c) => c.get("/api/usage?from=2026-11-01&to=2026-11-02") },
      },
      {
        name: "waiting",
        field: "workspace",
        allowed: EVERYONE,
        read: true,
        gql: () => ["{ workspace { waiting { unread conversations } } }"],
        rest: { ok: 200, call: (c) => c.get("/api/inbox/waiting") },
      },

      // Workspaces: any person creates one (not a token); only the OWNER deletes.
      {
        name: "createWorkspace",
        field: "createWorkspace",
        allowed: PEOPLE,
        gql:
          () => ["mutation($n: String!) { createWorkspace(input: { name: $n }) { id } }", { n: `W${++n}` }],
        rest: { ok: 201, call: (c) => c.post("/api/workspaces", { name: `W${++n}` }) },
      },
      {
        name: "deleteWorkspace",
        field: "deleteWorkspace",
        allowed: OWNER_ONLY,
        setup: async (i) => {
          const created = await o.post("/api/workspaces", { name: `Doomed ${++n}` });
          const id = created.body.id as string;
          for (const [u, role] of [[manager, "MANAGER"], [agentUser, "AGENT"], [viewer, "VIEWER"]] as const) {
            await db.membership.create({ data: { userId: u.userId, workspaceId: id, role } });
          }
          const token = (await o.post(`/api/workspaces/${id}/api-tokens`, { label: "doomed" })).body.token;
          return { ...i, workspaceId: id, token };
        },
        gql: (i) => ["mutation($id: ID!) { deleteWorkspace(id: $id) }", { id: i.workspaceId }],
        rest: { ok: 204, call: (c, i) => c.delete(ws(i)) },
      },
    ];

    await t.step("the table names every query and mutation of the schema, and nothing else", () => {
      const fields = [
        ...Object.keys(schema.getQueryType()!.getFields()),
        ...Object.keys(schema.getMutationType()!.getFields()),
      ].sort();
      assert.deepEqual([...new Set(rows.map((r) => r.field))].sort(), fields);
    });

    // The database as the last call left it: without a setup or a fresh client since (no workers
    // run), it is the next call's "before", unread again (a third of the snapshots).
    let last: string | undefined;
    for (const row of rows) {
      await t.step(row.name, async () => {
        for (const who of EVERYONE) {
          for (const api of ["GraphQL", "REST"] as const) {
            const where = `${who} ${row.name} over ${api}`;
            const ids = row.setup ? await row.setup(fixture) : fixture;
            const c = row.fresh ? await freshClient(who, ids) : clientOf(who, ids);
            await row.prepare?.(c);
            const before = !row.setup && !row.fresh && last !== undefined ? last : await fullSnapshot(app);
            let res: Reply;
            if (api === "GraphQL") {
              const [query, variables] = row.gql(ids);
              res = await gql(c, query, variables);
            } else {
              res = await row.rest.call(c, ids);
            }
            const after = last = await fullSnapshot(app);
            if (row.allowed.includes(who)) {
              if (api === "GraphQL") {
                const data = gqlOk(res, where);
                assert.notEqual(data[row.field], null, `${where}: null ${row.field}`);
              } else {
                assert.equal(res.status, row.rest.ok, `${where}: ${res.status} ${JSON.stringify(res.body)}`);
              }
              if (row.read) assert.equal(after, before, `${where} changed the database`);
              else {
                assert.notEqual(after, before, `${where} changed nothing`);
                if (!row.outsideRestTables) {
                  assert.notEqual(
                    restTablesOf(after),
                    restTablesOf(before),
                    `${where} changed no REST table`,
                  );
                }
              }
            } else {
              if (api === "GraphQL") {
                const error = gqlRefused(res, "FORBIDDEN", where);
                assert.equal(error.extensions.status, 403, where);
                assert.equal(res.body.data?.[row.field] ?? null, null, where);
              } else {
                assertProblem(res, 403, "FORBIDDEN");
              }
              assert.equal(after, before, `${where} was refused but changed the database`);
            }
          }
        }
      });
    }

    await t.step(
      "webhook headers and credential-like URL values are masked for AGENT and VIEWER, as in REST",
      async () => {
        const secretUrl = "https://example.com/hook?token=s3cr3t&page=2";
        const hookId = (await o.post(`/api/agents/${agentId}/webhooks`, {
          event: "message.sent",
          url: secretUrl,
          headers: { "X-Key": "hunter2" },
        })).body.id;
        const intentId = (await o.post(`/api/agents/${agentId}/intents`, {
          ...INTENT_FIELDS,
          name: "Masked",
          webhookUrl: secretUrl,
        })).body.id;
        const READ = `query($a: ID!, $w: ID!, $i: ID!) {
        webhook(agentId: $a, id: $w) { url headers }
        webhooks(agentId: $a) { edges { node { id url headers } } }
        agent(id: $a) { webhooks { edges { node { id url headers } } } intents { edges { node { id webhookUrl } } } }
        intent(agentId: $a, id: $i) { webhookUrl }
      }`;
        for (const who of EVERYONE) {
          const c = clientOf(who, fixture);
          const data = gqlOk(await gql(c, READ, { a: agentId, w: hookId, i: intentId }), who);
          const rest = (await c.get(`/api/agents/${agentId}/webhooks/${hookId}`)).body;
          const restIntent = (await c.get(`/api/agents/${agentId}/intents/${intentId}`)).body;
          const masked = who === "AGENT" || who === "VIEWER";
          // GraphQL shows what REST shows, for every role.
          assert.equal(data.webhook.url, rest.url, who);
          assert.deepEqual(data.webhook.headers, rest.headers, who);
          assert.equal(data.intent.webhookUrl, restIntent.webhookUrl, who);
          const listed = [
            ...data.webhooks.edges.map((e: { node: unknown }) => e.node),
            ...data.agent.webhooks.edges.map((e: { node: unknown }) => e.node),
          ].filter((w: { id: string }) => w.id === hookId);
          assert.equal(listed.length, 2, who);
          for (const w of listed) {
            assert.deepEqual(w, { id: hookId, url: rest.url, headers: rest.headers }, who);
          }
          const intentListed = data.agent.intents.edges.find((e: { node: { id: string } }) =>
            e.node.id === intentId
          );
          assert.equal(intentListed.node.webhookUrl, restIntent.webhookUrl, who);
          // And it is masked exactly for AGENT and VIEWER.
          const text = JSON.stringify(data);
          assert.equal(text.includes("hunter2"), !masked, `${who}: ${text}`);
          assert.equal(text.includes("s3cr3t"), !masked, `${who}: ${text}`);
          assert.deepEqual(Object.keys(data.webhook.headers), ["X-Key"], who);
          if (!masked) {
            assert.equal(data.webhook.url, secretUrl, who);
            assert.deepEqual(data.webhook.headers, { "X-Key": "hunter2" }, who);
            assert.equal(data.intent.webhookUrl, secretUrl, who);
          } else {
            assert.match(data.webhook.url, /^https:\/\/example\.com\/hook\?token=.+&page=2$/, who);
          }
        }
      },
    );

    await t.step("a refused role gets 403 whatever the body: malformed, not JSON, over 1 MiB", async () => {
      for (const who of ["AGENT", "VIEWER"] as const) {
        const c = clientOf(who, fixture);
        const bodies: Array<[string, Record<string, string>]> = [
          ["{not json", {}],
          ['{"name":"x"}', { "content-type": "text/plain" }],
          [JSON.stringify({ name: "x".repeat(1024 * 1024) }), {}],
        ];
        for (const [body, headers] of bodies) {
          assertProblem(await c.post("/api/agents", body, headers), 403, "FORBIDDEN");
          assertProblem(await c.post(`/api/agents/${agentId}/intents`, body, headers), 403, "FORBIDDEN");
        }
      }
      // The same bodies from a role that may write: the body's own error.
      const manager = clientOf("MANAGER", fixture);
      assertProblem(await manager.post("/api/agents", "{not json"), 400, "MALFORMED_JSON");
      assertProblem(
        await manager.post("/api/agents", '{"name":"x"}', { "content-type": "text/plain" }),
        415,
        "UNSUPPORTED_MEDIA_TYPE",
      );
    });

    await t.step("the fixture workspace and its agent survive every refused call", async () => {
      assert.equal(await db.workspace.count({ where: { id: workspaceId } }), 1);
      assert.equal(await db.agent.count({ where: { id: agentId } }), 1);
    });
  } finally {
    await ta.close();
    await model.close();
    await graph.close();
  }
});
