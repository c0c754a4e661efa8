/**
 * The role table (which role may call what) over every REST endpoint built so far, for OWNER, MANAGER,
 * AGENT, VIEWER and an API token (which acts as MANAGER). Allowed calls answer their success
 * status; refused ones answer 403 FORBIDDEN and change nothing in the database.
 */
import assert from "node:assert/strict";
import { Client, type Reply, startTestApp } from "./_helpers/app.ts";
import { assertProblem, snapshot } from "./_helpers/problem.ts";
import {
  EVERYONE,
  OWNER_ONLY,
  PEOPLE,
  seedRoleCast,
  SUPERVISORS,
  type Who,
  WRITERS,
} from "./_helpers/roles.ts";
import { startModelServer } from "./_helpers/conversations.ts";
import { HOOK, INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { actorOf, APPROVAL_DECIDERS, APPROVAL_READERS, newApproval } from "./_helpers/approvals.ts";

interface Ids {
  workspaceId: string;
  agentId: string;
  intentId: string;
  webhookId: string;
  versionId: string;
  inviteId: string;
  tokenId: string;
  /** Set when the row made a workspace of its own: the API token of that workspace. */
  token?: string;
  /** A PENDING approval (the decision rows make their own). */
  approvalId?: string;
}

interface Row {
  name: string;
  allowed: Who[];
  ok: number;
  /** Reads leave the database as it was, for everyone. */
  read?: boolean;
  /** Fresh ids for this call (for deletes and other one-shot calls). */
  setup?: (ids: Ids) => Promise<Ids>;
  call: (c: Client, ids: Ids) => Promise<Reply>;
}

Deno.test("roles", async (t) => {
  const model = startModelServer(() => ({ content: "ok" }));
  const ta = await startTestApp({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseUrl });
  const { app, seed } = ta;
  const db = app.deps.db;
  try {
    const { workspaceId, owner, users, clientOf } = await seedRoleCast(app, seed, "Roles");
    const { MANAGER: manager, AGENT: agentUser, VIEWER: viewer } = users;
    const o = owner.client;

    let n = 0;
    const newAgent = async () => (await o.post("/api/agents", { name: `Agent ${++n}` })).body.id as string;
    const newIntent = async (agentId: string) =>
      (await o.post(`/api/agents/${agentId}/intents`, { name: `Intent ${++n}`, ...INTENT_FIELDS })).body
        .id as string;
    const newWebhook = async (agentId: string) =>
      (await o.post(`/api/agents/${agentId}/webhooks`, HOOK)).body.id as string;
    const newVersion = async (agentId: string) => {
      await o.put(`/api/agents/${agentId}/prompt`, { systemPrompt: `Prompt ${++n}`, rationale: "r" });
      return (await o.get(`/api/agents/${agentId}/prompt-versions?limit=1`)).body.data[0].id as string;
    };

    const agentId = await newAgent();
    const fixture: Ids = {
      workspaceId,
      agentId,
      intentId: await newIntent(agentId),
      webhookId: await newWebhook(agentId),
      versionId: await newVersion(agentId),
      inviteId:
        (await o.post(`/api/workspaces/${workspaceId}/invites`, { email: "f@example.test", role: "AGENT" }))
          .body.id,
      tokenId: (await o.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "fixture" })).body.id,
    };
    const ownerCtx = await actorOf(app, owner.token, workspaceId);
    fixture.approvalId = await newApproval(ownerCtx, agentId);
    const a = (ids: Ids) => `/api/agents/${ids.agentId}`;
    const ws = (ids: Ids) => `/api/workspaces/${ids.workspaceId}`;

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
      // Reads: everyone.
      {
        name: "GET /api/auth/me",
        allowed: EVERYONE,
        ok: 200,
        read: true,
        call: (c) => c.get("/api/auth/me"),
      },
      {
        name: "GET /api/workspaces",
        allowed: EVERYONE,
        ok: 200,
        read: true,
        call: (c) => c.get("/api/workspaces"),
      },
      {
        name: "GET members",
        allowed: EVERYONE,
        ok: 200,
        read: true,
        call: (c, i) => c.get(`${ws(i)}/members`),
      },
      { name: "GET /api/agents", allowed: EVERYONE, ok: 200, read: true, call: (c) => c.get("/api/agents") },
      { name: "GET agent", allowed: EVERYONE, ok: 200, read: true, call: (c, i) => c.get(a(i)) },
      {
        name: "GET prompt-versions",
        allowed: EVERYONE,
        ok: 200,
        read: true,
        call: (c, i) => c.get(`${a(i)}/prompt-versions`),
      },
      {
        name: "GET intents",
        allowed: EVERYONE,
        ok: 200,
        read: true,
        call: (c, i) => c.get(`${a(i)}/intents`),
      },
      {
        name: "GET intent",
        allowed: EVERYONE,
        ok: 200,
        read: true,
        call: (c, i) => c.get(`${a(i)}/intents/${i.intentId}`),
      },
      {
        name: "GET webhooks",
        allowed: EVERYONE,
        ok: 200,
        read: true,
        call: (c, i) => c.get(`${a(i)}/webhooks`),
      },
      {
        name: "GET webhook",
        allowed: EVERYONE,
        ok: 200,
        read: true,
        call: (c, i) => c.get(`${a(i)}/webhooks/${i.webhookId}`),
      },

      // Agents, prompts, intents, webhooks: OWNER, MANAGER, API token.
      {
        name: "POST /api/agents",
        allowed: WRITERS,
        ok: 201,
        call: (c) => c.post("/api/agents", { name: "New" }),
      },
      {
        name: "PUT agent",
        allowed: WRITERS,
        ok: 200,
        call: (c, i) => c.put(a(i), { name: `Renamed ${++n}` }),
      },
      {
        name: "PATCH agent status",
        allowed: WRITERS,
        ok: 200,
        setup: async (i) => ({ ...i, agentId: await newAgent() }),
        call: (c, i) => c.patch(`${a(i)}/status`, { status: "PAUSED" }),
      },
      {
        name: "PUT agent prompt",
        allowed: WRITERS,
        ok: 200,
        call: (c, i) => c.put(`${a(i)}/prompt`, { systemPrompt: `P ${++n}`, rationale: "why" }),
      },
      {
        name: "POST revert",
        allowed: WRITERS,
        ok: 200,
        call: (c, i) => c.post(`${a(i)}/prompt-versions/${i.versionId}/revert`),
      },
      {
        name: "DELETE agent",
        allowed: WRITERS,
        ok: 204,
        setup: async (i) => ({ ...i, agentId: await newAgent() }),
        call: (c, i) => c.delete(a(i)),
      },
      {
        name: "POST intent",
        allowed: WRITERS,
        ok: 201,
        call: (c, i) => c.post(`${a(i)}/intents`, { name: `Made ${++n}`, ...INTENT_FIELDS }),
      },
      {
        name: "PATCH intent",
        allowed: WRITERS,
        ok: 200,
        call: (c, i) => c.patch(`${a(i)}/intents/${i.intentId}`, { description: `d ${++n}` }),
      },
      {
        name: "DELETE intent",
        allowed: WRITERS,
        ok: 204,
        setup: async (i) => ({ ...i, intentId: await newIntent(i.agentId) }),
        call: (c, i) => c.delete(`${a(i)}/intents/${i.intentId}`),
      },
      { name: "POST webhook", allowed: WRITERS, ok: 201, call: (c, i) => c.post(`${a(i)}/webhooks`, HOOK) },
      {
        name: "PATCH webhook",
        allowed: WRITERS,
        ok: 200,
        call: (c, i) => c.patch(`${a(i)}/webhooks/${i.webhookId}`, { url: `https://example.com/${++n}` }),
      },
      {
        name: "POST webhook rotate-secret",
        allowed: WRITERS,
        ok: 200,
        call: (c, i) => c.post(`${a(i)}/webhooks/${i.webhookId}/rotate-secret`),
      },
      {
        name: "DELETE webhook",
        allowed: WRITERS,
        ok: 204,
        setup: async (i) => ({ ...i, webhookId: await newWebhook(i.agentId) }),
        call: (c, i) => c.delete(`${a(i)}/webhooks/${i.webhookId}`),
      },

      // Invites and API tokens: OWNER and MANAGER (and so the API token); only OWNER invites an OWNER.
      {
        name: "POST invite (AGENT)",
        allowed: WRITERS,
        ok: 201,
        call: (c, i) => c.post(`${ws(i)}/invites`, { email: `i${++n}@example.test`, role: "AGENT" }),
      },
      {
        name: "POST invite (MANAGER)",
        allowed: WRITERS,
        ok: 201,
        call: (c, i) => c.post(`${ws(i)}/invites`, { email: `m${++n}@example.test`, role: "MANAGER" }),
      },
      {
        name: "POST invite (OWNER)",
        allowed: OWNER_ONLY,
        ok: 201,
        call: (c, i) => c.post(`${ws(i)}/invites`, { email: `o${++n}@example.test`, role: "OWNER" }),
      },
      {
        name: "GET invites",
        allowed: WRITERS,
        ok: 200,
        read: true,
        call: (c, i) => c.get(`${ws(i)}/invites`),
      },
      {
        name: "DELETE invite",
        allowed: WRITERS,
        ok: 204,
        setup: async (i) => ({
          ...i,
          inviteId:
            (await o.post(`${ws(i)}/invites`, { email: `d${++n}@example.test`, role: "VIEWER" })).body.id,
        }),
        call: (c, i) => c.delete(`${ws(i)}/invites/${i.inviteId}`),
      },
      {
        name: "POST api-token",
        allowed: WRITERS,
        ok: 201,
        call: (c, i) => c.post(`${ws(i)}/api-tokens`, { label: `t${++n}` }),
      },
      {
        name: "GET api-tokens",
        allowed: WRITERS,
        ok: 200,
        read: true,
        call: (c, i) => c.get(`${ws(i)}/api-tokens`),
      },
      {
        name: "DELETE api-token",
        allowed: WRITERS,
        ok: 204,
        setup: async (i) => ({
          ...i,
          tokenId: (await o.post(`${ws(i)}/api-tokens`, { label: "gone" })).body.id,
        }),
        call: (c, i) => c.delete(`${ws(i)}/api-tokens/${i.tokenId}`),
      },

      // The supervisor: OWNER, MANAGER and so the API token; AGENT and VIEWER 403.
      {
        name: "GET supervisor conversation (created when absent)",
        allowed: SUPERVISORS,
        ok: 200,
        setup: withoutSupervisorConversation,
        call: (c) => c.get("/api/supervisor/conversation"),
      },
      {
        name: "POST supervisor chat",
        allowed: SUPERVISORS,
        ok: 200,
        call: (c) => c.post("/api/supervisor/chat", { message: "Hello" }),
      },
      {
        name: "DELETE supervisor conversation",
        allowed: SUPERVISORS,
        ok: 204,
        setup: withSupervisorMessage,
        call: (c) => c.delete("/api/supervisor/conversation"),
      },
      {
        name: "GET supervisor credits",
        allowed: SUPERVISORS,
        ok: 200,
        read: true,
        call: (c) => c.get("/api/supervisor/credits?days=7"),
      },

      // Workspaces: any person may create one (not a token); only the OWNER deletes.
      {
        name: "POST /api/workspaces",
        allowed: PEOPLE,
        ok: 201,
        call: (c) => c.post("/api/workspaces", { name: `W${++n}` }),
      },
      {
        name: "DELETE workspace",
        allowed: OWNER_ONLY,
        ok: 204,
        setup: async (i) => {
          const created = await owner.client.post("/api/workspaces", { name: `Doomed ${++n}` });
          const id = created.body.id as string;
          for (const [u, role] of [[manager, "MANAGER"], [agentUser, "AGENT"], [viewer, "VIEWER"]] as const) {
            await db.membership.create({ data: { userId: u.userId, workspaceId: id, role } });
          }
          const token = (await o.post(`/api/workspaces/${id}/api-tokens`, { label: "doomed" })).body.token;
          return { ...i, workspaceId: id, token };
        },
        call: (c, i) => c.delete(ws(i)),
      },
      // Approvals: OWNER and MANAGER (the API token acts as one); deciding needs a person.
      {
        name: "GET /api/approvals",
        allowed: [...APPROVAL_READERS],
        ok: 200,
        read: true,
        call: (c) => c.get("/api/approvals?status=PENDING"),
      },
      {
        name: "GET approval",
        allowed: [...APPROVAL_READERS],
        ok: 200,
        read: true,
        call: (c, i) => c.get(`/api/approvals/${i.approvalId}`),
      },
      {
        name: "GET /api/supervisor/changes",
        allowed: [...APPROVAL_READERS],
        ok: 200,
        read: true,
        call: (c) => c.get("/api/supervisor/changes"),
      },
      ...(["approve", "reject"] as const).map((verb): Row => ({
        name: `POST approval ${verb}`,
        allowed: [...APPROVAL_DECIDERS],
        ok: 200,
        setup: async (i) => ({ ...i, approvalId: await newApproval(ownerCtx, i.agentId) }),
        call: (c, i) => c.post(`/api/approvals/${i.approvalId}/${verb}`),
      })),
    ];

    for (const row of rows) {
      await t.step(row.name, async () => {
        for (const who of EVERYONE) {
          const ids = row.setup ? await row.setup(fixture) : fixture;
          const before = await snapshot(app);
          const res = await row.call(clientOf(who, ids), ids);
          const after = await snapshot(app);
          if (row.allowed.includes(who)) {
            assert.equal(res.status, row.ok, `${who} ${row.name}: ${res.status} ${JSON.stringify(res.body)}`);
            if (row.read) assert.equal(after, before, `${who} ${row.name} changed the database`);
            else assert.notEqual(after, before, `${who} ${row.name} changed nothing`);
          } else {
            assert.equal(res.status, 403, `${who} ${row.name}: ${res.status} ${JSON.stringify(res.body)}`);
            assertProblem(res, 403, "FORBIDDEN");
            assert.equal(after, before, `${who} ${row.name} was refused but changed the database`);
          }
        }
      });
    }

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
  }
});
