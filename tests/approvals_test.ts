/**
 * Approvals over REST and GraphQL (docs/behaviour.md "The supervisor and approvals"): each of the nine
 * change kinds from proposal to execution with its effect visible over REST, reject, not PENDING,
 * stale targets, concurrent approves, an execution that fails, who may decide, the lists and the
 * expiry sweep with an injected clock.
 */
import assert from "node:assert/strict";
import { Client, startTestApp, type TestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { assertProblem, assertStatus, snapshot } from "./_helpers/problem.ts";
import {
  actorOf,
  changeTargets,
  proposalsFor,
  propose,
  REMINDER_TEMPLATE,
  type Targets,
} from "./_helpers/approvals.ts";
import { INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { secondApp } from "./_helpers/live.ts";
import { expireApprovals } from "../src/approvals/expiry.ts";
import type { Jobs } from "../src/jobs/boss.ts";
import { APPROVAL_EXPIRY_CRON, APPROVAL_EXPIRY_QUEUE } from "../src/jobs/workers/approvals.ts";

const START = new Date("2026-03-01T10:00:00.000Z");
const HOUR = 3600_000;

const APPROVAL_KEYS = [
  "after",
  "agentId",
  "before",
  "comment",
  "createdAt",
  "decidedAt",
  "decidedBy",
  "error",
  "expiresAt",
  "id",
  "proposedBy",
  "rationale",
  "replay",
  "requestedBy",
  "status",
  "supervisorMessageId",
  "targetId",
  "targetType",
  "tool",
];

async function setup(t: TestApp) {
  const { workspaceId, owner } = await t.seed.workspace();
  const manager = await t.seed.member(workspaceId, "MANAGER");
  const ctx = await actorOf(t.app, manager.token, workspaceId);
  return { workspaceId, owner, manager, ctx, c: manager.client };
}

Deno.test("each of the nine changes: proposal, approve, effect visible over REST", async (t) => {
  const clock = new ManualClock(START);
  const ta = await startTestApp({}, { clock });
  try {
    const { ctx, c, manager } = await setup(ta);
    // A fresh agent with an intent and a webhook per kind, so each change meets its own target.
    const run = async (
      tool: string,
      check: (targets: Targets, body: Record<string, unknown>) => Promise<void>,
    ) => {
      await t.step(tool, async () => {
        const targets = await changeTargets(c, tool);
        const approval = await propose(ctx, proposalsFor(targets)[tool]);
        clock.advance(1000);
        const res = await c.post(`/api/approvals/${approval.id}/approve`);
        assertStatus(res, 200);
        assert.deepEqual(Object.keys(res.body).sort(), APPROVAL_KEYS);
        assert.equal(res.body.status, "APPROVED");
        assert.equal(res.body.decidedBy, manager.userId);
        assert.equal(res.body.decidedAt, new Date(clock.now()).toISOString());
        assert.equal(res.body.error, null);
        assert.equal(res.body.comment, null);
        // Who asked: the member chatting with the supervisor, as a user (never a password hash).
        assert.deepEqual(res.body.requestedBy, (await c.get("/api/auth/me")).body.user);
        assert.equal(res.body.requestedBy.id, manager.userId);
        await check(targets, res.body);
        // The answer is the record as the reads show it.
        assert.deepEqual((await c.get(`/api/approvals/${approval.id}`)).body, res.body);
      });
    };
    await run("update_agent_prompt", async ({ agentId }) => {
      assert.equal((await c.get(`/api/agents/${agentId}`)).body.systemPrompt, "Be formal.");
      const versions = (await c.get(`/api/agents/${agentId}/prompt-versions`)).body.data;
      assert.equal(versions.length, 1);
      assert.equal(versions[0].systemPrompt, "Be formal.");
      assert.equal(versions[0].rationale, "because update_agent_prompt");
      assert.equal(versions[0].authorUserId, manager.userId);
    });
    await run("update_agent_training", async ({ agentId }) => {
      const agent = (await c.get(`/api/agents/${agentId}`)).body;
      assert.equal(agent.trainingContext, "We sell tea.");
      // The rest of the agent is kept (the change goes through the whole-agent PUT).
      assert.equal(agent.jobName, "Acme");
      assert.equal(agent.name, "update_agent_training");
      assert.deepEqual(agent.reminderTemplate, REMINDER_TEMPLATE);
    });
    await run("toggle_agent_active", async ({ agentId }) => {
      assert.equal((await c.get(`/api/agents/${agentId}`)).body.status, "PAUSED");
    });
    await run("create_intent", async ({ agentId }, body) => {
      const intents = (await c.get(`/api/agents/${agentId}/intents`)).body.data;
      assert.deepEqual(intents.map((i: { name: string }) => i.name).sort(), ["Book Visit", "Cancel Order"]);
      const created = intents.find((i: { name: string }) => i.name === "Cancel Order");
      assert.equal(body.targetId, created.id);
    });
    await run("update_intent", async ({ agentId, intentId }) => {
      const intent = (await c.get(`/api/agents/${agentId}/intents/${intentId}`)).body;
      assert.equal(intent.description, "When they want a visit");
      assert.equal(intent.name, "Book Visit");
    });
    await run("delete_intent", async ({ agentId, intentId }) => {
      assertProblem(await c.get(`/api/agents/${agentId}/intents/${intentId}`), 404, "NOT_FOUND");
    });
    await run("create_webhook", async ({ agentId }, body) => {
      const hooks = (await c.get(`/api/agents/${agentId}/webhooks`)).body.data;
      assert.equal(hooks.length, 2);
      const created = hooks.find((h: { event: string }) => h.event === "message.received");
      assert.equal(created.id, body.targetId);
      assert.deepEqual(created.headers, { "X-New": "s3cret" });
      assert.equal(created.url, "https://example.com/new");
      // The signing secret is never part of the approval.
      assert.doesNotMatch(JSON.stringify(body), /whsec_/);
    });
    await run("update_webhook", async ({ agentId, webhookId }) => {
      const hook = (await c.get(`/api/agents/${agentId}/webhooks/${webhookId}`)).body;
      assert.deepEqual(hook.headers, { "X-Key": "k2" });
      assert.equal(hook.url, "https://example.com/w");
    });
    await run("delete_webhook", async ({ agentId, webhookId }) => {
      assertProblem(await c.get(`/api/agents/${agentId}/webhooks/${webhookId}`), 404, "NOT_FOUND");
    });
  } finally {
    await ta.close();
  }
});

Deno.test("reject, not PENDING, stale, failed execution, who may decide", async (t) => {
  const clock = new ManualClock(START);
  const ta = await startTestApp({}, { clock });
  const db = ta.app.deps.db;
  try {
    const { workspaceId, owner, ctx, c } = await setup(ta);
    const targets = await changeTargets(c);
    const p = proposalsFor(targets);

    await t.step("reject executes nothing and answers the REJECTED approval", async () => {
      const approval = await propose(ctx, p.delete_webhook);
      const before = await snapshot(ta.app);
      const res = await owner.client.post(`/api/approvals/${approval.id}/reject`);
      assertStatus(res, 200);
      assert.equal(res.body.status, "REJECTED");
      assert.equal(res.body.decidedBy, owner.userId);
      const after = JSON.parse(await snapshot(ta.app));
      const was = JSON.parse(before);
      assert.deepEqual(after.slice(0, -1), was.slice(0, -1));
      assertStatus(await c.get(`/api/agents/${targets.agentId}/webhooks/${targets.webhookId}`), 200);
    });

    await t.step(
      "reject with a comment keeps it on the approval (REST and GraphQL); it is bounded",
      async () => {
        const one = await propose(ctx, p.toggle_agent_active);
        assertProblem(
          await owner.client.post(`/api/approvals/${one.id}/reject`, { comment: "x".repeat(2001) }),
          400,
          "VALIDATION_FAILED",
          ["comment"],
        );
        assertProblem(
          await owner.client.post(`/api/approvals/${one.id}/reject`, { reason: "not a field" }),
          400,
          "VALIDATION_FAILED",
        );
        assert.equal((await c.get(`/api/approvals/${one.id}`)).body.status, "PENDING");
        const res = await owner.client.post(`/api/approvals/${one.id}/reject`, {
          comment: "  Not this week.  ",
        });
        assertStatus(res, 200);
        assert.equal(res.body.status, "REJECTED");
        assert.equal(res.body.comment, "Not this week.");
        assert.deepEqual((await c.get(`/api/approvals/${one.id}`)).body, res.body);

        const two = await propose(ctx, p.toggle_agent_active);
        const gql = await owner.client.graphql(
          `mutation($id: ID!) { rejectApproval(id: $id, input: { comment: "Too risky." }) { status comment requestedBy { id } } }`,
          { id: two.id },
        );
        assert.equal(gql.body.errors, undefined, JSON.stringify(gql.body));
        assert.deepEqual(gql.body.data.rejectApproval, {
          status: "REJECTED",
          comment: "Too risky.",
          requestedBy: { id: ctx.actor.userId },
        });
        // A null input is no comment, as a missing one (GraphQL asks for the default).
        const nulled = await propose(ctx, p.toggle_agent_active);
        const none = await owner.client.graphql(
          `mutation($id: ID!) { rejectApproval(id: $id, input: null) { status comment } }`,
          { id: nulled.id },
        );
        assert.deepEqual(none.body, { data: { rejectApproval: { status: "REJECTED", comment: null } } });
        // Without a comment (and without a body, above): null.
        const three = await propose(ctx, p.toggle_agent_active);
        const plain = await owner.client.post(`/api/approvals/${three.id}/reject`, {});
        assertStatus(plain, 200);
        assert.equal(plain.body.comment, null);
      },
    );

    await t.step("not PENDING: approve or reject again → 409 APPROVAL_NOT_PENDING", async () => {
      const approval = await propose(ctx, p.toggle_agent_active);
      assertStatus(await c.post(`/api/approvals/${approval.id}/approve`), 200);
      assertProblem(await c.post(`/api/approvals/${approval.id}/approve`), 409, "APPROVAL_NOT_PENDING");
      assertProblem(await c.post(`/api/approvals/${approval.id}/reject`), 409, "APPROVAL_NOT_PENDING");
      const rejected = (await db.pendingApproval.findFirst({ where: { status: "REJECTED" } }))!;
      assertProblem(await c.post(`/api/approvals/${rejected.id}/approve`), 409, "APPROVAL_NOT_PENDING");
      // Back to ACTIVE for the next steps.
      assertStatus(await c.patch(`/api/agents/${targets.agentId}/status`, { status: "ACTIVE" }), 200);
    });

    await t.step(
      "stale: the target changed since the proposal → 409 STALE_APPROVAL, it stays PENDING",
      async () => {
        const prompt = await propose(ctx, p.update_agent_prompt);
        assertStatus(
          await c.put(`/api/agents/${targets.agentId}/prompt`, { systemPrompt: "Other.", rationale: "x" }),
          200,
        );
        const res = await c.post(`/api/approvals/${prompt.id}/approve`);
        assertProblem(res, 409, "STALE_APPROVAL");
        assert.equal((await c.get(`/api/approvals/${prompt.id}`)).body.status, "PENDING");
        assert.equal((await c.get(`/api/agents/${targets.agentId}`)).body.systemPrompt, "Other.");
        // It can still be rejected.
        assertStatus(await c.post(`/api/approvals/${prompt.id}/reject`), 200);

        const hook = await propose(ctx, p.update_webhook);
        assertStatus(
          await c.patch(`/api/agents/${targets.agentId}/webhooks/${targets.webhookId}`, {
            headers: { "X-Key": "z" },
          }),
          200,
        );
        assertProblem(await c.post(`/api/approvals/${hook.id}/approve`), 409, "STALE_APPROVAL");
        assert.equal((await c.get(`/api/approvals/${hook.id}`)).body.status, "PENDING");

        // The target gone is stale too.
        const intent = await propose(ctx, p.update_intent);
        assertStatus(await c.delete(`/api/agents/${targets.agentId}/intents/${targets.intentId}`), 204);
        assertProblem(await c.post(`/api/approvals/${intent.id}/approve`), 409, "STALE_APPROVAL");
        assert.equal((await c.get(`/api/approvals/${intent.id}`)).body.status, "PENDING");
      },
    );

    await t.step(
      "an execution the service refuses → 200 FAILED with the error, nothing changed",
      async () => {
        const approval = await propose(ctx, {
          tool: "create_intent",
          target: { agentId: targets.agentId },
          change: { name: "Refund", ...INTENT_FIELDS },
          rationale: "refunds",
        });
        assertStatus(
          await c.post(`/api/agents/${targets.agentId}/intents`, { name: "Refund", ...INTENT_FIELDS }),
          201,
        );
        const intents = await db.intent.count();
        const res = await c.post(`/api/approvals/${approval.id}/approve`);
        assertStatus(res, 200);
        assert.equal(res.body.status, "FAILED");
        assert.match(res.body.error, /^DUPLICATE_INTENT: /);
        assert.equal(res.body.targetId, null);
        assert.equal(await db.intent.count(), intents);
        assertProblem(await c.post(`/api/approvals/${approval.id}/approve`), 409, "APPROVAL_NOT_PENDING");
      },
    );

    await t.step("who asked: null for an API token, and once the member who asked is deleted", async () => {
      const prompt = (text: string) => ({
        tool: "update_agent_prompt",
        target: { agentId: targets.agentId },
        change: { systemPrompt: text },
        rationale: "who asked",
      });
      const created = await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "bot" });
      const byToken = await propose(
        await actorOf(ta.app, created.body.token, workspaceId),
        prompt("Asked by a token."),
      );
      assert.equal(byToken.proposedBy, null);
      assert.equal((await c.get(`/api/approvals/${byToken.id}`)).body.requestedBy, null);
      const gone = await ta.seed.member(workspaceId, "MANAGER");
      const asked = await propose(
        await actorOf(ta.app, gone.token, workspaceId),
        prompt("Asked by a person."),
      );
      assert.equal((await c.get(`/api/approvals/${asked.id}`)).body.requestedBy.id, gone.userId);
      await db.user.delete({ where: { id: gone.userId } });
      const after = (await c.get(`/api/approvals/${asked.id}`)).body;
      assert.equal(after.requestedBy, null);
      assert.equal(after.proposedBy, null);
      for (const id of [byToken.id, asked.id]) assertStatus(await c.post(`/api/approvals/${id}/reject`), 200);
    });

    await t.step("who may decide: API token, AGENT, VIEWER → 403; another workspace → 404", async () => {
      const approval = await propose(ctx, p.update_agent_training);
      const token =
        (await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "t" })).body.token;
      const tokenClient = new Client(ta.app, token, workspaceId);
      const agent = await ta.seed.member(workspaceId, "AGENT");
      const viewer = await ta.seed.member(workspaceId, "VIEWER");
      for (const who of [tokenClient, agent.client, viewer.client]) {
        assertProblem(await who.post(`/api/approvals/${approval.id}/approve`), 403, "FORBIDDEN");
        assertProblem(await who.post(`/api/approvals/${approval.id}/reject`), 403, "FORBIDDEN");
      }
      const other = await ta.seed.workspace("Other");
      assertProblem(await other.owner.client.post(`/api/approvals/${approval.id}/approve`), 404, "NOT_FOUND");
      assertProblem(await other.owner.client.get(`/api/approvals/${approval.id}`), 404, "NOT_FOUND");
      assertProblem(await c.post(`/api/approvals/nope/approve`), 404, "NOT_FOUND");
      assert.equal((await c.get(`/api/approvals/${approval.id}`)).body.status, "PENDING");
      // The token may read (it acts as a MANAGER); only deciding needs a person.
      assertStatus(await tokenClient.get(`/api/approvals/${approval.id}`), 200);
    });

    await t.step("an approval past its expiry cannot be approved before the sweep reaches it", async () => {
      const approval = await propose(ctx, p.update_agent_training);
      clock.advance(24 * HOUR);
      assertProblem(await c.post(`/api/approvals/${approval.id}/approve`), 409, "APPROVAL_NOT_PENDING");
      assert.equal(
        (await db.agent.findUniqueOrThrow({ where: { id: targets.agentId } })).trainingContext,
        null,
      );
    });
  } finally {
    await ta.close();
  }
});

