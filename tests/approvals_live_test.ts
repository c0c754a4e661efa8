/**
 * `approvalEvents`: created, approved, rejected, failed and expired reach
 * OWNER and MANAGER subscribers of the workspace on any server process, over graphql-ws and SSE;
 * AGENT and VIEWER are refused; another workspace's subscriber sees none of them.
 */
import assert from "node:assert/strict";
import type { Client as WsClient } from "graphql-ws";
import { Client, startTestApp } from "./_helpers/app.ts";
import { actorOf, changeTargets, proposalsFor, propose } from "./_helpers/approvals.ts";
import { secondApp, sseEvents, sseSubscribe, subscribe, subscribed, wsClient } from "./_helpers/live.ts";
import { eventually } from "./_helpers/receiver.ts";
import { INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { expireApprovals } from "../src/approvals/expiry.ts";

const APPROVAL_EVENTS = `subscription {
  approvalEvents { type approval { id status tool before after error } }
}`;

Deno.test("approvalEvents", async (tt) => {
  const t = await startTestApp({ PORT: "0" }, { workers: false });
  const { port } = await t.app.start();
  const quiet = () => eventually(() => Promise.resolve(t.app.deps.live.subscribers === 0 || undefined));
  try {
    await tt.step("across two processes: created, approved, rejected, failed, expired", async () => {
      const b = await secondApp(t);
      const clients: WsClient[] = [];
      try {
        const { workspaceId, owner } = await t.seed.workspace();
        const manager = await t.seed.member(workspaceId, "MANAGER");
        const other = await t.seed.workspace("Other");
        const targets = await changeTargets(owner.client);
        const otherTargets = await changeTargets(other.owner.client);
        // Everything below happens through process B; the subscribers are on process A.
        const ctx = await actorOf(b, manager.token, workspaceId);
        const otherCtx = await actorOf(b, other.owner.token, other.workspaceId);
        const onB = new Client(b, manager.token, workspaceId);

        const connect = (who: { token: string }, ws = workspaceId) => {
          const c = wsClient(port, { token: who.token, workspaceId: ws });
          clients.push(c);
          return c;
        };
        for (const role of ["AGENT", "VIEWER"] as const) {
          const member = await t.seed.member(workspaceId, role);
          const refused = await subscribe(connect(member), APPROVAL_EVENTS).next();
          assert.equal(refused.errors?.length, 1, role);
          assert.equal(refused.errors![0].extensions.code, "FORBIDDEN", role);
        }
        const feed = subscribe(connect(manager), APPROVAL_EVENTS);
        const ownerFeed = subscribe(connect(owner), APPROVAL_EVENTS);
        const otherFeed = subscribe(connect(other.owner, other.workspaceId), APPROVAL_EVENTS);
        await subscribed(t.app, 3);

        const next = async () => {
          const r = await feed.next();
          assert.equal(r.errors, undefined, JSON.stringify(r.errors));
          return r.data.approvalEvents;
        };

        const p = proposalsFor(targets);
        const proposed = await propose(ctx, p.update_webhook);
        const created = {
          id: proposed.id,
          status: "PENDING",
          tool: "update_webhook",
          before: {
            event: "message.sent",
            url: "https://example.com/w",
            method: "POST",
            headers: { "X-Key": "k" },
          },
          after: {
            event: "message.sent",
            url: "https://example.com/w",
            method: "POST",
            headers: { "X-Key": "k2" },
          },
          error: null,
        };
        assert.deepEqual(await next(), { type: "CREATED", approval: created });
        assert.equal((await ownerFeed.next()).data.approvalEvents.approval.id, created.id);
        assert.equal((await onB.post(`/api/approvals/${created.id}/approve`)).status, 200);
        const approved = await next();
        assert.equal(approved.type, "APPROVED");
        assert.deepEqual(approved.approval, { ...created, status: "APPROVED" });

        const rejected = await propose(ctx, p.delete_intent);
        assert.equal((await next()).type, "CREATED");
        assert.equal((await onB.post(`/api/approvals/${rejected.id}/reject`)).status, 200);
        const decided = await next();
        assert.deepEqual([decided.type, decided.approval.id, decided.approval.status], [
          "REJECTED",
          rejected.id,
          "REJECTED",
        ]);
        assert.equal(decided.approval.after, null);

        const failing = await propose(ctx, {
          tool: "create_intent",
          target: { agentId: targets.agentId },
          change: { name: "Refund", ...INTENT_FIELDS },
          rationale: "refunds",
        });
        assert.equal((await next()).type, "CREATED");
        assert.equal(
          (await onB.post(`/api/agents/${targets.agentId}/intents`, { name: "Refund", ...INTENT_FIELDS }))
            .status,
          201,
        );
        assert.equal((await onB.post(`/api/approvals/${failing.id}/approve`)).status, 200);
        const failed = await next();
        assert.equal(failed.type, "FAILED");
        assert.equal(failed.approval.id, failing.id);
        assert.equal(failed.approval.status, "FAILED");
        assert.match(failed.approval.error, /^DUPLICATE_INTENT/);

        // The other workspace's own proposal is the first event its subscriber sees.
        const theirs = await propose(otherCtx, proposalsFor(otherTargets).toggle_agent_active);
        const expiring = await propose(ctx, p.update_agent_training);
        assert.equal((await next()).approval.id, expiring.id);
        assert.equal(await expireApprovals(b.deps, new Date(Date.now() + 25 * 3600_000)), 2);
        const expiredIds = [(await next()).approval.id];
        assert.deepEqual(expiredIds, [expiring.id]);
        const seenByOther = (await otherFeed.next()).data.approvalEvents;
        assert.deepEqual([seenByOther.type, seenByOther.approval.id], ["CREATED", theirs.id]);
        const expiredOther = (await otherFeed.next()).data.approvalEvents;
        assert.deepEqual([expiredOther.type, expiredOther.approval.id], ["EXPIRED", theirs.id]);
      } finally {
        for (const c of clients) await c.dispose();
        await quiet();
        await b.stop();
      }
    });

    await tt.step("over SSE", async () => {
      let events: ReturnType<typeof sseEvents> | undefined;
      try {
        const { workspaceId, owner } = await t.seed.workspace();
        const targets = await changeTargets(owner.client);
        const res = await sseSubscribe(
          port,
          { token: owner.token, workspaceId },
          "subscription { approvalEvents { type approval { id status } } }",
        );
        assert.equal(res.status, 200);
        events = sseEvents(res.body!);
        await subscribed(t.app, 1);
        const approval = await propose(
          await actorOf(t.app, owner.token, workspaceId),
          proposalsFor(targets).update_agent_prompt,
        );
        const next = await events.next();
        assert.equal(next.event, "next");
        assert.deepEqual(JSON.parse(next.data), {
          data: { approvalEvents: { type: "CREATED", approval: { id: approval.id, status: "PENDING" } } },
        });
      } finally {
        await events?.cancel();
        await quiet();
      }
    });
  } finally {
    await t.close();
  }
});
