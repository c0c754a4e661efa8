/**
 * Channels over REST and GraphQL (docs/behaviour.md "Channels and conversations"): create WHATSAPP and API
 * channels, list, patch label and config keys, delete; roles (agent:write to change,
 * workspace:read to list); another workspace's ids answer 404; secrets are never answered;
 * phoneNumberId is unique (409 DUPLICATE); `_count.numbers` counts channels; bad input changes nothing.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus } from "./_helpers/problem.ts";

const CHANNEL_KEYS = [
  "agentId",
  "businessAccountId",
  "createdAt",
  "id",
  "inboundUrl",
  "label",
  "phoneNumberId",
  "type",
  "updatedAt",
  "verifiedAt",
];
const SECRETS = {
  accessToken: "EAAG-access-token-xyz",
  appSecret: "app-secret-xyz",
  verifyToken: "verify-xyz",
};

Deno.test("channels: CRUD, roles, isolation, write-only secrets", async (t) => {
  const ta = await startTestApp();
  const db = ta.app.deps.db;
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    const c = owner.client;
    const agent = await ta.seed.agent(c);
    const base = `/api/agents/${agent.id}/channels`;
    let wa: Record<string, string> = {};
    let api: Record<string, string> = {};

    await t.step("create WHATSAPP: 201, the view without secrets, inboundUrl on PUBLIC_URL", async () => {
      const res = await c.post(base, {
        type: "WHATSAPP",
        label: "Sales",
        config: { phoneNumberId: "1065403522", ...SECRETS },
      });
      assertStatus(res, 201);
      assert.deepEqual(Object.keys(res.body).sort(), CHANNEL_KEYS);
      assert.equal(res.body.type, "WHATSAPP");
      assert.equal(res.body.phoneNumberId, "1065403522");
      assert.equal(res.body.businessAccountId, null);
      assert.equal(res.body.inboundUrl, `http://switchboard.test/webhooks/whatsapp/${res.body.id}`);
      for (const s of Object.values(SECRETS)) assert.ok(!JSON.stringify(res.body).includes(s));
      wa = res.body;
      const row = await db.channel.findUniqueOrThrow({ where: { id: wa.id } });
      assert.match(row.credentials!, /^sb1:/);
      assert.deepEqual(JSON.parse(ta.app.deps.secrets.open(row.credentials!)), SECRETS);
    });

    await t.step("create API: 201 without config, inboundUrl is the messages path", async () => {
      const res = await c.post(base, { type: "API", label: "App" });
      assertStatus(res, 201);
      assert.equal(res.body.type, "API");
      assert.equal(res.body.phoneNumberId, null);
      assert.equal(res.body.inboundUrl, `http://switchboard.test/api/channels/${res.body.id}/messages`);
      assert.equal((await db.channel.findUniqueOrThrow({ where: { id: res.body.id } })).credentials, null);
      api = res.body;
    });

    await t.step("bad input: 400 with the field, nothing stored", async () => {
      const before = await db.channel.count();
      assertProblem(await c.post(base, { type: "WHATSAPP", label: "x" }), 400, "VALIDATION_FAILED", [
        "config",
      ]);
      assertProblem(
        await c.post(base, { type: "API", label: "x", config: { phoneNumberId: "1", ...SECRETS } }),
        400,
        "VALIDATION_FAILED",
        ["config"],
      );
      assertProblem(await c.post(base, { type: "SMS", label: "x" }), 400, "VALIDATION_FAILED", ["type"]);
      assertProblem(
        await c.post(base, { type: "WHATSAPP", label: "x", config: { phoneNumberId: "abc", ...SECRETS } }),
        400,
        "VALIDATION_FAILED",
        ["config.phoneNumberId"],
      );
      assertProblem(
        await c.post(base, {
          type: "WHATSAPP",
          label: "x",
          config: { phoneNumberId: "1", ...SECRETS, accessToken: "" },
        }),
        400,
        "VALIDATION_FAILED",
        ["config.accessToken"],
      );
      assertProblem(
        await c.patch(`${base}/${api.id}`, { config: { accessToken: "t" } }),
        400,
        "VALIDATION_FAILED",
        [
          "config",
        ],
      );
      assert.equal(await db.channel.count(), before);
    });

    await t.step("phoneNumberId is unique: 409 DUPLICATE, also from another workspace", async () => {
      const res = await c.post(base, {
        type: "WHATSAPP",
        label: "Again",
        config: { phoneNumberId: "1065403522", ...SECRETS },
      });
      assertProblem(res, 409, "DUPLICATE");
      assert.match(res.body.detail, /phoneNumberId/);
      const other = await ta.seed.workspace("Other");
      const otherAgent = await ta.seed.agent(other.owner.client);
      assertProblem(
        await other.owner.client.post(`/api/agents/${otherAgent.id}/channels`, {
          type: "WHATSAPP",
          label: "Theirs",
          config: { phoneNumberId: "1065403522", ...SECRETS },
        }),
        409,
        "DUPLICATE",
      );
    });

    await t.step("list: oldest first, never secrets; _count.numbers counts them", async () => {
      const res = await c.get(base);
      assertStatus(res, 200);
      assert.deepEqual(res.body.data.map((ch: { id: string }) => ch.id), [wa.id, api.id]);
      assert.equal(res.body.nextCursor, null);
      assert.deepEqual(Object.keys(res.body.data[0]).sort(), CHANNEL_KEYS);
      const agents = await c.get("/api/agents");
      assert.equal(agents.body.data[0]._count.numbers, 2);
    });

    await t.step("patch: label and one config key; the other secrets are kept", async () => {
      const res = await c.patch(`${base}/${wa.id}`, {
        label: "Support",
        config: { accessToken: "new-token-1" },
      });
      assertStatus(res, 200);
      assert.equal(res.body.label, "Support");
      assert.equal(res.body.phoneNumberId, "1065403522");
      assert.ok(!JSON.stringify(res.body).includes("new-token-1"));
      const row = await db.channel.findUniqueOrThrow({ where: { id: wa.id } });
      assert.deepEqual(JSON.parse(ta.app.deps.secrets.open(row.credentials!)), {
        ...SECRETS,
        accessToken: "new-token-1",
      });
      const phone = await c.patch(`${base}/${wa.id}`, { config: { phoneNumberId: "2000" } });
      assertStatus(phone, 200);
      assert.equal(phone.body.phoneNumberId, "2000");
      assert.equal(phone.body.label, "Support");
    });

    await t.step("GraphQL: the same list and writes, no secret field exists", async () => {
      const list = await c.graphql(
        `query($a: ID!) { channels(agentId: $a) { edges { node { id type label inboundUrl } } } }`,
        { a: agent.id },
      );
      assert.equal(list.body.errors, undefined, JSON.stringify(list.body.errors));
      assert.deepEqual(list.body.data.channels.edges.map((e: { node: { id: string } }) => e.node.id), [
        wa.id,
        api.id,
      ]);
      const nested = await c.graphql(
        `query($a: ID!) { agent(id: $a) { channels(first: 1) { edges { node { id } } } } }`,
        { a: agent.id },
      );
      assert.equal(nested.body.data.agent.channels.edges[0].node.id, wa.id);
      const created = await c.graphql(
        `mutation($a: ID!) { createChannel(agentId: $a, input: { type: API, label: "Gql" }) { id type inboundUrl } }`,
        { a: agent.id },
      );
      assert.equal(created.body.errors, undefined, JSON.stringify(created.body.errors));
      assert.equal(created.body.data.createChannel.type, "API");
      const secretField = await c.graphql(
        `query($a: ID!) { channels(agentId: $a) { edges { node { credentials } } } }`,
        {
          a: agent.id,
        },
      );
      assert.equal(secretField.status, 400);
      const deleted = await c.graphql(`mutation($a: ID!, $id: ID!) { deleteChannel(agentId: $a, id: $id) }`, {
        a: agent.id,
        id: created.body.data.createChannel.id,
      });
      assert.equal(deleted.body.data.deleteChannel, created.body.data.createChannel.id);
    });

    await t.step("roles: MANAGER writes; AGENT and VIEWER read and get 403 on writes", async () => {
      const manager = await ta.seed.member(workspaceId, "MANAGER");
      const made = await manager.client.post(base, { type: "API", label: "By manager" });
      assertStatus(made, 201);
      for (const role of ["AGENT", "VIEWER"] as const) {
        const m = await ta.seed.member(workspaceId, role);
        assertStatus(await m.client.get(base), 200);
        assertProblem(await m.client.post(base, { type: "API", label: "x" }), 403, "FORBIDDEN");
        assertProblem(await m.client.patch(`${base}/${made.body.id}`, { label: "x" }), 403, "FORBIDDEN");
        assertProblem(await m.client.delete(`${base}/${made.body.id}`), 403, "FORBIDDEN");
      }
      assertStatus(await manager.client.delete(`${base}/${made.body.id}`), 204);
    });

    await t.step("isolation: another workspace's owner gets 404 for every path", async () => {
      const other = await ta.seed.workspace("Intruder");
      const o = other.owner.client;
      assertProblem(await o.get(base), 404, "NOT_FOUND");
      assertProblem(await o.post(base, { type: "API", label: "x" }), 404, "NOT_FOUND");
      assertProblem(await o.patch(`${base}/${wa.id}`, { label: "x" }), 404, "NOT_FOUND");
      assertProblem(await o.delete(`${base}/${wa.id}`), 404, "NOT_FOUND");
      const theirAgent = await ta.seed.agent(o);
      assertProblem(
        await o.patch(`/api/agents/${theirAgent.id}/channels/${wa.id}`, { label: "x" }),
        404,
        "NOT_FOUND",
      );
      assert.equal((await db.channel.findUniqueOrThrow({ where: { id: wa.id } })).label, "Support");
    });

    await t.step("delete: 204, then 404; the list no longer has it", async () => {
      assertStatus(await c.delete(`${base}/${api.id}`), 204);
      assertProblem(await c.delete(`${base}/${api.id}`), 404, "NOT_FOUND");
      const list = await c.get(base);
      assert.deepEqual(list.body.data.map((ch: { id: string }) => ch.id), [wa.id]);
    });
  } finally {
    await ta.close();
  }
});