Deno.test("ten approves of one approval at once, through two server processes, execute it once", async () => {
  const ta = await startTestApp();
  const b = await secondApp(ta);
  try {
    const { ctx, c, manager, workspaceId } = await setup(ta);
    const onB = new Client(b, manager.token, workspaceId);
    const targets = await changeTargets(c);
    const approval = await propose(ctx, proposalsFor(targets).update_agent_prompt);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? onB : c).post(`/api/approvals/${approval.id}/approve`)),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const a of answers) if (a.status === 409) assert.equal(a.body.code, "APPROVAL_NOT_PENDING");
    assert.equal(await ta.app.deps.db.promptVersion.count({ where: { agentId: targets.agentId } }), 1);
  } finally {
    await b.stop();
    await ta.close();
  }
});

Deno.test("lists: status filter, newest first, cursor pages, the supervisor's changes, GraphQL", async (t) => {
  const clock = new ManualClock(START);
  const ta = await startTestApp({}, { clock });
  try {
    const { ctx, c } = await setup(ta);
    const targets = await changeTargets(c);
    const p = proposalsFor(targets);
    const ids: string[] = [];
    for (const tool of ["update_agent_prompt", "update_agent_training", "create_intent", "create_webhook"]) {
      clock.advance(1000);
      ids.push((await propose(ctx, p[tool], null)).id);
    }
    assertStatus(await c.post(`/api/approvals/${ids[1]}/reject`), 200);
    const newestFirst = [...ids].reverse();

    await t.step("GET /api/approvals: every status, newest first, pages by cursor", async () => {
      const all = await c.get("/api/approvals");
      assertStatus(all, 200);
      assert.deepEqual(all.body.data.map((a: { id: string }) => a.id), newestFirst);
      assert.equal(all.body.nextCursor, null);
      const first = await c.get("/api/approvals?limit=3");
      assert.deepEqual(first.body.data.map((a: { id: string }) => a.id), newestFirst.slice(0, 3));
      const second = await c.get(`/api/approvals?limit=3&cursor=${first.body.nextCursor}`);
      assert.deepEqual(second.body.data.map((a: { id: string }) => a.id), newestFirst.slice(3));
      assert.equal(second.body.nextCursor, null);
    });

    await t.step("?status= filters, and is validated", async () => {
      const pending = await c.get("/api/approvals?status=PENDING");
      assert.deepEqual(pending.body.data.map((a: { id: string }) => a.id), [ids[3], ids[2], ids[0]]);
      const rejected = await c.get("/api/approvals?status=REJECTED");
      assert.deepEqual(rejected.body.data.map((a: { id: string }) => a.id), [ids[1]]);
      assertProblem(await c.get("/api/approvals?status=pending"), 400, "VALIDATION_FAILED", ["status"]);
      assertProblem(await c.get("/api/approvals?limit=0"), 400, "VALIDATION_FAILED");
    });

    await t.step("GET /api/supervisor/changes: every approval, newest first", async () => {
      const res = await c.get("/api/supervisor/changes");
      assertStatus(res, 200);
      assert.deepEqual(res.body.data.map((a: { id: string }) => a.id), newestFirst);
      assert.deepEqual(res.body.data[0], (await c.get(`/api/approvals/${ids[3]}`)).body);
    });

    await t.step("GraphQL: approvals(status), approval(id), supervisorChanges, approveApproval", async () => {
      const q = await c.graphql(`{
        approvals(status: PENDING, first: 2) { edges { node { id tool status } } pageInfo { hasNextPage } }
        approval(id: "${ids[2]}") { id tool targetType before after agentId }
        supervisorChanges(first: 10) { edges { node { id } } }
      }`);
      assert.equal(q.body.errors, undefined, JSON.stringify(q.body.errors));
      assert.deepEqual(q.body.data.approvals.edges.map((e: { node: { id: string } }) => e.node.id), [
        ids[3],
        ids[2],
      ]);
      assert.equal(q.body.data.approvals.pageInfo.hasNextPage, true);
      assert.deepEqual(q.body.data.approval, {
        id: ids[2],
        tool: "create_intent",
        targetType: "AGENT",
        before: null,
        after: { name: "Cancel Order", webhookMethod: "POST", ...INTENT_FIELDS },
        agentId: targets.agentId,
      });
      assert.deepEqual(
        q.body.data.supervisorChanges.edges.map((e: { node: { id: string } }) => e.node.id),
        newestFirst,
      );
      const m = await c.graphql(
        `mutation { approveApproval(id: "${ids[2]}") { id status targetId decidedBy } }`,
      );
      assert.equal(m.body.errors, undefined, JSON.stringify(m.body.errors));
      assert.equal(m.body.data.approveApproval.status, "APPROVED");
      assert.ok(m.body.data.approveApproval.targetId);
      const again = await c.graphql(`mutation { rejectApproval(id: "${ids[2]}") { id } }`);
      assert.equal(again.body.errors[0].extensions.code, "APPROVAL_NOT_PENDING");
    });

    await t.step("AGENT and VIEWER cannot read approvals (403)", async () => {
      const { workspaceId } = ctx.actor;
      for (const role of ["AGENT", "VIEWER"] as const) {
        const who = await ta.seed.member(workspaceId, role);
        assertProblem(await who.client.get("/api/approvals"), 403, "FORBIDDEN");
        assertProblem(await who.client.get(`/api/approvals/${ids[0]}`), 403, "FORBIDDEN");
        assertProblem(await who.client.get("/api/supervisor/changes"), 403, "FORBIDDEN");
      }
    });
  } finally {
    await ta.close();
  }
});

