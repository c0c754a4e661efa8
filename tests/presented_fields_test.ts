/**
 * A stored value an actor sees through a presenter (webhook URLs and headers, intent URLs, approval
 * snapshots) is presented on every path: the planner's answers (tests/roles_test.ts), and
 * a Prisma row resolved by the declared type's own resolvers (plugin-prisma's path), which shows
 * what REST shows to each role.
 */
import { sql } from "../src/shared/sql_fragment.ts";
import assert from "node:assert/strict";
import type { GraphQLObjectType, GraphQLResolveInfo } from "graphql";
import { startTestApp, type TestApp } from "./_helpers/app.ts";
import { actorOf } from "./_helpers/approvals.ts";
import { buildSchema } from "../src/graphql/schema.ts";
import type { ActorContext } from "../src/context.ts";
import fc from "fast-check";
import { presentUrl } from "../src/webhooks/views.ts";
import { sealUrlSecrets } from "../src/shared/url_secrets.ts";

const { schema } = buildSchema();

/** The value the declared type's resolver gives for `row` (not a planned answer) to `actor`. */
async function resolved(typeName: string, field: string, row: object, actor: ActorContext): Promise<unknown> {
  const type = schema.getType(typeName) as GraphQLObjectType;
  const info = { path: { key: field, prev: undefined, typename: typeName } } as GraphQLResolveInfo;
  return await type.getFields()[field].resolve!(row, {}, { actor: () => Promise.resolve(actor) }, info);
}

/** The workspace's owner and a new AGENT and VIEWER: one role that sees secrets, two that do not. */
async function ownerAgentViewer<M>(ta: TestApp, workspaceId: string, owner: M) {
  return {
    OWNER: owner,
    AGENT: await ta.seed.member(workspaceId, "AGENT"),
    VIEWER: await ta.seed.member(workspaceId, "VIEWER"),
  };
}

Deno.test("a Prisma row's webhook URL, headers and intent URL are masked for AGENT and VIEWER, as REST shows them", async () => {
  const ta = await startTestApp();
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    const agentId = (await ta.seed.agent(owner.client)).id;
    const secretUrl = "https://example.com/hook?token=s3cr3t&page=2";
    const hookId = (await owner.client.post(`/api/agents/${agentId}/webhooks`, {
      event: "message.sent",
      url: secretUrl,
      headers: { "X-Key": "hunter2" },
    })).body.id;
    const intentId = (await owner.client.post(`/api/agents/${agentId}/intents`, {
      name: "Masked",
      description: "d",
      triggerOnTypes: ["TEXT"],
      requiredFields: [],
      webhookUrl: secretUrl,
    })).body.id;
    const db = ta.app.deps.db;
    const hook = await db.eventWebhook.findUniqueOrThrow({ where: { id: hookId } });
    const intent = await db.intent.findUniqueOrThrow({ where: { id: intentId } });
    const members = await ownerAgentViewer(ta, workspaceId, owner);
    for (const [role, member] of Object.entries(members)) {
      const actor = await actorOf(ta.app, member.token, workspaceId);
      const rest = (await member.client.get(`/api/agents/${agentId}/webhooks/${hookId}`)).body;
      const restIntent = (await member.client.get(`/api/agents/${agentId}/intents/${intentId}`)).body;
      assert.equal(await resolved("Webhook", "url", hook, actor), rest.url, role);
      assert.deepEqual(await resolved("Webhook", "headers", hook, actor), rest.headers, role);
      assert.equal(await resolved("Intent", "webhookUrl", intent, actor), restIntent.webhookUrl, role);
      if (role === "OWNER") {
        assert.equal(rest.url, secretUrl);
        assert.deepEqual(rest.headers, { "X-Key": "hunter2" });
      } else {
        assert.notEqual(rest.url, secretUrl, role);
        assert.notDeepEqual(rest.headers, { "X-Key": "hunter2" }, role);
      }
    }
  } finally {
    await ta.close();
  }
});

Deno.test("the planner presents only the URLs a presenter could change, and answers each role as presenting every URL would", async () => {
  const ta = await startTestApp();
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    const agentId = (await ta.seed.agent(owner.client)).id;
    const urls = [
      "https://example.com/hook",
      "https://example.com/hook?page=2&source=crm",
      "https://example.com/hook?token=s3cr3t&page=2",
      "https://example.com/hook?api_key=k&sig=s#frag",
    ];
    const ids: string[] = [];
    for (const url of urls) {
      const res = await owner.client.post(`/api/agents/${agentId}/webhooks`, { event: "message.sent", url });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      ids.push(res.body.id);
    }
    const db = ta.app.deps.db;
    const members = await ownerAgentViewer(ta, workspaceId, owner);
    for (const [role, member] of Object.entries(members)) {
      const actor = await actorOf(ta.app, member.token, workspaceId);
      const listed = (await member.client.get(`/api/agents/${agentId}/webhooks?limit=100`)).body.data;
      const graphql = (await member.client.graphql(
        `query($a: ID!) { webhooks(agentId: $a, first: 100) { edges { node { id url } } } }`,
        { a: agentId },
      )).body.data.webhooks.edges.map((e: { node: unknown }) => e.node);
      for (const id of ids) {
        const stored = (await db.eventWebhook.findUniqueOrThrow({ where: { id } })).url;
        const expected = presentUrl.apply(actor, stored);
        assert.equal(listed.find((w: { id: string }) => w.id === id).url, expected, `${role} REST ${stored}`);
        assert.equal(
          graphql.find((w: { id: string }) => w.id === id).url,
          expected,
          `${role} GraphQL ${stored}`,
        );
      }
    }

    // Wherever the presenter changes a URL, its SQL condition holds (any URL, each role).
    const actors = await Promise.all(
      Object.values(members).map((m) => actorOf(ta.app, m.token, workspaceId)),
    );
    const stored = (url: string) => sealUrlSecrets(ta.app.deps.secrets, url);
    const urlLike = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.tuple(
        fc.webUrl(),
        fc.array(fc.tuple(fc.constantFrom("token", "page", "api_key", "x", "Auth", "sig"), fc.string()), {
          maxLength: 3,
        }),
      ).map(([base, params]) =>
        params.length ? `${base}?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}` : base
      ),
      fc.string(),
    );
    await fc.assert(
      fc.asyncProperty(urlLike, async (url) => {
        for (const actor of actors) {
          const value = stored(url);
          if (presentUrl.apply(actor, value) === value) continue;
          const [row] = await db.$queryRawUnsafe<{ may: boolean }[]>(
            `SELECT ${presentUrl.mayChange!(actor, sql`$1::text`).text} AS may`,
            value,
          );
          assert.equal(row.may, true, `${actor.actor.role}: ${value}`);
        }
      }),
      { numRuns: 150 },
    );
  } finally {
    await ta.close();
  }
});
