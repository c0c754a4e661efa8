/**
 * Conversations pinned for an agent's replays: every replay of a change of the agent includes them,
 * besides its latest ones (REPLAY_CONVERSATIONS). OWNER and MANAGER, as approvals (`supervisor:use`).
 */
import { z } from "zod";
import type { ActorContext } from "../context.ts";
import { authorize } from "../auth/permissions.ts";
import { notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { findAgentOr404 } from "../agents/service.ts";
import type { ReplayPin } from "../generated/prisma/client.ts";

export const pinSchema = z.strictObject({
  conversationId: z.string().describe("A conversation of the agent."),
});

/**
 * Pins a conversation of the agent (404 for a conversation of another agent or workspace). Pinning
 * it again answers the pin there is. Requires `supervisor:use`.
 */
export async function pinConversation(
  ctx: ActorContext,
  agentId: string,
  input: z.output<typeof pinSchema>,
): Promise<ReplayPin> {
  authorize(ctx.actor, "supervisor:use");
  const agent = await findAgentOr404(ctx, agentId, { id: true });
  const conversationId = assertId(input.conversationId, "Conversation");
  const conversation = await ctx.db.conversation.findFirst({
    where: { id: conversationId, agentId: agent.id },
    select: { id: true },
  });
  if (!conversation) throw notFound("Conversation");
  return await ctx.db.replayPin.upsert({
    where: { agentId_conversationId: { agentId: agent.id, conversationId } },
    create: { agentId: agent.id, conversationId, pinnedById: ctx.actor.userId },
    update: {},
  });
}

/** Unpins it; 404 when it is not pinned. Requires `supervisor:use`. */
export async function unpinConversation(
  ctx: ActorContext,
  ids: { agentId: string; conversationId: string },
): Promise<void> {
  authorize(ctx.actor, "supervisor:use");
  const agent = await findAgentOr404(ctx, ids.agentId, { id: true });
  const removed = await ctx.db.replayPin.deleteMany({
    where: { agentId: agent.id, conversationId: assertId(ids.conversationId, "Conversation") },
  });
  if (!removed.count) throw notFound("Pinned conversation");
}