Deno.test("expiry: the sweep sets EXPIRED after 24 h, once, and publishes it", async () => {
  const clock = new ManualClock(START);
  const ta = await startTestApp({}, { clock });
  const db = ta.app.deps.db;
  try {
    const { ctx, c } = await setup(ta);
    const targets = await changeTargets(c);
    const p = proposalsFor(targets);
    const old = await propose(ctx, p.update_agent_prompt);
    clock.advance(HOUR);
    const young = await propose(ctx, p.update_agent_training);
    const decided = await propose(ctx, p.toggle_agent_active);
    assertStatus(await c.post(`/api/approvals/${decided.id}/reject`), 200);

    // A second server process; the expired events of both processes' buses are collected.
    const other = await secondApp(ta);
    const published: string[] = [];
    const stops = [ta.app, other].map((app) =>
      app.deps.events.subscribe({
        after(_tx, events) {
          for (const e of events) {
            if (e.type === "approval.expired") published.push(e.data.approvalId as string);
          }
          return Promise.resolve();
        },
      })
    );
    try {
      clock.advance(23 * HOUR - 1);
      assert.equal(await expireApprovals(ta.app.deps, clock.now()), 0);
      clock.advance(1);
      // Two sweeps at once, in two server processes, expire it once.
      const [a, b] = await Promise.all([
        expireApprovals(ta.app.deps, clock.now()),
        expireApprovals(other.deps, clock.now()),
      ]);
      assert.equal(a + b, 1);
      assert.deepEqual(published, [old.id]);
      const status = async (id: string) =>
        (await db.pendingApproval.findUniqueOrThrow({ where: { id } })).status;
      assert.equal(await status(old.id), "EXPIRED");
      assert.equal(await status(young.id), "PENDING");
      assert.equal(await status(decided.id), "REJECTED");
      clock.advance(HOUR);
      assert.equal(await expireApprovals(ta.app.deps, clock.now()), 1);
      assert.equal(await status(young.id), "EXPIRED");
      assert.deepEqual(published, [old.id, young.id]);
      assertProblem(await c.post(`/api/approvals/${old.id}/approve`), 409, "APPROVAL_NOT_PENDING");
      assert.equal((await c.get(`/api/agents/${targets.agentId}`)).body.trainingContext, null);
    } finally {
      for (const stop of stops) stop();
      await other.stop();
    }
  } finally {
    await ta.close();
  }
});

Deno.test("the expiry schedule is registered: every minute", async () => {
  const ta = await startTestApp();
  try {
    const schedules = await (ta.app.deps.jobs as Jobs).boss.getSchedules();
    const byName = Object.fromEntries(schedules.map((s) => [s.name, s.cron]));
    assert.equal(byName[APPROVAL_EXPIRY_QUEUE], APPROVAL_EXPIRY_CRON);
    assert.equal(APPROVAL_EXPIRY_CRON, "* * * * *");
  } finally {
    await ta.close();
  }
});
