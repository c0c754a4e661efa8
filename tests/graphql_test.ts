/**
 * The GraphQL API at /graphql against a real database: the committed schema, login and viewer,
 * nested writes and reads, error codes, a statement count that catches N+1, and parity with REST.
 */
import assert from "node:assert/strict";
import { Client, startTestApp, type TestApp, testSecretBox } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { createPrisma } from "../src/db/client.ts";
import { printedSchema, SCHEMA_FILE } from "../src/graphql/print_schema.ts";

const HOOK_URL = "http://127.0.0.1:9/hook";

/** Runs `fn` against a fresh app and database, closing both afterwards. */
async function withApp(fn: (t: TestApp) => Promise<void>, options?: Parameters<typeof startTestApp>[1]) {
  const t = await startTestApp({}, options);
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

/** The data of a GraphQL answer, failing the test on any error. */
// deno-lint-ignore no-explicit-any
async function gqlData(client: Client, query: string, variables?: Record<string, unknown>): Promise<any> {
  const res = await client.graphql(query, variables);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
  return res.body.data;
}

/** The `extensions.code` of each error of a GraphQL answer. */
async function gqlCodes(
  client: Client,
  query: string,
  variables?: Record<string, unknown>,
): Promise<string[]> {
  const res = await client.graphql(query, variables);
  assert.ok(Array.isArray(res.body.errors), `expected errors, got ${JSON.stringify(res.body)}`);
  return res.body.errors.map((e: { extensions?: { code?: string } }) => e.extensions?.code);
}

const CREATE_AGENT = `mutation($input: CreateAgentInput!) {
  createAgent(input: $input) { id name status template model jobName jobSite systemPrompt messageGroupingTime }
}`;
const CREATE_INTENT = `mutation($agentId: ID!, $input: CreateIntentInput!) {
  createIntent(agentId: $agentId, input: $input) { id name tag triggerOnTypes webhookMethod }
}`;
const CREATE_WEBHOOK = `mutation($agentId: ID!, $input: CreateWebhookInput!) {
  createWebhook(agentId: $agentId, input: $input) { signingSecret webhook { id event url method headers } }
}`;

Deno.test("schema.graphql is the schema the code prints (run `deno task schema` when this fails)", async () => {
  const committed = await Deno.readTextFile(SCHEMA_FILE);
  assert.equal(committed, printedSchema());
});

Deno.test("login returns a session whose token reads the viewer and its workspaces", () =>
  withApp(async ({ anon, seed }) => {
    const { workspaceId, owner } = await seed.workspace("Acme");
    const login = await gqlData(
      anon,
      `mutation($input: LoginInput!) { login(input: $input) { token user { id email } workspaces { id name role } } }`,
      { input: { email: owner.email, password: owner.password } },
    );
    assert.deepEqual(login.login.user, { id: owner.userId, email: owner.email });
    assert.deepEqual(login.login.workspaces, [{ id: workspaceId, name: "Acme", role: "OWNER" }]);

    const client = new Client(anon.app, login.login.token);
    const viewer = await gqlData(client, `{ viewer { user { id name email } workspaces { id name role } } }`);
    assert.deepEqual(viewer.viewer, {
      user: { id: owner.userId, name: "User 1", email: owner.email },
      workspaces: [{ id: workspaceId, name: "Acme", role: "OWNER" }],
    });

    assert.deepEqual(
      await gqlCodes(
        anon,
        `mutation { login(input: { email: "${owner.email}", password: "wrong-password" }) { token } }`,
      ),
      ["INVALID_CREDENTIALS"],
    );
  }));

Deno.test("agents, intents and webhooks created by mutations read back with their nested fields", () =>
  withApp(async ({ seed }) => {
    const { workspaceId, owner } = await seed.workspace();
    const viewer = await seed.member(workspaceId, "VIEWER");
    const { createAgent: agent } = await gqlData(owner.client, CREATE_AGENT, {
      input: { name: "Ana", jobName: "Acme", jobSite: "https://acme.example", messageGroupingTime: "FAST" },
    });
    assert.equal(agent.status, "ACTIVE");
    assert.equal(agent.template, "SUPORTE");
    assert.equal(agent.messageGroupingTime, "FAST");
    assert.match(agent.systemPrompt, /^Você é Ana, atendente de suporte ao cliente da empresa Acme\./);

    for (const name of ["Book Visit", "Cancel order"]) {
      await gqlData(owner.client, CREATE_INTENT, {
        agentId: agent.id,
        input: {
          name,
          description: `when the customer wants to ${name.toLowerCase()}`,
          triggerOnTypes: ["TEXT", "AUDIO"],
          requiredFields: [{ name: "date", type: "string", description: "the day" }],
          webhookUrl: HOOK_URL,
        },
      });
    }
    const { createWebhook } = await gqlData(owner.client, CREATE_WEBHOOK, {
      agentId: agent.id,
      input: { event: "message.sent", url: HOOK_URL, headers: { "X-Api-Key": "k-123" } },
    });
    assert.match(createWebhook.signingSecret, /^whsec_/);
    assert.deepEqual(createWebhook.webhook.headers, { "X-Api-Key": "k-123" });

    const query = `query($id: ID!) {
      agent(id: $id) {
        name status
        counts { conversations intents numbers }
        intents { edges { node { name tag triggerOnTypes requiredFields { name type description } webhookUrl webhookMethod } } }
        webhooks { edges { node { event url method headers lastError } } }
        promptVersions { edges { node { id } } }
      }
    }`;
    const read = await gqlData(owner.client, query, { id: agent.id });
    assert.deepEqual(read.agent, {
      name: "Ana",
      status: "ACTIVE",
      counts: { conversations: 0, intents: 2, numbers: 0 },
      intents: {
        edges: ["Book Visit", "Cancel order"].map((name) => ({
          node: {
            name,
            tag: name.toLowerCase().replace(" ", "-"),
            triggerOnTypes: ["TEXT", "AUDIO"],
            requiredFields: [{ name: "date", type: "string", description: "the day" }],
            webhookUrl: HOOK_URL,
            webhookMethod: "POST",
          },
        })),
      },
      webhooks: {
        edges: [{
          node: {
            event: "message.sent",
            url: HOOK_URL,
            method: "POST",
            headers: { "X-Api-Key": "k-123" },
            lastError: null,
          },
        }],
      },
      promptVersions: { edges: [] },
    });

    // A VIEWER reads the same webhook with the header values masked, and never the secret.
    const masked = await gqlData(
      viewer.client,
      `query($id: ID!) { webhooks(agentId: $id) { edges { node { headers } } } }`,
      {
        id: agent.id,
      },
    );
    assert.deepEqual(masked.webhooks.edges, [{ node: { headers: { "X-Api-Key": "********" } } }]);
    const introspection = await gqlData(owner.client, `{ __type(name: "Webhook") { fields { name } } }`);
    assert.ok(!introspection.__type.fields.some((f: { name: string }) => f.name === "signingSecret"));
  }));

Deno.test("errors carry the REST code in extensions.code", () =>
  withApp(async ({ anon, seed }) => {
    const { workspaceId, owner } = await seed.workspace("Mine");
    const other = await seed.workspace("Theirs");
    const viewer = await seed.member(workspaceId, "VIEWER");
    const foreign = await seed.agent(other.owner.client, { name: "Theirs" });
    const agentsQuery = `{ agents { edges { node { id } } } }`;

    assert.deepEqual(await gqlCodes(anon.in(workspaceId), agentsQuery), ["UNAUTHENTICATED"]);
    assert.deepEqual(await gqlCodes(owner.client.in(undefined), agentsQuery), ["WORKSPACE_REQUIRED"]);
    assert.deepEqual(await gqlCodes(owner.client.in(other.workspaceId), agentsQuery), ["FORBIDDEN"]);
    assert.deepEqual(await gqlCodes(viewer.client, CREATE_AGENT, { input: { name: "Nope" } }), ["FORBIDDEN"]);
    assert.deepEqual(
      await gqlCodes(owner.client, `query($id: ID!) { agent(id: $id) { id } }`, { id: foreign.id }),
      [
        "NOT_FOUND",
      ],
    );
    assert.deepEqual(
      await gqlCodes(
        owner.client,
        `mutation($id: ID!) { setAgentStatus(id: $id, input: { status: PAUSED }) { id } }`,
        {
          id: foreign.id,
        },
      ),
      ["NOT_FOUND"],
    );

    const invalid = await owner.client.graphql(CREATE_AGENT, {
      input: { name: "Ana", jobSite: "not a url" },
    });
    assert.equal(invalid.body.data, null);
    assert.equal(invalid.body.errors.length, 1);
    assert.deepEqual(invalid.body.errors[0].extensions, {
      code: "VALIDATION_FAILED",
      status: 400,
      errors: [{ path: "jobSite", message: "must be an http(s) URL" }],
    });
    assert.deepEqual(invalid.body.errors[0].path, ["createAgent"]);

    // Documents that do not match the schema keep Yoga's own code.
    assert.deepEqual(await gqlCodes(owner.client, `{ agents { edges { node { passwordHash } } } }`), [
      "GRAPHQL_VALIDATION_FAILED",
    ]);
    // Nothing was created by the denied or invalid calls.
    assert.deepEqual((await gqlData(owner.client, agentsQuery)).agents.edges, []);
  }));

Deno.test("a page of agents with intents, webhooks and counts costs the same few statements for 5 and for 50", async () => {
  const database = await createTestDatabase();
  let statements: string[] = [];
  const db = createPrisma(database.url, { onQuery: (sql) => statements.push(sql) });
  try {
    await withApp(async ({ seed }) => {
      const query = `{
        agents(first: 100) {
          pageInfo { hasNextPage }
          edges { node {
            id name status
            counts { conversations intents numbers }
            intents { edges { node { id name tag triggerOnTypes requiredFields { name } } } }
            webhooks { edges { node { id event url headers } } }
          } }
        }
      }`;
      const measured: number[] = [];
      for (const size of [5, 50]) {
        const { workspaceId, owner } = await seed.workspace(`Size ${size}`);
        await seedAgents(db, workspaceId, size);
        statements = [];
        const data = await gqlData(owner.client, query);
        measured.push(statements.length);
        // The actor's session and membership (1), the agents with their counts (1), intents (1), webhooks (1).
        assert.ok(statements.length <= 5, `expected at most 5 statements, got:\n${statements.join("\n")}`);
        assert.equal(data.agents.edges.length, size);
        assert.equal(data.agents.pageInfo.hasNextPage, false);
        for (const { node } of data.agents.edges) {
          assert.deepEqual(node.counts, { conversations: 1, intents: 3, numbers: 1 });
          assert.equal(node.intents.edges.length, 3);
          assert.deepEqual(node.webhooks.edges.map((e: { node: { headers: unknown } }) => e.node.headers), [{
            "X-Key": "v",
          }]);
        }
      }
      console.log(
        `SQL statements for one agents page: 5 agents -> ${measured[0]}, 50 agents -> ${measured[1]}`,
      );
      assert.equal(measured[0], measured[1]);

      // The plain list (the fields of GET /api/agents) is one statement with its counts, as over REST.
      const { workspaceId, owner } = await seed.workspace("Plain list");
      await seedAgents(db, workspaceId, 3);
      statements = [];
      const list = await gqlData(
        owner.client,
        `{ agents(first: 2) { pageInfo { hasNextPage endCursor }
             edges { node { id name status template model counts { conversations intents numbers } } } } }`,
      );
      const agentStatements = statements.filter((s) => /FROM "Agent"/.test(s));
      assert.equal(agentStatements.length, 1, statements.join("\n"));
      assert.equal(statements.length, 2, "the session and membership lookup (1) and the page");
      assert.equal(list.agents.edges.length, 2);
      assert.equal(list.agents.pageInfo.hasNextPage, true);
      for (const { node } of list.agents.edges) {
        assert.deepEqual(node.counts, { conversations: 1, intents: 3, numbers: 1 });
        assert.deepEqual(Object.keys(node), ["id", "name", "status", "template", "model", "counts"]);
        assert.equal(node.status, "ACTIVE");
      }
      const after = await gqlData(
        owner.client,
        `query($after: String) { agents(first: 2, after: $after) { edges { node { id counts { intents } } } } }`,
        { after: list.agents.pageInfo.endCursor },
      );
      assert.equal(after.agents.edges.length, 1);
      assert.deepEqual(after.agents.edges[0].node.counts, { intents: 3 });
      assert.ok(
        !list.agents.edges.some((e: { node: { id: string } }) => e.node.id === after.agents.edges[0].node.id),
      );
    }, { db });
  } finally {
    await db.$disconnect();
    await database.drop();
  }
});

/** `count` agents, each with 3 intents, 1 webhook, 1 channel and 1 conversation, inserted directly. */
async function seedAgents(db: ReturnType<typeof createPrisma>, workspaceId: string, count: number) {
  const ids = Array.from({ length: count }, (_, i) => `${workspaceId.slice(0, 12)}-agent-${i}`);
  await db.agent.createMany({
    data: ids.map((id, i) => ({ id, workspaceId, name: `Agent ${i}`, model: "m", systemPrompt: "p" })),
  });
  await db.intent.createMany({
    data: ids.flatMap((agentId) =>
      [1, 2, 3].map((n) => ({
        agentId,
        name: `Intent ${n}`,
        tag: `intent-${n}`,
        description: "d",
        triggerOnTypes: ["TEXT" as const],
        requiredFields: [{ name: "f", type: "string", description: "" }],
        webhookUrl: HOOK_URL,
      }))
    ),
  });
  const box = testSecretBox();
  await db.eventWebhook.createMany({
    data: ids.map((agentId) => ({
      agentId,
      event: "message.sent",
      url: HOOK_URL,
      headers: { "X-Key": box.seal("v") },
      signingSecret: box.seal("whsec_x"),
    })),
  });
  await db.channel.createMany({
    data: ids.map((agentId) => ({ id: `${agentId}-ch`, workspaceId, agentId, label: "WhatsApp" })),
  });
  const contact = await db.contact.create({
    data: { workspaceId, externalId: `c-${workspaceId}`, name: "Customer" },
  });
  await db.conversation.createMany({
    data: ids.map((agentId) => ({ workspaceId, agentId, channelId: `${agentId}-ch`, contactId: contact.id })),
  });
}

const AGENT_FIELDS =
  `name status template model jobName jobSite jobDescription trainingContext systemPrompt temperature
  enabledHumanTransfer enabledReminder splitMessages enabledEmoji signMessages messageGroupingTime maxDailyMessages
  autoCloseMinutes`;
const INTENT_INPUT = {
  name: "Book Visit",
  description: "when the customer wants a visit",
  triggerOnTypes: ["TEXT", "IMAGE"],
  requiredFields: [{ name: "date", type: "string", description: "the day" }],
  webhookUrl: HOOK_URL,
};

Deno.test("REST and GraphQL give the same results and the same denials for the same scenario", () =>
  withApp(async ({ seed }) => {
    const { workspaceId, owner } = await seed.workspace();
    const agentInput = { name: "Ana", jobName: "Acme", jobSite: "https://acme.example", temperature: 0.3 };

    // Over REST.
    const rest = owner.client;
    const created = await rest.post("/api/agents", agentInput);
    assert.equal(created.status, 201);
    const restId = created.body.id;
    assert.equal((await rest.post(`/api/agents/${restId}/intents`, INTENT_INPUT)).status, 201);
    assert.equal((await rest.patch(`/api/agents/${restId}/status`, { status: "PAUSED" })).status, 200);
    assert.equal(
      (await rest.put(`/api/agents/${restId}/prompt`, { systemPrompt: "Be brief.", rationale: "shorter" }))
        .status,
      200,
    );
    const restAgent = (await rest.get(`/api/agents/${restId}`)).body;
    const restIntents = (await rest.get(`/api/agents/${restId}/intents`)).body.data;
    const restVersions = (await rest.get(`/api/agents/${restId}/prompt-versions`)).body.data;

    // Over GraphQL.
    const gql = owner.client;
    const { createAgent } = await gqlData(gql, CREATE_AGENT, { input: agentInput });
    const gqlId = createAgent.id;
    await gqlData(gql, CREATE_INTENT, { agentId: gqlId, input: INTENT_INPUT });
    await gqlData(
      gql,
      `mutation($id: ID!) { setAgentStatus(id: $id, input: { status: PAUSED }) { status } }`,
      {
        id: gqlId,
      },
    );
    await gqlData(
      gql,
      `mutation($id: ID!) { updateAgentPrompt(id: $id, input: { systemPrompt: "Be brief.", rationale: "shorter" }) { id } }`,
      { id: gqlId },
    );
    const read = await gqlData(
      gql,
      `query($id: ID!) { agent(id: $id) {
        ${AGENT_FIELDS}
        intents { edges { node { name tag description triggerOnTypes requiredFields { name type description } webhookUrl webhookMethod } } }
        promptVersions { edges { node { systemPrompt rationale authorLabel revertedFrom } } }
      } }`,
      { id: gqlId },
    );
    const { intents, promptVersions, ...gqlAgent } = read.agent;

    const pick = (o: Record<string, unknown>, keys: string[]) =>
      Object.fromEntries(keys.map((k) => [k, o[k]]));
    const agentKeys = AGENT_FIELDS.split(/\s+/).filter(Boolean);
    assert.deepEqual(gqlAgent, pick(restAgent, agentKeys));
    assert.equal(gqlAgent.status, "PAUSED");
    assert.equal(gqlAgent.systemPrompt, "Be brief.");
    const intentKeys = [
      "name",
      "tag",
      "description",
      "triggerOnTypes",
      "requiredFields",
      "webhookUrl",
      "webhookMethod",
    ];
    assert.deepEqual(
      intents.edges.map((e: { node: Record<string, unknown> }) => e.node),
      restIntents.map((i: Record<string, unknown>) => pick(i, intentKeys)),
    );
    const versionKeys = ["systemPrompt", "rationale", "authorLabel", "revertedFrom"];
    assert.deepEqual(
      promptVersions.edges.map((e: { node: Record<string, unknown> }) => e.node),
      restVersions.map((v: Record<string, unknown>) => pick(v, versionKeys)),
    );

    // The same denials for the roles that may read but not write.
    for (const role of ["VIEWER", "AGENT"] as const) {
      const member = (await seed.member(workspaceId, role)).client;
      const restDenials = [
        (await member.post("/api/agents", agentInput)).status,
        (await member.post(`/api/agents/${restId}/intents`, INTENT_INPUT)).status,
        (await member.patch(`/api/agents/${restId}/status`, { status: "ACTIVE" })).status,
        (await member.put(`/api/agents/${restId}/prompt`, { systemPrompt: "x", rationale: "" })).status,
        (await member.delete(`/api/agents/${restId}`)).status,
      ];
      assert.deepEqual(restDenials, [403, 403, 403, 403, 403], role);
      const gqlDenials = [
        ...await gqlCodes(member, CREATE_AGENT, { input: agentInput }),
        ...await gqlCodes(member, CREATE_INTENT, { agentId: gqlId, input: INTENT_INPUT }),
        ...await gqlCodes(
          member,
          `mutation($id: ID!) { setAgentStatus(id: $id, input: { status: ACTIVE }) { id } }`,
          {
            id: gqlId,
          },
        ),
        ...await gqlCodes(
          member,
          `mutation($id: ID!) { updateAgentPrompt(id: $id, input: { systemPrompt: "x", rationale: "" }) { id } }`,
          { id: gqlId },
        ),
        ...await gqlCodes(member, `mutation($id: ID!) { deleteAgent(id: $id) }`, { id: gqlId }),
      ];
      assert.deepEqual(gqlDenials, ["FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN", "FORBIDDEN"], role);
      // Both still read.
      assert.equal((await member.get(`/api/agents/${restId}`)).body.status, "PAUSED");
      assert.equal(
        (await gqlData(member, `query($id: ID!) { agent(id: $id) { status } }`, { id: gqlId })).agent.status,
        "PAUSED",
      );
    }
  }));

Deno.test("invites, API tokens, members and workspaces are administered through mutations", () =>
  withApp(async ({ anon, seed }) => {
    const { workspaceId, owner } = await seed.workspace("Acme");
    const { createInvite } = await gqlData(
      owner.client,
      `mutation { createInvite(input: { email: "new@example.test", role: AGENT }) { inviteUrl invite { id email role acceptedAt } } }`,
    );
    assert.match(createInvite.inviteUrl, /^http:\/\/switchboard\.test\/invite\/[\w-]+$/);
    assert.deepEqual(
      { ...createInvite.invite, id: undefined },
      { id: undefined, email: "new@example.test", role: "AGENT", acceptedAt: null },
    );
    const token = createInvite.inviteUrl.split("/").pop();
    const { acceptInvite } = await gqlData(
      anon,
      `mutation($token: String!) { acceptInvite(token: $token, input: { name: "Nina", password: "long enough pw" }) {
        user { name email } workspaces { id role } } }`,
      { token },
    );
    assert.deepEqual(acceptInvite, {
      user: { name: "Nina", email: "new@example.test" },
      workspaces: [{ id: workspaceId, role: "AGENT" }],
    });
    const invites = await gqlData(owner.client, `{ invites { edges { node { email acceptedAt } } } }`);
    assert.equal(invites.invites.edges.length, 1);
    assert.notEqual(invites.invites.edges[0].node.acceptedAt, null);
    assert.deepEqual(
      (await gqlData(owner.client, `{ members { edges { node { name email role } } } }`)).members.edges.map((
        e: { node: unknown },
      ) => e.node),
      [
        { name: "User 1", email: owner.email, role: "OWNER" },
        { name: "Nina", email: "new@example.test", role: "AGENT" },
      ],
    );
    const spare = await gqlData(
      owner.client,
      `mutation { createInvite(input: { email: "x@example.test", role: VIEWER }) { invite { id } } }`,
    );
    const spareId = spare.createInvite.invite.id;
    assert.deepEqual(
      await gqlData(owner.client, `mutation($id: ID!) { deleteInvite(id: $id) }`, { id: spareId }),
      {
        deleteInvite: spareId,
      },
    );

    const { createApiToken } = await gqlData(
      owner.client,
      `mutation { createApiToken(input: { label: "CI" }) { token apiToken { id label prefix revokedAt } } }`,
    );
    assert.match(createApiToken.token, /^sbt_/);
    assert.equal(createApiToken.apiToken.prefix, createApiToken.token.slice(0, 10));
    const bot = new Client(anon.app, createApiToken.token, workspaceId);
    assert.deepEqual(await gqlData(bot, `{ viewer { user { id } workspaces { id role } } }`), {
      viewer: { user: null, workspaces: [{ id: workspaceId, role: "MANAGER" }] },
    });
    await gqlData(owner.client, `mutation($id: ID!) { revokeApiToken(id: $id) }`, {
      id: createApiToken.apiToken.id,
    });
    assert.deepEqual(await gqlCodes(bot, `{ agents { edges { cursor } } }`), ["UNAUTHENTICATED"]);
    const tokens = await gqlData(owner.client, `{ apiTokens { edges { node { label revokedAt } } } }`);
    assert.equal(tokens.apiTokens.edges.length, 1);
    assert.notEqual(tokens.apiTokens.edges[0].node.revokedAt, null);

    // An AGENT may not manage members; a MANAGER may not delete the workspace.
    const nina = await seed.member(workspaceId, "AGENT");
    assert.deepEqual(await gqlCodes(nina.client, `{ apiTokens { edges { cursor } } }`), ["FORBIDDEN"]);
    const manager = await seed.member(workspaceId, "MANAGER");
    assert.deepEqual(
      await gqlCodes(manager.client, `mutation($id: ID!) { deleteWorkspace(id: $id) }`, { id: workspaceId }),
      [
        "FORBIDDEN",
      ],
    );

    const { createWorkspace } = await gqlData(
      owner.client,
      `mutation { createWorkspace(input: { name: "Second" }) { id name role } }`,
    );
    assert.deepEqual({ ...createWorkspace, id: undefined }, { id: undefined, name: "Second", role: "OWNER" });
    await gqlData(owner.client.in(undefined), `mutation($id: ID!) { deleteWorkspace(id: $id) }`, {
      id: createWorkspace.id,
    });
    assert.deepEqual((await gqlData(owner.client, `{ workspaces { name } }`)).workspaces, [{ name: "Acme" }]);
  }));

Deno.test("declared types (prompt versions, counts) answer aliases alike in a mutation's answer, a read beside it and the fast path", () =>
  withApp(async ({ seed }) => {
    const { owner } = await seed.workspace();
    const c = owner.client;
    const { createAgent: agent } = await gqlData(c, CREATE_AGENT, { input: { name: "Ana" } });
    const selection = `v: promptVersions(first: 1) { edges { node { text: systemPrompt why: rationale
      ...on PromptVersion { by: authorLabel } } } } n: counts { all: numbers intents }`;
    const { updateAgentPrompt } = await gqlData(
      c,
      `mutation($id: ID!) { updateAgentPrompt(id: $id, input: { systemPrompt: "Hi.", rationale: "r" }) {
        ${selection} } }`,
      { id: agent.id },
    );
    const expected = {
      v: { edges: [{ node: { text: "Hi.", why: "r", by: updateAgentPrompt.v.edges[0].node.by } }] },
      n: { all: 0, intents: 0 },
    };
    assert.deepEqual(updateAgentPrompt, expected);
    assert.equal(typeof expected.v.edges[0].node.by, "string");
    // A read beside a non-read field runs in graphql-js; alone, it is the planner's JSON as it is.
    const beside = await gqlData(c, `query($id: ID!) { a: agent(id: $id) { ${selection} } __typename }`, {
      id: agent.id,
    });
    assert.deepEqual(beside, { a: expected, __typename: "Query" });
    const alone = await gqlData(c, `query($id: ID!) { a: agent(id: $id) { ${selection} } }`, {
      id: agent.id,
    });
    assert.deepEqual(alone, { a: expected });
  }));

Deno.test("the remaining agent, intent and webhook writes behave as their REST twins", () =>
  withApp(async ({ seed }) => {
    const { owner } = await seed.workspace();
    const c = owner.client;
    const { createAgent: agent } = await gqlData(c, CREATE_AGENT, {
      input: { name: "Ana", jobName: "Acme", maxDailyMessages: 5 },
    });

    // replaceAgent is a whole replacement: omitted fields return to null or their defaults.
    const { replaceAgent } = await gqlData(
      c,
      `mutation($id: ID!) { replaceAgent(id: $id, input: { name: "Bia", signMessages: true }) {
        name jobName maxDailyMessages signMessages autoCloseMinutes } }`,
      { id: agent.id },
    );
    assert.deepEqual(replaceAgent, {
      name: "Bia",
      jobName: null,
      maxDailyMessages: null,
      signMessages: true,
      autoCloseMinutes: 60,
    });

    const prompt =
      `mutation($id: ID!, $p: String!) { updateAgentPrompt(id: $id, input: { systemPrompt: $p, rationale: "r" }) {
      promptVersions { edges { node { id systemPrompt } } } } }`;
    await gqlData(c, prompt, { id: agent.id, p: "First." });
    const second = await gqlData(c, prompt, { id: agent.id, p: "Second." });
    const versions = second.updateAgentPrompt.promptVersions.edges.map((e: { node: unknown }) => e.node);
    assert.deepEqual(versions.map((v: { systemPrompt: string }) => v.systemPrompt), ["Second.", "First."]);
    const { revertAgentPrompt } = await gqlData(
      c,
      `mutation($id: ID!, $v: ID!) { revertAgentPrompt(id: $id, versionId: $v) { systemPrompt
        promptVersions(first: 1) { edges { node { revertedFrom rationale } } pageInfo { hasNextPage } } } }`,
      { id: agent.id, v: versions[1].id },
    );
    assert.deepEqual(revertAgentPrompt, {
      systemPrompt: "First.",
      promptVersions: {
        edges: [{
          node: { revertedFrom: versions[1].id, rationale: `Reverted to version ${versions[1].id}` },
        }],
        pageInfo: { hasNextPage: true },
      },
    });

    const { createIntent: intent } = await gqlData(c, CREATE_INTENT, {
      agentId: agent.id,
      input: INTENT_INPUT,
    });
    assert.deepEqual(
      await gqlCodes(c, CREATE_INTENT, { agentId: agent.id, input: { ...INTENT_INPUT, name: "book_visit" } }),
      ["DUPLICATE_INTENT"],
    );
    const { updateIntent } = await gqlData(
      c,
      `mutation($a: ID!, $id: ID!) { updateIntent(agentId: $a, id: $id, input: { name: "Schedule Call", webhookMethod: PUT }) {
        name tag webhookMethod description } }`,
      { a: agent.id, id: intent.id },
    );
    assert.deepEqual(updateIntent, {
      name: "Schedule Call",
      tag: "schedule-call",
      webhookMethod: "PUT",
      description: INTENT_INPUT.description,
    });
    assert.deepEqual(
      await gqlData(c, `mutation($a: ID!, $id: ID!) { deleteIntent(agentId: $a, id: $id) }`, {
        a: agent.id,
        id: intent.id,
      }),
      {
        deleteIntent: intent.id,
      },
    );
    assert.deepEqual(
      await gqlCodes(c, `query($a: ID!, $id: ID!) { intent(agentId: $a, id: $id) { id } }`, {
        a: agent.id,
        id: intent.id,
      }),
      [
        "NOT_FOUND",
      ],
    );

    const { createWebhook } = await gqlData(c, CREATE_WEBHOOK, {
      agentId: agent.id,
      input: { event: "intent.fired", url: HOOK_URL },
    });
    const hookId = createWebhook.webhook.id;
    const { updateWebhook } = await gqlData(
      c,
      `mutation($a: ID!, $id: ID!) { updateWebhook(agentId: $a, id: $id, input: { method: PUT, headers: { Authorization: "Bearer x" } }) {
        event method headers } }`,
      { a: agent.id, id: hookId },
    );
    assert.deepEqual(updateWebhook, {
      event: "intent.fired",
      method: "PUT",
      headers: { Authorization: "Bearer x" },
    });
    assert.deepEqual(
      await gqlCodes(
        c,
        `mutation($a: ID!, $id: ID!) { updateWebhook(agentId: $a, id: $id, input: { event: "nope" }) { id } }`,
        {
          a: agent.id,
          id: hookId,
        },
      ),
      ["VALIDATION_FAILED"],
    );
    const { rotateWebhookSecret } = await gqlData(
      c,
      `mutation($a: ID!, $id: ID!) { rotateWebhookSecret(agentId: $a, id: $id) { signingSecret webhook { id } } }`,
      { a: agent.id, id: hookId },
    );
    assert.match(rotateWebhookSecret.signingSecret, /^whsec_/);
    assert.notEqual(rotateWebhookSecret.signingSecret, createWebhook.signingSecret);
    assert.equal(
      (await gqlData(c, `query($a: ID!, $id: ID!) { webhook(agentId: $a, id: $id) { method } }`, {
        a: agent.id,
        id: hookId,
      })).webhook.method,
      "PUT",
    );
    await gqlData(c, `mutation($a: ID!, $id: ID!) { deleteWebhook(agentId: $a, id: $id) }`, {
      a: agent.id,
      id: hookId,
    });
    assert.deepEqual(
      (await gqlData(c, `query($a: ID!) { webhooks(agentId: $a) { edges { cursor } } }`, { a: agent.id }))
        .webhooks.edges,
      [],
    );

    await gqlData(c, `mutation($id: ID!) { deleteAgent(id: $id) }`, { id: agent.id });
    assert.deepEqual(await gqlCodes(c, `query($id: ID!) { agent(id: $id) { id } }`, { id: agent.id }), [
      "NOT_FOUND",
    ]);
  }));

Deno.test("the agents connection pages forwards and backwards in creation order", () =>
  withApp(async ({ seed }) => {
    const { owner } = await seed.workspace();
    for (const name of ["A", "B", "C"]) await seed.agent(owner.client, { name });
    const page = `query($first: Int, $after: String, $last: Int, $before: String) {
      agents(first: $first, after: $after, last: $last, before: $before) {
        edges { node { name } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    const names = (d: { agents: { edges: { node: { name: string } }[] } }) =>
      d.agents.edges.map((e) => e.node.name);
    const first = await gqlData(owner.client, page, { first: 2 });
    assert.deepEqual(names(first), ["A", "B"]);
    assert.equal(first.agents.pageInfo.hasNextPage, true);
    const rest = await gqlData(owner.client, page, { first: 2, after: first.agents.pageInfo.endCursor });
    assert.deepEqual(names(rest), ["C"]);
    assert.equal(rest.agents.pageInfo.hasNextPage, false);
    const back = await gqlData(owner.client, page, { last: 2, before: rest.agents.pageInfo.startCursor });
    assert.deepEqual(names(back), ["A", "B"]);
    assert.deepEqual(await gqlCodes(owner.client, page, { first: 1, after: "not-a-cursor" }), ["BAD_CURSOR"]);
  }));

Deno.test("a planned read answers as each accepted media type asks, multi-byte text and presented values intact", () =>
  withApp(async ({ seed }) => {
    const { owner } = await seed.workspace("Acme");
    const name = 'Atendimento São Paulo 🚀 "aspas" \\ barra';
    const agent = await gqlData(owner.client, CREATE_AGENT, { input: { name } });
    await gqlData(owner.client, CREATE_WEBHOOK, {
      agentId: agent.createAgent.id,
      input: { event: "message.received", url: HOOK_URL, headers: { "x-api-key": "chave-é-secreta" } },
    });
    const query =
      `{ agents(first: 5) { edges { node { name webhooks { edges { node { url headers } } } } } } }`;
    const expected = {
      agents: {
        edges: [{
          node: {
            name,
            webhooks: { edges: [{ node: { url: HOOK_URL, headers: { "x-api-key": "chave-é-secreta" } } }] },
          },
        }],
      },
    };
    const ask = (accept?: string) =>
      owner.client.post("/graphql", { query }, accept === undefined ? {} : { accept });

    for (const accept of [undefined, "*/*", "application/json", "application/graphql-response+json"]) {
      const res = await ask(accept);
      assert.equal(res.status, 200, `${accept}: ${JSON.stringify(res.body)}`);
      assert.match(
        res.headers.get("content-type") ?? "",
        accept?.includes("graphql-response") ? /^application\/graphql-response\+json/ : /^application\/json/,
      );
      assert.deepEqual(res.body, { data: expected }, String(accept));
    }
    // A stream asked for: the same answer as one server-sent event, as text.
    const sse = await ask("text/event-stream");
    assert.equal(sse.status, 200);
    assert.match(sse.headers.get("content-type") ?? "", /^text\/event-stream/);
    const event = String(sse.body).split("\n").find((line) => line.startsWith("data: {"));
    assert.deepEqual(JSON.parse(event!.slice("data: ".length)), { data: expected });
  }));

Deno.test("replaceAgent's input has only the fields it writes: what REST's PUT tolerates from a GET is not offered", async () => {
  const { buildSchema, GraphQLInputObjectType } = await import("graphql");
  const input = buildSchema(printedSchema()).getType("ReplaceAgentInput");
  assert.ok(input instanceof GraphQLInputObjectType);
  const fields = Object.keys(input.getFields());
  for (const managed of ["id", "workspaceId", "status", "systemPrompt", "createdAt", "updatedAt", "_count"]) {
    assert.ok(!fields.includes(managed), `${managed} is not an input of replaceAgent`);
  }
  assert.ok(fields.includes("name") && fields.includes("trainingContext"));
});
