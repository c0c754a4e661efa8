/**
 * The supervisor walk-through of the README's tour: a MANAGER asks the supervisor to make an agent
 * more formal; the pending approval carries before/after; approving it sets the prompt and records
 * a version with the rationale; asking for a webhook to be removed and rejecting it changes nothing.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import {
  FORMAL_PROMPT as FORMAL,
  FORMAL_RATIONALE,
  PROPOSED_REPLY,
  startWalkThroughModel,
} from "./_helpers/supervisor_model.ts";

Deno.test("walk-through: ask, see the pending change, approve it; ask again, reject it", async () => {
  const model = startWalkThroughModel();
  const ta = await startTestApp({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseUrl });
  try {
    const { workspaceId, owner } = await ta.seed.workspace("Acme");
    const manager = (await ta.seed.member(workspaceId, "MANAGER")).client;
    const agentId = (await ta.seed.agent(owner.client, { name: "Ana" })).id;
    const webhookId = (await owner.client.post(`/api/agents/${agentId}/webhooks`, {
      event: "message.sent",
      url: "https://example.com/hook",
    })).body.id;
    const promptBefore = (await manager.get(`/api/agents/${agentId}`)).body.systemPrompt;

    // 1. Ask for a more formal agent: a pending approval with before/after; nothing changed yet.
    const asked = await manager.post("/api/supervisor/chat", { message: "Make Ana more formal, please." });
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    assert.equal(asked.body.reply.content, PROPOSED_REPLY);
    const [approval] = asked.body.approvals;
    assert.equal(approval.tool, "update_agent_prompt");
    assert.equal(approval.status, "PENDING");
    assert.deepEqual(approval.before, { systemPrompt: promptBefore });
    assert.deepEqual(approval.after, { systemPrompt: FORMAL });
    assert.equal((await manager.get(`/api/agents/${agentId}`)).body.systemPrompt, promptBefore);
    const pending = await manager.get("/api/approvals?status=PENDING");
    assert.deepEqual(pending.body.data.map((a: { id: string }) => a.id), [approval.id]);
    const changes = await manager.get("/api/supervisor/changes");
    assert.deepEqual(changes.body.data.map((a: { id: string }) => a.id), [approval.id]);

    // 2. Approve: the new prompt and its version with the rationale.
    const approved = await manager.post(`/api/approvals/${approval.id}/approve`);
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(approved.body.status, "APPROVED");
    assert.equal((await manager.get(`/api/agents/${agentId}`)).body.systemPrompt, FORMAL);
    const versions = (await manager.get(`/api/agents/${agentId}/prompt-versions`)).body.data;
    assert.equal(versions[0].systemPrompt, FORMAL);
    assert.equal(versions[0].rationale, FORMAL_RATIONALE);

    // 3. Ask for the webhook to go, reject it: nothing changes.
    const asked2 = await manager.post("/api/supervisor/chat", { message: "Remove Ana's webhook." });
    assert.equal(asked2.status, 200, JSON.stringify(asked2.body));
    const [removal] = asked2.body.approvals;
    assert.equal(removal.tool, "delete_webhook");
    assert.equal(removal.targetId, webhookId);
    const rejected = await manager.post(`/api/approvals/${removal.id}/reject`);
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
    assert.equal(rejected.body.status, "REJECTED");
    const hooks = (await manager.get(`/api/agents/${agentId}/webhooks`)).body.data;
    assert.deepEqual(hooks.map((h: { id: string }) => h.id), [webhookId]);

    // The conversation shows both turns, each answer with the approval it proposed.
    const conv = (await manager.get("/api/supervisor/conversation")).body;
    assert.deepEqual(conv.messages.map((m: { role: string }) => m.role), [
      "USER",
      "ASSISTANT",
      "USER",
      "ASSISTANT",
    ]);
    assert.deepEqual(conv.messages[1].approvals.map((a: { status: string }) => a.status), ["APPROVED"]);
    assert.deepEqual(conv.messages[3].approvals.map((a: { status: string }) => a.status), ["REJECTED"]);
  } finally {
    await ta.close();
    await model.close();
  }
});
