/**
 * Proposals (the supervisor's propose_change): the arguments the model sent, parsed with the REST
 * schemas of what they change, the target resolved in the actor's workspace, and the change tried
 * through the same service function approve will call, in a savepoint that is rolled back, so a
 * change that could not be executed now (a refused URL, a duplicate intent tag) is refused as a
 * tool error instead of becoming an approval. Nothing but the PENDING approval is stored.
 */
import { z } from "zod";
import type { ActorContext } from "../context.ts";
import { dryRun, joinTransaction, QUEUED_TRANSACTION } from "../db/transaction.ts";
import { badRequest, notFound } from "../shared/errors.ts";
import { parseInput, text } from "../shared/validation.ts";
import { CHANGE_KINDS, sameJson, sealSnapshot, type Snapshot } from "./changes.ts";
import { publishApprovalEvent } from "./events.ts";
import { APPROVAL_INCLUDE, APPROVAL_TOOLS, ApprovalToolEnum } from "./views.ts";
import type { PendingApproval } from "../generated/prisma/client.ts";
import { createReplay } from "../replay/start.ts";

/** How long a proposal waits for a decision before it expires. */
export const APPROVAL_LIFETIME_MS = 24 * 60 * 60 * 1000;

const id = z.string().max(200);
const target = z.strictObject({
  agentId: id.optional().describe(
    "The agent (prompt, training, status, and the agent of a new intent or webhook).",
  ),
  intentId: id.optional().describe("The intent (update_intent, delete_intent)."),
  webhookId: id.optional().describe("The webhook (update_webhook, delete_webhook)."),
});

/** The arguments as parsed before the tool is known. */
const envelope = z.strictObject({
  tool: ApprovalToolEnum.schema,
  target,
  change: z.record(z.string(), z.unknown()).default({}),
  rationale: text(10_000),
});

const CHANGE_DOC = [
  "update_agent_prompt: { systemPrompt } (target agentId)",
  "update_agent_training: { trainingContext } (target agentId)",
  'toggle_agent_active: { status: "ACTIVE" | "PAUSED" } (target agentId)',
  "create_intent: { name, description, triggerOnTypes, requiredFields, webhookUrl, webhookMethod? } (target agentId)",
  "update_intent: any of the create_intent fields (target intentId)",
  "delete_intent: {} (target intentId)",
  "create_webhook: { event, url, method?, headers? } (target agentId)",
  "update_webhook: any of the create_webhook fields (target webhookId)",
  "delete_webhook: {} (target webhookId)",
].join("; ");

/** The schema the model is shown: the envelope with `change` as the union of the nine. */
const forModel = z.object({
  tool: ApprovalToolEnum.schema.describe(`The change to propose: ${APPROVAL_TOOLS.join(", ")}.`),
  target: target.describe("The id of what the change acts on."),
  change: z.union(APPROVAL_TOOLS.map((t) => CHANGE_KINDS[t].change) as [z.ZodType, z.ZodType, ...z.ZodType[]])
    .describe(`The new values, per tool: ${CHANGE_DOC}.`),
  rationale: z.string().describe("Why; shown to the person who approves, and kept with a prompt version."),
});

/** The JSON schema of propose_change's arguments (from zod, z.toJSONSchema), for the tool list. */
export const proposeChangeParameters: Record<string, unknown> = (() => {
  const { $schema: _, ...schema } = z.toJSONSchema(forModel, {
    io: "input",
    unrepresentable: "any",
    reused: "inline",
  }) as Record<string, unknown>;
  return schema;
})();

/**
 * Validates a proposal from the model and stores a PENDING approval (before/after computed now,
 * expiresAt = now + 24 h from ctx.clock); changes nothing else. Throws AppError (4xx; a target of
 * another workspace is 404 like everywhere) whose message is fit to send back to the model as a
 * tool error. Publishes the "created" approval event in its transaction, and queues the replay of a
 * change of what the agent says (src/replay/). Answers the stored row.
 */
export async function proposeChange(
  ctx: ActorContext,
  args: unknown,
  origin: { supervisorMessageId: string | null },
): Promise<PendingApproval> {
  const proposal = parseInput(envelope, args);
  const kind = CHANGE_KINDS[proposal.tool];
  for (const key of ["intentId", "webhookId"] as const) {
    if (key !== kind.targetKey && proposal.target[key] !== undefined) {
      throw badRequest(`Invalid input: target.${key}: not used by ${kind.tool}`, [
        { path: `target.${key}`, message: `not used by ${kind.tool}` },
      ]);
    }
  }
  const targetId = proposal.target[kind.targetKey];
  if (targetId === undefined) {
    throw badRequest(`Invalid input: target.${kind.targetKey}: is required for ${kind.tool}`, [
      { path: `target.${kind.targetKey}`, message: `is required for ${kind.tool}` },
    ]);
  }
  const change = parseInput(z.strictObject({ change: kind.change }), { change: proposal.change })
    .change as Snapshot;

  const now = ctx.clock.now();
  return await ctx.db.$transaction(async (tx) => {
    const resolved = await kind.resolve(ctx, targetId, tx);
    // An agentId beside an intent or webhook must be its agent, as in the REST paths.
    if (proposal.target.agentId !== undefined && proposal.target.agentId !== resolved.agentId) {
      throw notFound(resolved.targetType === "INTENT" ? "Intent" : "Webhook");
    }
    const after = kind.after(resolved.before, change);
    if (resolved.before && after && sameJson(resolved.before, after)) {
      throw badRequest("Invalid input: change: it changes nothing (the values are already these)", [
        { path: "change", message: "changes nothing" },
      ]);
    }
    const plain = {
      targetId: resolved.targetId,
      agentId: resolved.agentId,
      before: resolved.before,
      after,
      rationale: proposal.rationale,
    };
    // The trial run: the same service call approve makes, undone at once.
    await dryRun(tx, () => kind.execute({ ...ctx, db: joinTransaction(tx) }, plain));
    // A change of what the agent says is replayed on the agent's recent conversations (src/replay/).
    const replayId = await createReplay(ctx, tx, {
      workspaceId: ctx.actor.workspaceId,
      agentId: resolved.agentId,
      after,
    });
    const created = await tx.pendingApproval.create({
      data: {
        workspaceId: ctx.actor.workspaceId,
        replayId,
        tool: kind.tool,
        targetType: resolved.targetType,
        targetId: resolved.targetId,
        agentId: resolved.agentId,
        before: (sealSnapshot(ctx, resolved.before) ?? undefined) as never,
        after: (sealSnapshot(ctx, after) ?? undefined) as never,
        rationale: proposal.rationale,
        supervisorMessageId: origin.supervisorMessageId,
        proposedById: ctx.actor.userId,
        expiresAt: new Date(now.getTime() + APPROVAL_LIFETIME_MS),
        createdAt: now,
      },
      include: APPROVAL_INCLUDE,
    });
    await publishApprovalEvent(ctx, tx, "approval.created", {
      ...created,
      workspaceId: ctx.actor.workspaceId,
    });
    return created;
  }, QUEUED_TRANSACTION);
}
