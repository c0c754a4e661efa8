/**
 * A stored value an actor sees through a presenter (webhook URLs and headers, intent URLs, approval
 * snapshots) is presented on every path: the planner's answers (tests/roles_graphql_test.ts), and
 * a Prisma row resolved by the declared type's own resolvers (plugin-prisma's path), which shows
 * what REST shows to each role.
 */
import assert from "node:assert/strict";
import type { GraphQLObjectType, GraphQLResolveInfo } from "graphql";
import { startTestApp } from "./_helpers/app.ts";
import { actorOf } from "./_helpers/approvals.ts";
import { schema } from "../src/graphql/schema.ts";
import type { ActorContext } from "../src/context.ts";

/** The value the declared type's resolver gives for `row` (not a planned answer) to `actor`. */
async function resolved(typeName: string, field: string, row: object, actor: ActorContext): Promise<unknown> {
  const type = schema.getType(typeName) as GraphQLObjectType;
  const info = { path: { key: field, prev: undefined, typename: typeName } } as GraphQLResolveInfo;
  return await type.getFields()[field].resolve!(row, {}, { actor: () => Promise.resolve(actor) }, info);
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
    const members = {
      OWNER: owner,
      AGENT: await ta.seed.member(workspaceId, "AGENT"),
      VIEWER: await ta.seed.member(workspaceId, "VIEWER"),
    };
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
