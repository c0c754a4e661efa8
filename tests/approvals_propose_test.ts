/**
 * Proposals (src/approvals/propose.ts, the supervisor's propose_change): each of the nine tools
 * stores one PENDING approval with its before/after and changes nothing else; invalid arguments,
 * unknown tools, targets of another workspace and changes that could not execute are refused with
 * a 4xx AppError and store nothing.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { snapshot } from "./_helpers/problem.ts";
import { actorOf, changeTargets, proposalsFor, propose } from "./_helpers/approvals.ts";
import { AppError } from "../src/shared/errors.ts";
import { proposeChangeParameters } from "../src/approvals/propose.ts";

const START = new Date("2026-03-01T10:00:00.000Z");

async function refused(
  p: Promise<unknown>,
  status: number,
  code: string,
  message?: RegExp,
): Promise<AppError> {
  const error = await p.then(() => null, (e) => e);
  assert.ok(error instanceof AppError, `expected an AppError, got ${error}`);
  assert.equal(error.status, status, error.message);
  assert.equal(error.code, code);
  if (message) assert.match(error.message, message);
  return error;
}

Deno.test("approval proposals", async (t) => {
  const clock = new ManualClock(START);
  const ta = await startTestApp({}, { clock });
  const { app, seed } = ta;
  try {
    const { workspaceId, owner } = await seed.workspace();
    const manager = await seed.member(workspaceId, "MANAGER");
    const ctx = await actorOf(app, manager.token, workspaceId);
    const other = await seed.workspace("Other");
    const targets = await changeTargets(owner.client);
    const foreign = await changeTargets(other.owner.client, "Foreign");
    const db = app.deps.db;

    await t.step("the tool's parameters are a JSON schema object naming the nine tools", () => {
      assert.equal(proposeChangeParameters.type, "object");
      const props = proposeChangeParameters.properties as Record<string, { $ref?: string }>;
      assert.deepEqual(Object.keys(props).sort(), ["change", "rationale", "target", "tool"]);
      const defs = proposeChangeParameters.$defs as Record<string, { enum: string[] }>;
      assert.equal(props.tool.$ref, "#/$defs/ApprovalTool");
      assert.equal(defs.ApprovalTool.enum.length, 9);
    });

    await t.step("each of the nine tools stores one PENDING approval and changes nothing else", async () => {
      const expected: Record<
        string,
        { targetType: string; targetId: string | null; before: unknown; after: unknown }
      > = {
        update_agent_prompt: {
          targetType: "AGENT",
          targetId: targets.agentId,
          before: {
            systemPrompt: (await owner.client.get(`/api/agents/${targets.agentId}`)).body.systemPrompt,
          },
          after: { systemPrompt: "Be formal." },
        },
        update_agent_training: {
          targetType: "AGENT",
          targetId: targets.agentId,
          before: { trainingContext: null },
          after: { trainingContext: "We sell tea." },
        },
        toggle_agent_active: {
          targetType: "AGENT",
          targetId: targets.agentId,
          before: { status: "ACTIVE" },
          after: { status: "PAUSED" },
        },
        create_intent: {
          targetType: "AGENT",
          targetId: null,
          before: null,
          after: {
            name: "Cancel Order",
            description: "d",
            triggerOnTypes: ["TEXT"],
            requiredFields: [],
            webhookUrl: "https://example.com/i",
            webhookMethod: "POST",
          },
        },
        update_intent: {
          targetType: "INTENT",
          targetId: targets.intentId,
          before: {
            name: "Book Visit",
            description: "d",
            triggerOnTypes: ["TEXT"],
            requiredFields: [],
            webhookUrl: "https://example.com/i",
            webhookMethod: "POST",
          },
          after: {
            name: "Book Visit",
            description: "When they want a visit",
            triggerOnTypes: ["TEXT"],
            requiredFields: [],
            webhookUrl: "https://example.com/i",
            webhookMethod: "POST",
          },
        },
        delete_intent: {
          targetType: "INTENT",
          targetId: targets.intentId,
          before: {
            name: "Book Visit",
            description: "d",
            triggerOnTypes: ["TEXT"],
            requiredFields: [],
            webhookUrl: "https://example.com/i",
            webhookMethod: "POST",
          },
          after: null,
        },
        create_webhook: {
          targetType: "AGENT",
          targetId: null,
          before: null,
          after: {
            event: "message.received",
            url: "https://example.com/new",
            method: "POST",
            headers: { "X-New": "s3cret" },
          },
        },
        update_webhook: {
          targetType: "WEBHOOK",
          targetId: targets.webhookId,
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
        },
        delete_webhook: {
          targetType: "WEBHOOK",
          targetId: targets.webhookId,
          before: {
            event: "message.sent",
            url: "https://example.com/w",
            method: "POST",
            headers: { "X-Key": "k" },
          },
          after: null,
        },
      };
      const proposals = proposalsFor(targets);
      for (const [tool, args] of Object.entries(proposals)) {
        const before = await snapshot(app);
        const approval = await propose(ctx, args);
        assert.equal(approval.tool, tool);
        assert.equal(approval.status, "PENDING");
        assert.equal(approval.agentId, targets.agentId, tool);
        assert.equal(approval.targetType, expected[tool].targetType, tool);
        assert.equal(approval.targetId, expected[tool].targetId, tool);
        assert.deepEqual(approval.before, expected[tool].before, tool);
        assert.deepEqual(approval.after, expected[tool].after, tool);
        assert.equal(approval.rationale, `because ${tool}`);
        assert.equal(approval.proposedBy, manager.userId);
        assert.equal(approval.decidedBy, null);
        assert.equal(approval.supervisorMessageId, null);
        assert.equal(approval.createdAt.toISOString(), START.toISOString());
        assert.equal(approval.expiresAt.toISOString(), "2026-03-02T10:00:00.000Z");
        // Only the approval row was added.
        const after = JSON.parse(await snapshot(app));
        const was = JSON.parse(before);
        assert.deepEqual(after.slice(0, -1), was.slice(0, -1), tool);
        assert.equal(after.at(-1).length, was.at(-1).length + 1, tool);
      }
      assert.equal(await db.pendingApproval.count({ where: { status: "PENDING" } }), 9);
      assert.equal(await db.promptVersion.count(), 0);
    });

    await t.step("header values are sealed in the stored snapshots", async () => {
      const rows = await db.pendingApproval.findMany({
        where: { tool: { in: ["create_webhook", "update_webhook"] } },
      });
      assert.equal(rows.length, 2);
      for (const row of rows) {
        const text = JSON.stringify([row.before, row.after]);
        assert.doesNotMatch(text, /s3cret|"k2?"/);
        assert.match(text, /sb1:/);
      }
    });

    await t.step("a VIEWER's context sees the header values masked", async () => {
      const viewer = await seed.member(workspaceId, "VIEWER");
      const vctx = await actorOf(app, viewer.token, workspaceId);
      const approval = await propose(vctx, proposalsFor(targets).create_webhook);
      assert.deepEqual((approval.after as Record<string, unknown>).headers, { "X-New": "********" });
      await db.pendingApproval.delete({ where: { id: approval.id } });
    });

    await t.step(
      "refused: invalid arguments, unknown tool, other workspace, impossible changes; nothing stored",
      async () => {
        const p = proposalsFor(targets);
        const f = proposalsFor(foreign);
        const before = await snapshot(app);
        const cases: Array<[unknown, number, string, RegExp?]> = [
          [null, 400, "VALIDATION_FAILED"],
          ["apply now", 400, "VALIDATION_FAILED"],
          [{ ...p.update_agent_prompt, tool: "drop_database" }, 400, "VALIDATION_FAILED", /tool/],
          [
            { ...p.update_agent_prompt, change: { systemPrompt: "" } },
            400,
            "VALIDATION_FAILED",
            /change\.systemPrompt/,
          ],
          [
            { ...p.update_agent_prompt, change: { systemPrompt: "x", rationale: "y" } },
            400,
            "VALIDATION_FAILED",
            /unknown field/,
          ],
          [{ ...p.update_agent_prompt, rationale: "" }, 400, "VALIDATION_FAILED", /rationale/],
          [
            { ...p.toggle_agent_active, change: { status: "DELETED" } },
            400,
            "VALIDATION_FAILED",
            /change\.status/,
          ],
          [
            { ...p.toggle_agent_active, change: { status: "ACTIVE" } },
            400,
            "VALIDATION_FAILED",
            /changes nothing/,
          ],
          [{ ...p.create_intent, change: { name: "x" } }, 400, "VALIDATION_FAILED", /change\.description/],
          [{ ...p.create_intent, change: { ...INTENT, name: "Book Visit" } }, 409, "DUPLICATE_INTENT"],
          [
            { ...p.create_intent, change: { ...INTENT, name: "Loop", webhookUrl: "http://10.1.2.3/x" } },
            400,
            "VALIDATION_FAILED",
            /webhookUrl/,
          ],
          [{ ...p.update_intent, change: { triggerOnTypes: [] } }, 400, "VALIDATION_FAILED"],
          [{ ...p.delete_intent, change: { now: true } }, 400, "VALIDATION_FAILED"],
          [
            { ...p.create_webhook, change: { event: "nope", url: "https://example.com" } },
            400,
            "VALIDATION_FAILED",
          ],
          [{ ...p.update_webhook, change: { headers: { Host: "x" } } }, 400, "VALIDATION_FAILED"],
          [{ ...p.update_webhook, target: {} }, 400, "VALIDATION_FAILED", /target\.webhookId/],
          [{ ...p.update_webhook, target: { intentId: targets.intentId } }, 400, "VALIDATION_FAILED"],
          [{ ...p.update_agent_prompt, target: { agentId: "nope" } }, 404, "NOT_FOUND"],
          [f.update_agent_prompt, 404, "NOT_FOUND", /Agent not found/],
          [f.create_intent, 404, "NOT_FOUND"],
          [f.update_intent, 404, "NOT_FOUND", /Intent not found/],
          [f.delete_webhook, 404, "NOT_FOUND", /Webhook not found/],
          [
            { ...p.delete_webhook, target: { webhookId: targets.webhookId, agentId: foreign.agentId } },
            404,
            "NOT_FOUND",
          ],
        ];
        for (const [args, status, code, message] of cases) {
          await refused(propose(ctx, args), status, code, message).catch((e) => {
            throw new Error(`${JSON.stringify(args)}: ${e.message}`);
          });
        }
        assert.equal(await snapshot(app), before);
      },
    );
  } finally {
    await ta.close();
  }
});

const INTENT = {
  description: "d",
  triggerOnTypes: ["TEXT"],
  requiredFields: [],
  webhookUrl: "https://example.com/i",
};
