/**
 * One declaration, two executors: each type declared with Pothos (src/graphql/types/) answers a row
 * through the read planner's SQL, and a Prisma row through its own resolvers (plugin-prisma's path).
 * For a row of every declared type with an id, every field (relations aside) has the same value
 * both ways, for a role that sees stored values and one that sees them masked.
 */
import assert from "node:assert/strict";
import type { GraphQLObjectType, GraphQLResolveInfo } from "graphql";
import { defaultFieldResolver, isLeafType, isNonNullType, Kind } from "graphql";
import { startTestApp } from "./_helpers/app.ts";
import { actorOf, newApproval } from "./_helpers/approvals.ts";
import { customerMessage, seedChannel } from "./_helpers/conversations.ts";
import { HOOK, INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { buildSchema } from "../src/graphql/schema.ts";
import { restRow } from "../src/reads/rest.ts";
import { getDatamodel } from "../src/generated/pothos-types.ts";
import type { ActorContext } from "../src/context.ts";

const { schema, views } = buildSchema();

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** `b` merged into `a` (Prisma selects). */
function merge(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isObj(out[k]) && isObj(v) ? merge(out[k] as Obj, v) : v;
  return out;
}

/** The Prisma select of a declared type: its model's columns and what its fields' own selects add. */
function selectOf(type: GraphQLObjectType, model: string): Obj {
  let select: Obj = Object.fromEntries(
    getDatamodel().datamodel.models[model].fields.filter((f) => f.kind !== "object").map((
      f,
    ) => [f.name, true]),
  );
  for (const field of Object.values(type.getFields())) {
    const extra = field.extensions.pothosPrismaSelect;
    if (isObj(extra)) select = merge(select, extra);
  }
  return select;
}

/** A field's value for `row` through the type's resolvers, serialized as graphql-js would. */
async function resolvedField(type: GraphQLObjectType, name: string, row: Obj, ctx: object): Promise<unknown> {
  const field = type.getFields()[name];
  // The field alone, as a document selecting it would reach it (plugin-prisma reads the node when
  // it loads what a field's own select needs for a row that lacks it).
  const info = {
    fieldName: name,
    fieldNodes: [{ kind: Kind.FIELD, name: { kind: Kind.NAME, value: name } }],
    parentType: type,
    returnType: field.type,
    path: { key: name, prev: undefined, typename: type.name },
    schema,
    fragments: {},
    variableValues: {},
  } as unknown as GraphQLResolveInfo;
  let value: unknown;
  try {
    value = await (field.resolve ?? defaultFieldResolver)(row, {}, ctx, info);
  } catch (error) {
    throw new Error(`${type.name}.${name}: ${error}`);
  }
  const named = isNonNullType(field.type) ? field.type.ofType : field.type;
  if (value === null || value === undefined) return null;
  if (isLeafType(named)) return named.serialize(value);
  return JSON.parse(JSON.stringify(value));
}

Deno.test("every declared type answers a Prisma row as the planner answers the row", async () => {
  const ta = await startTestApp();
  const { app, seed } = ta;
  try {
    const { workspaceId, owner } = await seed.workspace();
    const viewer = await seed.member(workspaceId, "VIEWER");
    const o = owner.client;
    const db = app.deps.db;
    const agent = await seed.agent(o, { trainingContext: "Be kind." });
    const intent = (await o.post(`/api/agents/${agent.id}/intents`, {
      ...INTENT_FIELDS,
      name: "Book visit",
      requiredFields: [{ name: "date", type: "string", description: "When." }],
      webhookUrl: "https://example.com/i?token=s3cr3t",
    })).body;
    const hook = (await o.post(`/api/agents/${agent.id}/webhooks`, {
      ...HOOK,
      url: "https://example.com/w?token=s3cr3t",
    })).body;
    const delivery = (await o.post(`/api/agents/${agent.id}/webhooks/${hook.id}/test`, {})).body;
    const invite = (await o.post(`/api/workspaces/${workspaceId}/invites`, {
      email: "new@example.test",
      role: "AGENT",
    })).body;
    const token = (await o.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "CI" })).body;
    const channel = await seedChannel(app, workspaceId, agent.id, "API");
    const { messageId, conversationId } = await customerMessage(app, {
      workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content: "Hello",
    });
    const conversation = await db.conversation.findUniqueOrThrow({ where: { id: conversationId } });
    const ownerCtx = await actorOf(app, owner.token, workspaceId);
    const approvalId = await newApproval(ownerCtx, agent.id);
    const supervisor = await db.supervisorConversation.create({ data: { workspaceId } });
    const said = await db.supervisorMessage.create({
      data: { conversationId: supervisor.id, role: "USER", content: "Hi", authorUserId: owner.userId },
    });
    const prompt = await o.put(`/api/agents/${agent.id}/prompt`, {
      systemPrompt: "Be brief.",
      rationale: "r",
    });
    assert.equal(prompt.status, 200, JSON.stringify(prompt.body));
    const version = await db.promptVersion.findFirstOrThrow({ where: { agentId: agent.id } });

    // Outbound messages with each shape of `error` (errorMessage is computed in SQL and from the row).
    const errors = [
      {
        status: 400,
        code: 131026,
        message: "(#131026) Message undeliverable: Receiver is incapable",
        retryable: false,
      },
      {
        errors: [{
          code: 131047,
          title: "Re-engagement message",
          message: "Re-engagement message",
          details: "24h",
        }],
      },
      { errors: [{ code: null, title: "Title only", message: "", details: null }] },
      { errors: [{ title: "", message: null }] },
      { errors: [] },
      { errors: "not a list", message: "odd" },
      { message: 7 },
      "a string",
      [1, 2],
    ];
    const failed = [];
    for (const error of errors) {
      failed.push(
        await db.message.create({
          data: {
            conversationId,
            channelId: channel.id,
            direction: "OUTBOUND",
            senderKind: "AI",
            content: "x",
            status: "FAILED",
            error,
          },
        }),
      );
    }
    const savedReply =
      (await o.post("/api/saved-replies", { shortcut: "thanks", content: "Obrigado!" })).body;
    for (const [what, created] of Object.entries({ intent, hook, delivery, invite, token })) {
      assert.ok(typeof created.id === "string", `${what}: ${JSON.stringify(created)}`);
    }
    const rows: [type: string, model: string, id: string, where: Obj][] = [
      ["Agent", "Agent", agent.id, { id: agent.id }],
      ["PromptVersion", "PromptVersion", version.id, { id: version.id }],
      ["Intent", "Intent", intent.id, { id: intent.id }],
      ["Channel", "Channel", channel.id, { id: channel.id }],
      ["Webhook", "EventWebhook", hook.id, { id: hook.id }],
      ["WebhookDelivery", "WebhookDelivery", delivery.id, { id: delivery.id }],
      ["Invite", "Invite", invite.id, { id: invite.id }],
      ["ApiToken", "ApiToken", token.id, { id: token.id }],
      ["User", "User", owner.userId, { id: owner.userId }],
      ["Member", "Membership", owner.userId, { userId_workspaceId: { userId: owner.userId, workspaceId } }],
      ["Contact", "Contact", conversation.contactId, { id: conversation.contactId }],
      ["Conversation", "Conversation", conversationId, { id: conversationId }],
      ["Message", "Message", messageId, { id: messageId }],
      ...failed.map((m): [string, string, string, Obj] => ["Message", "Message", m.id, { id: m.id }]),
      ["SavedReply", "SavedReply", savedReply.id, { id: savedReply.id }],
      ["Approval", "PendingApproval", approvalId, { id: approvalId }],
      ["SupervisorConversation", "SupervisorConversation", supervisor.id, { id: supervisor.id }],
      ["SupervisorMessage", "SupervisorMessage", said.id, { id: said.id }],
    ];
    for (const member of [owner, viewer]) {
      const actor: ActorContext = await actorOf(app, member.token, workspaceId);
      const ctx = { deps: app.deps, actor: () => Promise.resolve(actor) };
      for (const [typeName, model, id, where] of rows) {
        const type = schema.getType(typeName) as GraphQLObjectType;
        const view = views.get(typeName);
        const planned = JSON.parse(await restRow(actor, view, id)) as Obj;
        const delegate = (db as unknown as Record<string, { findUniqueOrThrow(q: Obj): Promise<Obj> }>)[
          model.charAt(0).toLowerCase() + model.slice(1)
        ];
        const row = await delegate.findUniqueOrThrow({ where, select: selectOf(type, model) });
        for (const name of Object.keys(view.fields)) {
          assert.deepEqual(
            await resolvedField(type, name, row, ctx),
            planned[name],
            `${typeName}.${name} (${actor.actor.role})`,
          );
        }
      }
    }
  } finally {
    await ta.close();
  }
});

