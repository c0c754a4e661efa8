/**
 * Workspace isolation over REST and GraphQL, on one set of workspaces: two of one owner (W1, W2)
 * and a third of another user (W3), with the same names everywhere so only ids tell them apart.
 * Nothing of one is visible or reachable from another: every call that takes an id (REST: agent,
 * intent, webhook, prompt version, API token, invite, approval; GraphQL: every id-taking field, as
 * the schema lists them) answers 404 NOT_FOUND for another workspace's id exactly as for an unknown
 * id, and changes nothing; lists and connections show only the workspace's own rows, and a cursor of
 * another workspace behaves like an unknown one; a credential acting in a workspace it does not
 * belong to (a non-member, an API token of another workspace) gets 403 FORBIDDEN from every
 * workspace-scoped call. Then an invite, the supervisor's conversations and a deletion stay within
 * their workspace.
 */
import assert from "node:assert/strict";
import { getNamedType, type GraphQLFieldMap } from "graphql";
import { Client, type Reply, startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus, snapshot } from "./_helpers/problem.ts";
import { gql, gqlOk, gqlRefused } from "./_helpers/roles.ts";
import { buildSchema } from "../src/graphql/schema.ts";
import type { App } from "../src/app.ts";
import { HOOK, INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { decodeCursor, encodeCursor } from "../src/shared/pagination.ts";
import { actorOf, newApproval } from "./_helpers/approvals.ts";

const { schema } = buildSchema();

const INTENT = { name: "Agendar Visita", ...INTENT_FIELDS };
const HELLO_TEMPLATE = { name: "hello_world", language: "en_US" };

/** The ids of one workspace's records (all the same names in every workspace). */
interface Fixture {
  workspaceId: string;
  client: Client;
  tokenClient: Client;
  agent: string;
  intent: string;
  webhook: string;
  version: string;
  delivery: string;
  invite: string;
  inviteToken: string;
  apiToken: string;
  /** The user id of an AGENT member. */
  member: string;
  /** A WHATSAPP channel, an API channel and a conversation on it. */
  channel: string;
  apiChannel: string;
  conversation: string;
  /** A PENDING approval. */
  approval: string;
}

/** One GraphQL call: the root field it exercises, the document and its variables. */
type Call = [label: string, field: string, query: string, variables?: Record<string, unknown>];

const UNKNOWN = `c${"0".repeat(24)}`;

/** A workspace's record ids, by fixture name. */
type Ids = Omit<Fixture, "client" | "tokenClient">;
type Vars = Record<string, unknown>;

/**
 * A field that takes an id: its document, its variables naming `T`'s record and, for a record under
 * a parent, the same record named under `mine`'s own parent ("via mine").
 */
interface ById {
  field: string;
  query: string;
  vars: (T: Ids) => Vars;
  viaMine?: (mine: Ids, T: Ids) => Vars;
}

/** `field(id: $id)` of the record `key`. */
const byOwnId = (field: string, query: string, key: keyof Ids, name = "id"): ById => ({
  field,
  query,
  vars: (T) => ({ [name]: T[key] }),
});
/** `field(agentId: $a, ...)` of the agent. */
const ofAgent = (field: string, query: string, more: (T: Ids) => Vars = () => ({})): ById => ({
  field,
  query,
  vars: (T) => ({ a: T.agent, ...more(T) }),
});
/** `field(agentId: $a, id: $id)` of the record `key` under its agent, and under mine. */
const underAgent = (field: string, query: string, key: keyof Ids): ById => ({
  field,
  query,
  vars: (T) => ({ a: T.agent, id: T[key] }),
  viaMine: (mine, T) => ({ a: mine.agent, id: T[key] }),
});
/** `field(agentId: $a, webhookId: $w, id: $id)` of a delivery, and under my agent and webhook. */
const ofDelivery = (field: string, query: string): ById => ({
  field,
  query,
  vars: (T) => ({ a: T.agent, w: T.webhook, id: T.delivery }),
  viaMine: (mine, T) => ({ a: mine.agent, w: mine.webhook, id: T.delivery }),
});
const mutationOf = (field: string, key: keyof Ids) =>
  byOwnId(field, `mutation($id: ID!) { ${field}(id: $id) { id status } }`, key);

const BY_ID: ById[] = [
  byOwnId("agent", "query($id: ID!) { agent(id: $id) { id name } }", "agent"),
  byOwnId("approval", "query($id: ID!) { approval(id: $id) { id before after } }", "approval"),
  mutationOf("approveApproval", "approval"),
  mutationOf("rejectApproval", "approval"),
  mutationOf("replayApproval", "approval"),
  ofAgent("replayCases", "query($a: ID!) { replayCases(agentId: $a) { edges { node { conversationId } } } }"),
  {
    field: "pinReplayCase",
    query:
      "mutation($a: ID!, $c: String!) { pinReplayCase(agentId: $a, input: { conversationId: $c }) { agentId } }",
    vars: (T) => ({ a: T.agent, c: T.conversation }),
    viaMine: (mine, T) => ({ a: mine.agent, c: T.conversation }),
  },
  {
    field: "unpinReplayCase",
    query: "mutation($a: ID!, $c: ID!) { unpinReplayCase(agentId: $a, conversationId: $c) }",
    vars: (T) => ({ a: T.agent, c: T.conversation }),
    viaMine: (mine, T) => ({ a: mine.agent, c: T.conversation }),
  },
  mutationOf("takeoverConversation", "conversation"),
  byOwnId(
    "assignConversation",
    "mutation($id: ID!) { assignConversation(id: $id, input: { userId: null }) { id } }",
    "conversation",
  ),
  byOwnId("markConversationRead", "mutation($id: ID!) { markConversationRead(id: $id) }", "conversation"),
  mutationOf("releaseConversation", "conversation"),
  mutationOf("closeConversation", "conversation"),
  byOwnId(
    "replyInConversation",
    'mutation($id: ID!) { replyInConversation(id: $id, input: { content: "Oi" }) { id } }',
    "conversation",
  ),
  byOwnId(
    "templates",
    "query($ch: ID!) { templates(channelId: $ch) { edges { node { name } } } }",
    "channel",
    "ch",
  ),
  byOwnId("syncTemplates", "mutation($id: ID!) { syncTemplates(id: $id) { data { name } } }", "channel"),
  byOwnId(
    "sendTemplate",
    'mutation($id: ID!) { sendTemplate(id: $id, input: { name: "hello_world", language: "en_US" }) { id } }',
    "conversation",
  ),
  byOwnId(
    "startTemplateConversation",
    `mutation($ch: ID!) { startTemplateConversation(channelId: $ch,
      input: { to: "15550001111", name: "hello_world", language: "en_US" }) { id } }`,
    "channel",
    "ch",
  ),
  ofAgent("intents", "query($a: ID!) { intents(agentId: $a) { edges { node { id } } } }"),
  underAgent("intent", "query($a: ID!, $id: ID!) { intent(agentId: $a, id: $id) { id } }", "intent"),
  ofAgent("promptVersions", "query($a: ID!) { promptVersions(agentId: $a) { edges { node { id } } } }"),
  {
    field: "webhookDeliveries",
    query:
      "query($a: ID!, $w: ID!) { webhookDeliveries(agentId: $a, webhookId: $w) { edges { node { id } } } }",
    vars: (T) => ({ a: T.agent, w: T.webhook }),
    viaMine: (mine, T) => ({ a: mine.agent, w: T.webhook }),
  },
  ofAgent("webhooks", "query($a: ID!) { webhooks(agentId: $a) { edges { node { id } } } }"),
  underAgent(
    "webhook",
    "query($a: ID!, $id: ID!) { webhook(agentId: $a, id: $id) { id headers } }",
    "webhook",
  ),
  ofDelivery(
    "webhookDelivery",
    "query($a: ID!, $w: ID!, $id: ID!) { webhookDelivery(agentId: $a, webhookId: $w, id: $id) { id } }",
  ),
  byOwnId(
    "replaceAgent",
    'mutation($id: ID!) { replaceAgent(id: $id, input: { name: "Taken" }) { id } }',
    "agent",
  ),
  byOwnId(
    "setAgentStatus",
    "mutation($id: ID!) { setAgentStatus(id: $id, input: { status: PAUSED }) { id } }",
    "agent",
  ),
  byOwnId(
    "updateAgentPrompt",
    'mutation($id: ID!) { updateAgentPrompt(id: $id, input: { systemPrompt: "Taken", rationale: "r" }) { id } }',
    "agent",
  ),
  {
    field: "revertAgentPrompt",
    query: "mutation($id: ID!, $v: ID!) { revertAgentPrompt(id: $id, versionId: $v) { id } }",
    vars: (T) => ({ id: T.agent, v: T.version }),
    viaMine: (mine, T) => ({ id: mine.agent, v: T.version }),
  },
  ofAgent(
    "createIntent",
    "mutation($a: ID!, $in: CreateIntentInput!) { createIntent(agentId: $a, input: $in) { id } }",
    () => ({ in: { ...INTENT, name: "Planted" } }),
  ),
  underAgent(
    "updateIntent",
    'mutation($a: ID!, $id: ID!) { updateIntent(agentId: $a, id: $id, input: { description: "x" }) { id } }',
    "intent",
  ),
  ofAgent(
    "createWebhook",
    "mutation($a: ID!, $in: CreateWebhookInput!) { createWebhook(agentId: $a, input: $in) { signingSecret } }",
    () => ({ in: HOOK }),
  ),
  underAgent(
    "updateWebhook",
    "mutation($a: ID!, $id: ID!) { updateWebhook(agentId: $a, id: $id, input: { method: PUT }) { id } }",
    "webhook",
  ),
  underAgent(
    "rotateWebhookSecret",
    "mutation($a: ID!, $id: ID!) { rotateWebhookSecret(agentId: $a, id: $id) { signingSecret } }",
    "webhook",
  ),
  underAgent(
    "sendWebhookTest",
    "mutation($a: ID!, $id: ID!) { sendWebhookTest(agentId: $a, id: $id) { id } }",
    "webhook",
  ),
  ofDelivery(
    "redeliverWebhookDelivery",
    "mutation($a: ID!, $w: ID!, $id: ID!) { redeliverWebhookDelivery(agentId: $a, webhookId: $w, id: $id) { id } }",
  ),
  underAgent("deleteIntent", "mutation($a: ID!, $id: ID!) { deleteIntent(agentId: $a, id: $id) }", "intent"),
  underAgent(
    "deleteWebhook",
    "mutation($a: ID!, $id: ID!) { deleteWebhook(agentId: $a, id: $id) }",
    "webhook",
  ),
  ofAgent("channels", "query($a: ID!) { channels(agentId: $a) { edges { node { id } } } }"),
  ofAgent(
    "createChannel",
    'mutation($a: ID!) { createChannel(agentId: $a, input: { type: API, label: "x" }) { id } }',
  ),
  underAgent(
    "updateChannel",
    'mutation($a: ID!, $id: ID!) { updateChannel(agentId: $a, id: $id, input: { label: "Taken" }) { id } }',
    "channel",
  ),
  byOwnId(
    "postChannelMessage",
    `mutation($ch: ID!) { postChannelMessage(channelId: $ch,
      input: { contact: { externalId: "x" }, type: "TEXT", content: "taken" }) { id } }`,
    "apiChannel",
    "ch",
  ),
  ofAgent("conversations", "query($a: ID!) { conversations(agentId: $a) { edges { node { id } } } }"),
  byOwnId("conversation", "query($id: ID!) { conversation(id: $id) { id } }", "conversation"),
  byOwnId(
    "conversationMessages",
    "query($id: ID!) { conversationMessages(conversationId: $id) { edges { node { id } } } }",
    "conversation",
  ),
  underAgent(
    "deleteChannel",
    "mutation($a: ID!, $id: ID!) { deleteChannel(agentId: $a, id: $id) }",
    "channel",
  ),
  byOwnId("deleteAgent", "mutation($id: ID!) { deleteAgent(id: $id) }", "agent"),
  byOwnId("deleteInvite", "mutation($id: ID!) { deleteInvite(id: $id) }", "invite"),
  byOwnId("revokeApiToken", "mutation($id: ID!) { revokeApiToken(id: $id) }", "apiToken"),
  byOwnId(
    "changeMemberRole",
    "mutation($u: ID!) { changeMemberRole(userId: $u, input: { role: VIEWER }) { id } }",
    "member",
    "u",
  ),
  byOwnId("removeMember", "mutation($u: ID!) { removeMember(userId: $u) }", "member", "u"),
];

/**
 * Every by-id call of `target`'s records made from `from`'s workspace: with the foreign id alone, and
 * with the foreign id under one of `from`'s own parents ("via mine").
 */
function graphqlByIdCalls(from: Ids, target: Ids): Call[] {
  return BY_ID.flatMap(({ field, query, vars, viaMine }): Call[] => [
    [field, field, query, vars(target)],
    ...(viaMine ? [[`${field} via mine`, field, query, viaMine(from, target)] as Call] : []),
  ]);
}

/** The workspace-scoped fields that take no id: lists and creations. */
const listAndCreateCalls: Call[] = [
  ["agents", "agents", "{ agents { edges { node { id } } } }"],
  ["members", "members", "{ members { edges { node { id } } } }"],
  ["invites", "invites", "{ invites { edges { node { id } } } }"],
  ["apiTokens", "apiTokens", "{ apiTokens { edges { node { id } } } }"],
  ["approvals", "approvals", "{ approvals { edges { node { id } } } }"],
  ["supervisorChanges", "supervisorChanges", "{ supervisorChanges { edges { node { id } } } }"],
  ["inbox", "inbox", '{ inbox(search: "same") { edges { node { id } } } }'],
  ["createAgent", "createAgent", 'mutation { createAgent(input: { name: "Planted" }) { id } }'],
  [
    "createInvite",
    "createInvite",
    'mutation { createInvite(input: { email: "x@example.test", role: OWNER }) { inviteUrl } }',
  ],
  ["createApiToken", "createApiToken", 'mutation { createApiToken(input: { label: "x" }) { token } }'],
  ["supervisorConversation", "supervisorConversation", "{ supervisorConversation { id messages { id } } }"],
  [
    "sendSupervisorMessage",
    "sendSupervisorMessage",
    'mutation { sendSupervisorMessage(input: { message: "Planted" }) { reply { id } } }',
  ],
  ["resetSupervisorConversation", "resetSupervisorConversation", "mutation { resetSupervisorConversation }"],
  ["supervisorCredits", "supervisorCredits", "{ supervisorCredits { day credits } }"],
  ["workspace", "workspace", "{ workspace { id } }"],
];

/** Fields that need a person: an API token gets FORBIDDEN before any id is looked at. */
const PEOPLE_ONLY = ["approveApproval", "rejectApproval", "markConversationRead"];

/**
 * Fields whose ID argument only filters a list (`inbox(agentId)`): another workspace's id lists
 * nothing, exactly as an unknown one (their own step below), rather than NOT_FOUND.
 */
const ID_FILTERS = ["inbox"];

/** Root fields that act for the credential alone, in no workspace (or need none). */
const NOT_WORKSPACE_SCOPED = [
  "viewer",
  "workspaces",
  "login",
  "logout",
  "changePassword",
  "acceptInvite",
  "invitation",
  "createWorkspace",
];

/** Root fields with an argument of type ID (deleteWorkspace names its workspace: tested apart). */
function idTakingFields(): string[] {
  const fields: GraphQLFieldMap<unknown, unknown> = {
    ...schema.getQueryType()!.getFields(),
    ...schema.getMutationType()!.getFields(),
  };
  return Object.values(fields)
    .filter((f) => f.args.some((a) => getNamedType(a.type).name === "ID"))
    .map((f) => f.name)
    .filter((name) => name !== "deleteWorkspace" && !ID_FILTERS.includes(name))
    .sort();
}

/** The REST snapshot plus deliveries (GraphQL reaches them here too). */
const fullSnapshot = (app: App) => snapshot(app, ["DomainEvent", "WebhookDelivery"]);

const nodeIds = (conn: { edges: Array<{ node: { id: string } }> }) => conn.edges.map((e) => e.node.id).sort();

/** Every by-id REST call of `target`'s records, made from `from`'s workspace. */
function restByIdCalls(c: Client, from: Fixture, target: Fixture): Array<[string, Promise<Reply>]> {
  const A = `/api/agents/${target.agent}`;
  const mine = `/api/agents/${from.agent}`;
  const ws = `/api/workspaces/${from.workspaceId}`;
  return [
    ["GET agent", c.get(A)],
    ["PUT agent", c.put(A, { name: "Taken" })],
    ["PATCH status", c.patch(`${A}/status`, { status: "PAUSED" })],
    ["PUT prompt", c.put(`${A}/prompt`, { systemPrompt: "Taken", rationale: "r" })],
    ["GET versions", c.get(`${A}/prompt-versions`)],
    ["revert foreign agent", c.post(`${A}/prompt-versions/${target.version}/revert`)],
    ["revert foreign version", c.post(`${mine}/prompt-versions/${target.version}/revert`)],
    ["GET intents", c.get(`${A}/intents`)],
    ["POST intent", c.post(`${A}/intents`, { ...INTENT, name: "Planted" })],
    ["GET intent", c.get(`${A}/intents/${target.intent}`)],
    ["GET intent via mine", c.get(`${mine}/intents/${target.intent}`)],
    ["PATCH intent", c.patch(`${A}/intents/${target.intent}`, { description: "x" })],
    ["PATCH intent via mine", c.patch(`${mine}/intents/${target.intent}`, { description: "x" })],
    ["DELETE intent via mine", c.delete(`${mine}/intents/${target.intent}`)],
    ["GET webhooks", c.get(`${A}/webhooks`)],
    ["POST webhook", c.post(`${A}/webhooks`, HOOK)],
    ["GET webhook", c.get(`${A}/webhooks/${target.webhook}`)],
    ["GET webhook via mine", c.get(`${mine}/webhooks/${target.webhook}`)],
    ["PATCH webhook via mine", c.patch(`${mine}/webhooks/${target.webhook}`, { method: "PUT" })],
    ["rotate via mine", c.post(`${mine}/webhooks/${target.webhook}/rotate-secret`)],
    ["DELETE webhook via mine", c.delete(`${mine}/webhooks/${target.webhook}`)],
    ["DELETE intent", c.delete(`${A}/intents/${target.intent}`)],
    ["DELETE webhook", c.delete(`${A}/webhooks/${target.webhook}`)],
    ["DELETE agent", c.delete(A)],
    ["DELETE invite via mine", c.delete(`${ws}/invites/${target.invite}`)],
    ["revoke token via mine", c.delete(`${ws}/api-tokens/${target.apiToken}`)],
    ["POST template", c.post(`/api/conversations/${target.conversation}/template`, HELLO_TEMPLATE)],
    [
      "POST templates/send",
      c.post(`/api/channels/${target.channel}/templates/send`, { ...HELLO_TEMPLATE, to: "155501" }),
    ],
    ["GET approval", c.get(`/api/approvals/${target.approval}`)],
    ["replay", c.post(`/api/approvals/${target.approval}/replay`)],
    ["GET replay cases", c.get(`${A}/replay-cases`)],
    ["pin", c.post(`${A}/replay-cases`, { conversationId: target.conversation })],
    ["pin via mine", c.post(`${mine}/replay-cases`, { conversationId: target.conversation })],
    ["unpin", c.delete(`${A}/replay-cases/${target.conversation}`)],
    ["unpin via mine", c.delete(`${mine}/replay-cases/${target.conversation}`)],
    ["assign", c.post(`/api/conversations/${target.conversation}/assign`, { userId: null })],
    [
      "assign their member",
      c.post(`/api/conversations/${from.conversation}/assign`, { userId: target.member }),
    ],
    // Deciding needs a person: an API token is refused (403) before any id is looked at.
    ...(c === from.tokenClient ? [] : [
      ["approve", c.post(`/api/approvals/${target.approval}/approve`)] as [string, Promise<Reply>],
      ["read", c.post(`/api/conversations/${target.conversation}/read`)] as [string, Promise<Reply>],
      ["reject", c.post(`/api/approvals/${target.approval}/reject`)] as [string, Promise<Reply>],
    ]),
  ];
}

const ids = (r: Reply) => r.body.data.map((x: { id: string }) => x.id).sort();

Deno.test("isolation over REST and GraphQL", async (t) => {
  const ta = await startTestApp({}, { workers: false });
  const { app, seed } = ta;
  const db = app.deps.db;
  try {
    const u = await seed.workspace("U one");
    const v = await seed.workspace("V");
    const uTwo = await u.owner.client.post("/api/workspaces", { name: "U two" });
    assertStatus(uTwo, 201);

    let phones = 555000;
    const fill = async (client: Client, workspaceId: string): Promise<Fixture> => {
      const agent = (await client.post("/api/agents", { name: "Ana" })).body.id;
      const intent = (await client.post(`/api/agents/${agent}/intents`, INTENT)).body.id;
      const webhook = (await client.post(`/api/agents/${agent}/webhooks`, HOOK)).body.id;
      await client.put(`/api/agents/${agent}/prompt`, { systemPrompt: "P", rationale: "r" });
      const version = (await client.get(`/api/agents/${agent}/prompt-versions`)).body.data[0].id;
      const event = await db.domainEvent.create({
        data: { workspaceId, agentId: agent, type: "message.sent", payload: {} },
      });
      const delivery = await db.webhookDelivery.create({
        data: {
          webhookId: webhook,
          eventId: event.id,
          status: "FAILED",
          attemptCount: 3,
          idempotencyKey: "k",
        },
      });
      const inv = await client.post(`/api/workspaces/${workspaceId}/invites`, {
        email: "same@example.test",
        role: "VIEWER",
      });
      const tok = await client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "same" });
      const member = await seed.member(workspaceId, "AGENT");
      const channel = (await client.post(`/api/agents/${agent}/channels`, {
        type: "WHATSAPP",
        label: "Sales",
        config: { phoneNumberId: String(++phones), accessToken: "t", appSecret: "s", verifyToken: "v" },
      })).body.id;
      const apiChannel =
        (await client.post(`/api/agents/${agent}/channels`, { type: "API", label: "App" })).body.id;
      const conversation = (await client.post(`/api/channels/${apiChannel}/messages`, {
        contact: { externalId: "same" },
        type: "TEXT",
        content: "hi",
      })).body.conversationId;
      const approval = await newApproval(await actorOf(app, client.token!, workspaceId), agent);
      return {
        approval,
        channel,
        apiChannel,
        conversation,
        workspaceId,
        client,
        tokenClient: new Client(app, tok.body.token, workspaceId),
        agent,
        intent,
        webhook,
        version,
        delivery: delivery.id,
        invite: inv.body.id,
        inviteToken: inv.body.inviteUrl.split("/").pop(),
        apiToken: tok.body.id,
        member: member.userId,
      };
    };
    const w1 = await fill(u.owner.client, u.workspaceId);
    const w2 = await fill(u.owner.client.in(uTwo.body.id), uTwo.body.id);
    const w3 = await fill(v.owner.client, v.workspaceId);
    const all = [w1, w2, w3];
    const unknown = {
      workspaceId: UNKNOWN,
      agent: UNKNOWN,
      intent: UNKNOWN,
      webhook: UNKNOWN,
      version: UNKNOWN,
      delivery: UNKNOWN,
      invite: UNKNOWN,
      inviteToken: UNKNOWN,
      apiToken: UNKNOWN,
      member: UNKNOWN,
      channel: UNKNOWN,
      apiChannel: UNKNOWN,
      conversation: UNKNOWN,
      approval: UNKNOWN,
    };

    await t.step(
      "the calls name every id-taking field and every workspace-scoped field of the schema",
      () => {
        const byId = [...new Set(graphqlByIdCalls(w1, w2).map(([, field]) => field))].sort();
        assert.deepEqual(byId, idTakingFields());
        const scoped = [...byId, ...listAndCreateCalls.map(([, field]) => field), "deleteWorkspace"].sort();
        const every = [
          ...Object.keys(schema.getQueryType()!.getFields()),
          ...Object.keys(schema.getMutationType()!.getFields()),
        ].filter((f) => !NOT_WORKSPACE_SCOPED.includes(f)).sort();
        assert.deepEqual(scoped, every);
      },
    );

    const pairs: Array<[string, Fixture, Fixture]> = [
      ["same owner: W1 -> W2", w1, w2],
      ["same owner: W2 -> W1", w2, w1],
      ["other user: W1 -> W3", w1, w3],
      ["other user: W3 -> W1", w3, w1],
    ];
    for (const [name, from, target] of pairs) {
      await t.step(
        `REST by id, ${name}: 404 like an unknown id, nothing changes (JWT and API token)`,
        async () => {
          const before = await snapshot(app);
          for (const c of [from.client, from.tokenClient]) {
            for (const [what, call] of restByIdCalls(c, from, target)) {
              const res = await call;
              assert.equal(res.status, 404, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
              assertProblem(res, 404, "NOT_FOUND");
            }
            // The answer does not reveal that the id exists.
            const foreign = await c.get(`/api/agents/${target.agent}`);
            const unknown = await c.get(`/api/agents/${UNKNOWN}`);
            assert.deepEqual(foreign.body, {
              ...unknown.body,
              detail: foreign.body.detail,
              instance: foreign.body.instance, // each request's own id
            });
            assert.equal(foreign.body.detail, unknown.body.detail);
          }
          assert.equal(await snapshot(app), before);
        },
      );
      await t.step(
        `GraphQL by id, ${name}: NOT_FOUND exactly like an unknown id, nothing changes`,
        async () => {
          const before = await fullSnapshot(app);
          const foreignCalls = graphqlByIdCalls(from, target);
          const unknownCalls = graphqlByIdCalls(from, unknown);
          for (const c of [from.client, from.tokenClient]) {
            for (let i = 0; i < foreignCalls.length; i++) {
              const [label, field, query, variables] = foreignCalls[i];
              const foreign = await gql(c, query, variables);
              const person = c === from.tokenClient && PEOPLE_ONLY.includes(field);
              const error = gqlRefused(foreign, person ? "FORBIDDEN" : "NOT_FOUND", label);
              assert.equal(error.extensions.status, person ? 403 : 404, label);
              assert.equal(foreign.body.data?.[field] ?? null, null, label);
              // The same answer as for ids that exist nowhere: nothing tells the id exists.
              const [, , uQuery, uVariables] = unknownCalls[i];
              const unknownReply: Reply = await gql(c, uQuery, uVariables);
              assert.deepEqual(foreign.body, unknownReply.body, label);
              assert.equal(foreign.status, unknownReply.status, label);
              // And nothing of the target in the answer.
              const text = JSON.stringify(foreign.body);
              for (const id of Object.values(target).filter((x) => typeof x === "string")) {
                assert.ok(!text.includes(id as string), `${label}: ${text}`);
              }
            }
          }
          assert.equal(await fullSnapshot(app), before);
        },
      );
    }

    await t.step("REST lists show only the workspace's own records", async () => {
      for (const f of all) {
        for (const c of [f.client, f.tokenClient]) {
          assert.deepEqual(ids(await c.get("/api/agents")), [f.agent]);
          const [listed] = (await c.get("/api/agents")).body.data;
          assert.deepEqual(listed._count, { conversations: 1, intents: 1, numbers: 2 });
          assert.deepEqual(ids(await c.get(`/api/agents/${f.agent}/intents`)), [f.intent]);
          assert.deepEqual(ids(await c.get(`/api/agents/${f.agent}/webhooks`)), [f.webhook]);
          assert.deepEqual(ids(await c.get(`/api/agents/${f.agent}/prompt-versions`)), [f.version]);
          assert.deepEqual(ids(await c.get(`/api/workspaces/${f.workspaceId}/invites`)), [f.invite]);
          assert.deepEqual(ids(await c.get(`/api/workspaces/${f.workspaceId}/api-tokens`)), [f.apiToken]);
          assert.deepEqual(ids(await c.get("/api/approvals")), [f.approval]);
          assert.deepEqual(ids(await c.get("/api/supervisor/changes")), [f.approval]);
        }
      }
      // Members: W1 and W2 have the same owner; W3 another; each its own AGENT member.
      const m1 = (await w1.client.get(`/api/workspaces/${w1.workspaceId}/members`)).body.data;
      const m3 = (await w3.client.get(`/api/workspaces/${w3.workspaceId}/members`)).body.data;
      assert.deepEqual(m1.map((m: { id: string }) => m.id).sort(), [u.owner.userId, w1.member].sort());
      assert.deepEqual(m3.map((m: { id: string }) => m.id).sort(), [v.owner.userId, w3.member].sort());
    });

    await t.step("the inbox lists, filters and searches only the workspace's own conversations", async () => {
      for (const f of all) {
        for (const c of [f.client, f.tokenClient]) {
          // Every workspace's contact is "same", its message "hi".
          assert.deepEqual(ids(await c.get("/api/conversations")), [f.conversation]);
          assert.deepEqual(ids(await c.get("/api/conversations?search=same")), [f.conversation]);
          assert.deepEqual(ids(await c.get(`/api/conversations?agentId=${f.agent}&search=same`)), [
            f.conversation,
          ]);
          for (const other of all.filter((o) => o !== f)) {
            assert.deepEqual(ids(await c.get(`/api/conversations?agentId=${other.agent}`)), []);
            assert.deepEqual(ids(await c.get(`/api/conversations?agentId=${other.agent}&search=same`)), []);
            // A foreign agent's id answers as an unknown one.
            const q =
              "query($a: ID) { inbox(agentId: $a) { edges { node { id } } pageInfo { hasNextPage } } }";
            const foreign = await gql(c, q, { a: other.agent });
            assert.deepEqual(foreign.body, (await gql(c, q, { a: UNKNOWN })).body);
            assert.deepEqual(foreign.body, {
              data: { inbox: { edges: [], pageInfo: { hasNextPage: false } } },
            });
          }
          const d = gqlOk(
            await gql(
              c,
              '{ inbox { edges { node { id } } } found: inbox(search: "same") { edges { node { id } } } }',
            ),
          );
          assert.deepEqual(nodeIds(d.inbox), [f.conversation]);
          assert.deepEqual(nodeIds(d.found), [f.conversation]);
        }
      }
    });

    await t.step("GraphQL connections list only the workspace's own rows", async () => {
      const LISTS = `query($a: ID!, $w: ID!) {
        agents { edges { node { id counts { intents } } } }
        members { edges { node { id } } }
        invites { edges { node { id } } }
        apiTokens { edges { node { id } } }
        approvals { edges { node { id } } }
        supervisorChanges { edges { node { id } } }
        intents(agentId: $a) { edges { node { id } } }
        webhooks(agentId: $a) { edges { node { id } } }
        agent(id: $a) {
          intents { edges { node { id } } }
          webhooks { edges { node { id deliveries { edges { node { id } } } } } }
          promptVersions { edges { node { id } } }
        }
        webhook(agentId: $a, id: $w) { deliveries { edges { node { id } } } }
      }`;
      for (const f of all) {
        const owner = f === w3 ? v.owner.userId : u.owner.userId;
        for (const c of [f.client, f.tokenClient]) {
          const d = gqlOk(await gql(c, LISTS, { a: f.agent, w: f.webhook }));
          assert.deepEqual(nodeIds(d.agents), [f.agent]);
          assert.deepEqual(d.agents.edges[0].node.counts, { intents: 1 });
          assert.deepEqual(nodeIds(d.members), [owner, f.member].sort());
          assert.deepEqual(nodeIds(d.invites), [f.invite]);
          assert.deepEqual(nodeIds(d.apiTokens), [f.apiToken]);
          assert.deepEqual(nodeIds(d.approvals), [f.approval]);
          assert.deepEqual(nodeIds(d.supervisorChanges), [f.approval]);
          assert.deepEqual(nodeIds(d.intents), [f.intent]);
          assert.deepEqual(nodeIds(d.webhooks), [f.webhook]);
          assert.deepEqual(nodeIds(d.agent.intents), [f.intent]);
          assert.deepEqual(nodeIds(d.agent.webhooks), [f.webhook]);
          assert.deepEqual(nodeIds(d.agent.webhooks.edges[0].node.deliveries), [f.delivery]);
          assert.deepEqual(nodeIds(d.agent.promptVersions), [f.version]);
          assert.deepEqual(nodeIds(d.webhook.deliveries), [f.delivery]);
        }
      }
    });

    await t.step("REST cursors of another workspace do not leak its rows", async () => {
      // A cursor naming their agent at the start of time: every row after it, of W1 only.
      for (const id of [w2.agent, w3.agent]) {
        const res = await w1.client.get(`/api/agents?cursor=${encodeCursor({ at: new Date(0), id })}`);
        assertStatus(res, 200);
        for (const a of res.body.data) assert.equal(a.id, w1.agent);
        assert.equal(res.body.nextCursor, null);
      }
    });

    await t.step("a GraphQL cursor of another workspace behaves like an unknown one", async () => {
      // Each connection's cursors as its own workspace sees them.
      const CURSORS = `query($a: ID!, $w: ID!) {
        agents { edges { cursor } }
        members { edges { cursor } }
        invites { edges { cursor } }
        apiTokens { edges { cursor } }
        intents(agentId: $a) { edges { cursor } }
        webhooks(agentId: $a) { edges { cursor } }
        agent(id: $a) { promptVersions { edges { cursor } } }
        webhook(agentId: $a, id: $w) { deliveries { edges { cursor } } }
      }`;
      const cursorsOf = async (f: Fixture) => {
        const d = gqlOk(await gql(f.client, CURSORS, { a: f.agent, w: f.webhook }));
        const one = (conn: { edges: Array<{ cursor: string }> }) => conn.edges.at(-1)!.cursor;
        return {
          agents: one(d.agents),
          members: one(d.members),
          invites: one(d.invites),
          apiTokens: one(d.apiTokens),
          intents: one(d.intents),
          webhooks: one(d.webhooks),
          versions: one(d.agent.promptVersions),
          deliveries: one(d.webhook.deliveries),
        };
      };
      const PAGE = (dir: "after" | "before") => {
        const page = `${dir}: $c${dir === "before" ? ", last: 10" : ""}`;
        const conn = "{ edges { node { id } } pageInfo { hasNextPage hasPreviousPage } }";
        return `query($a: ID!, $w: ID!, $c: String) {
          agents(${page}) ${conn}
          members(${page}) ${conn}
          invites(${page}) ${conn}
          apiTokens(${page}) ${conn}
          intents(agentId: $a, ${page}) ${conn}
          webhooks(agentId: $a, ${page}) ${conn}
          agent(id: $a) { promptVersions(${page}) ${conn} }
          webhook(agentId: $a, id: $w) { deliveries(${page}) ${conn} }
        }`;
      };
      // One cursor variable for every connection: a foreign row of each kind, one by one. Cursors
      // are keyset positions (shared/pagination.ts): a foreign row's cursor must answer exactly as
      // the same position naming no row, and a position past every row as an empty page.
      const unknownAt = (cursor: string) => encodeCursor({ at: decodeCursor(cursor)!.at, id: UNKNOWN });
      const foreignSets = [await cursorsOf(w2), await cursorsOf(w3)];
      for (const dir of ["after", "before"] as const) {
        for (const c of [w1.client, w1.tokenClient]) {
          const vars = { a: w1.agent, w: w1.webhook };
          const beyond = encodeCursor({ at: new Date(dir === "after" ? 8.64e15 : 0), id: UNKNOWN });
          const empty = gqlOk(await gql(c, PAGE(dir), { ...vars, c: beyond }), `unknown ${dir}`);
          // (Oldest-first connections; prompt versions are newest first, so that position is their start.)
          for (const conn of [empty.agents, empty.members, empty.invites, empty.apiTokens]) {
            assert.deepEqual(conn.edges, []);
          }
          for (const set of foreignSets) {
            for (const [kind, cursor] of Object.entries(set)) {
              const expected = gqlOk(
                await gql(c, PAGE(dir), { ...vars, c: unknownAt(cursor) }),
                `${kind} ${dir}`,
              );
              const got = gqlOk(await gql(c, PAGE(dir), { ...vars, c: cursor }), `${kind} ${dir}`);
              assert.deepEqual(got, expected, `${kind} cursor ${dir}`);
            }
          }
        }
      }
    });

    await t.step(
      "REST: a workspace of which the caller is not a member: 403 with header or path",
      async () => {
        const before = await snapshot(app);
        for (const c of [u.owner.client.in(w3.workspaceId), w1.tokenClient.in(w2.workspaceId)]) {
          assertProblem(await c.get("/api/agents"), 403, "FORBIDDEN");
          assertProblem(await c.get(`/api/agents/${w3.agent}`), 403, "FORBIDDEN");
          assertProblem(await c.post("/api/agents", { name: "Planted" }), 403, "FORBIDDEN");
          assertProblem(await c.get("/api/supervisor/conversation"), 403, "FORBIDDEN");
          assertProblem(await c.post("/api/supervisor/chat", { message: "Planted" }), 403, "FORBIDDEN");
          assertProblem(await c.delete("/api/supervisor/conversation"), 403, "FORBIDDEN");
          assertProblem(await c.get("/api/supervisor/credits"), 403, "FORBIDDEN");
        }
        const paths = (
          ws: string,
        ) => [
          `/api/workspaces/${ws}/members`,
          `/api/workspaces/${ws}/invites`,
          `/api/workspaces/${ws}/api-tokens`,
        ];
        for (const p of paths(w3.workspaceId)) assertProblem(await w1.client.get(p), 403, "FORBIDDEN");
        // An API token of W1 does not reach W2, although the same person owns both.
        for (const p of paths(w2.workspaceId)) assertProblem(await w1.tokenClient.get(p), 403, "FORBIDDEN");
        assertProblem(
          await w1.tokenClient.delete(`/api/workspaces/${w2.workspaceId}/api-tokens/${w2.apiToken}`),
          403,
          "FORBIDDEN",
        );
        assertProblem(
          await w1.client.post(`/api/workspaces/${w3.workspaceId}/invites`, {
            email: "x@example.test",
            role: "OWNER",
          }),
          403,
          "FORBIDDEN",
        );
        assertProblem(await w1.client.delete(`/api/workspaces/${w3.workspaceId}`), 403, "FORBIDDEN");
        assert.equal(await snapshot(app), before);
      },
    );

    await t.step(
      "GraphQL: a non-member, or an API token of another workspace: FORBIDDEN everywhere, nothing changes",
      async () => {
        const before = await fullSnapshot(app);
        // U is not a member of W3; W1's token names W2, which the same person owns.
        const cases: Array<[string, Client, Fixture]> = [
          ["non-member in W3", u.owner.client.in(w3.workspaceId), w3],
          ["W1's API token in W2", w1.tokenClient.in(w2.workspaceId), w2],
          ["W3's member in W1", w3.client.in(w1.workspaceId), w1],
        ];
        for (const [who, c, ws] of cases) {
          // Their own ids: so a refusal cannot be a NOT_FOUND in disguise.
          const calls: Call[] = [
            ...graphqlByIdCalls(ws, ws),
            ...listAndCreateCalls,
            ["deleteWorkspace", "deleteWorkspace", "mutation($id: ID!) { deleteWorkspace(id: $id) }", {
              id: ws.workspaceId,
            }],
          ];
          for (const [label, field, query, variables] of calls) {
            const res = await gql(c, query, variables);
            const error = gqlRefused(res, "FORBIDDEN", `${who}: ${label}`);
            assert.equal(error.extensions.status, 403, label);
            assert.equal(res.body.data?.[field] ?? null, null, label);
          }
        }
        assert.equal(await fullSnapshot(app), before);
      },
    );
    await t.step("accepting W2's invite grants W2 only", async () => {
      const res = await ta.anon.post(`/invite/${w2.inviteToken}`, {
        name: "Same",
        password: "a long password",
      });
      assertStatus(res, 200);
      assert.deepEqual(res.body.workspaces, [{ id: w2.workspaceId, name: "U two", role: "VIEWER" }]);
      const c = new Client(app, res.body.token);
      assertStatus(await c.in(w2.workspaceId).get(`/api/agents/${w2.agent}`), 200);
      assertProblem(await c.in(w1.workspaceId).get("/api/agents"), 403, "FORBIDDEN");
      assertProblem(await c.in(w2.workspaceId).get(`/api/agents/${w1.agent}`), 404, "NOT_FOUND");
      // The same email's invites of W1 and W3 are separate and still open.
      assertStatus(await ta.anon.get(`/invite/${w1.inviteToken}`), 200);
      assertStatus(await ta.anon.get(`/invite/${w3.inviteToken}`), 200);
    });

    await t.step(
      "each workspace has its own supervisor conversation; a reset erases only its own",
      async () => {
        // No model here: each chat answers 503 and keeps the person's message, enough to tell them apart.
        for (const f of all) {
          assertProblem(
            await f.client.post("/api/supervisor/chat", { message: `from ${f.workspaceId}` }),
            503,
            "SUPERVISOR_MODEL_UNAVAILABLE",
          );
        }
        const seen = await Promise.all(
          all.map(async (f) => (await f.tokenClient.get("/api/supervisor/conversation")).body),
        );
        assert.equal(new Set(seen.map((c) => c.id)).size, 3);
        for (const [i, f] of all.entries()) {
          assert.deepEqual(seen[i].messages.map((m: { content: string }) => m.content), [
            `from ${f.workspaceId}`,
          ]);
        }
        assertStatus(await w3.client.delete("/api/supervisor/conversation"), 204);
        assert.equal((await w1.client.get("/api/supervisor/conversation")).body.messages.length, 1);
        assert.equal((await w3.client.get("/api/supervisor/conversation")).body.messages.length, 0);
      },
    );

    await t.step("deleting W2 leaves W1 and W3 whole", async () => {
      const keep = async () =>
        JSON.stringify(
          await Promise.all([w1, w3].map(async (f) => [
            (await f.client.get(`/api/agents/${f.agent}`)).body,
            (await f.client.get(`/api/agents/${f.agent}/intents`)).body,
            (await f.client.get(`/api/agents/${f.agent}/webhooks`)).body,
            (await f.client.get(`/api/agents/${f.agent}/prompt-versions`)).body,
          ])),
        );
      const before = await keep();
      assertStatus(await w2.client.delete(`/api/workspaces/${w2.workspaceId}`), 204);
      assert.equal(await keep(), before);
      assertStatus(await w1.tokenClient.get("/api/agents"), 200);
      assertProblem(await w2.tokenClient.get("/api/agents"), 401, "UNAUTHENTICATED");
    });
  } finally {
    await ta.close();
  }
});