Deno.test("a write answers every field of its type's row as the row's read shows it, so a new field reaches REST's write answers", async () => {
  // No workers: nothing changes a row between its write and its read (a test delivery's first
  // attempt would be made and recorded in between).
  const ta = await startTestApp({}, { workers: false });
  const { app, seed } = ta;
  try {
    const { workspaceId, owner } = await seed.workspace();
    const o = owner.client;
    const viewer = await seed.member(workspaceId, "VIEWER");
    /** `write`'s answer (less `extras`) equals the row `read` shows, and holds every field of `type`. */
    const same = (type: string, write: { status: number; body: Obj }, read: Obj, extras: string[] = []) => {
      assert.ok(write.status < 300, `${type}: ${write.status} ${JSON.stringify(write.body)}`);
      const shown = Object.fromEntries(Object.entries(write.body).filter(([k]) => !extras.includes(k)));
      assert.deepEqual(shown, read, type);
      for (const name of Object.keys(views.get(type).fields)) assert.ok(name in shown, `${type}.${name}`);
      for (const extra of extras) assert.ok(extra in write.body, `${type}: ${extra}`);
    };
    const one = async (path: string) => {
      const res = await o.get(path);
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
      return res.body as Obj;
    };
    const inList = async (path: string, id: string) => {
      const rows = (await one(path)).data as Obj[];
      const row = rows.find((r) => r.id === id);
      assert.ok(row, `${path} lists ${id}`);
      return row;
    };

    const created = await o.post("/api/agents", {
      name: "Ana",
      jobName: "Acme",
      trainingContext: "Be kind.",
    });
    const agentId = created.body.id as string;
    same("Agent", created, await one(`/api/agents/${agentId}`));
    same(
      "Agent",
      await o.patch(`/api/agents/${agentId}/status`, { status: "PAUSED" }),
      await one(`/api/agents/${agentId}`),
    );

    const intent = await o.post(`/api/agents/${agentId}/intents`, {
      ...INTENT_FIELDS,
      name: "Book visit",
      webhookUrl: "https://example.com/i?token=s3cr3t",
    });
    same("Intent", intent, await one(`/api/agents/${agentId}/intents/${intent.body.id}`));

    const hook = await o.post(`/api/agents/${agentId}/webhooks`, {
      ...HOOK,
      url: "https://example.com/w?token=s3cr3t",
    });
    const hookPath = `/api/agents/${agentId}/webhooks/${hook.body.id}`;
    same("Webhook", hook, await one(hookPath), ["signingSecret"]);
    same("Webhook", await o.post(`${hookPath}/rotate-secret`, {}), await one(hookPath), ["signingSecret"]);
    const delivery = await o.post(`${hookPath}/test`, {});
    same("WebhookDelivery", delivery, await one(`${hookPath}/deliveries/${delivery.body.id}`));

    const channel = await o.post(`/api/agents/${agentId}/channels`, { type: "API", label: "App" });
    same("Channel", channel, await inList(`/api/agents/${agentId}/channels`, channel.body.id as string));
    const message = await o.post(`/api/channels/${channel.body.id}/messages`, {
      contact: { externalId: "c-1", name: "Caio" },
      type: "TEXT",
      content: "Hello",
    });
    same(
      "Message",
      message,
      await inList(`/api/conversations/${message.body.conversationId}/messages`, message.body.id as string),
    );

    const saved = await o.post("/api/saved-replies", { shortcut: "thanks", content: "Obrigado!" });
    same("SavedReply", saved, await one(`/api/saved-replies/${saved.body.id}`));
    same(
      "SavedReply",
      await o.patch(`/api/saved-replies/${saved.body.id}`, { content: "Valeu!" }),
      await one(`/api/saved-replies/${saved.body.id}`),
    );
    // A failed reply sent again: the new message as its conversation's messages show it.
    const failed = await app.deps.db.message.create({
      data: {
        conversationId: message.body.conversationId,
        channelId: channel.body.id as string,
        direction: "OUTBOUND",
        senderKind: "AI",
        content: "Oi!",
        status: "FAILED",
      },
    });
    const resent = await o.post(`/api/messages/${failed.id}/resend`);
    same(
      "Message",
      resent,
      await inList(`/api/conversations/${message.body.conversationId}/messages`, resent.body.id as string),
    );

    const members = `/api/workspaces/${workspaceId}/members`;
    same(
      "Member",
      await o.patch(`${members}/${viewer.userId}`, { role: "AGENT" }),
      await inList(members, viewer.userId),
    );
    const invite = await o.post(`/api/workspaces/${workspaceId}/invites`, {
      email: "new@example.test",
      role: "AGENT",
    });
    same("Invite", invite, await inList(`/api/workspaces/${workspaceId}/invites`, invite.body.id as string), [
      "inviteUrl",
    ]);
    const token = await o.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "CI" });
    same(
      "ApiToken",
      token,
      await inList(`/api/workspaces/${workspaceId}/api-tokens`, token.body.id as string),
      [
        "token",
      ],
    );

    const approvalId = await newApproval(await actorOf(app, owner.token, workspaceId), agentId);
    same(
      "Approval",
      await o.post(`/api/approvals/${approvalId}/reject`),
      await one(`/api/approvals/${approvalId}`),
    );
  } finally {
    await ta.close();
  }
});
