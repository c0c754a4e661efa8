/**
 * The workspace's one supervisor conversation, shared by its OWNERs and MANAGERs: created on first use, safe when two
 * first calls race; read with every stored message; reset by erasing the messages. Requires
 * `supervisor:use` (OWNER, MANAGER and so API tokens).
 */
import type { ActorContext } from "../context.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { authorize } from "../auth/permissions.ts";

/** The conversation's id, creating the row when the workspace has none yet. */
export async function conversationIdOf(ctx: ActorContext): Promise<string> {
  const workspaceId = ctx.actor.workspaceId;
  const found = await ctx.db.supervisorConversation.findUnique({
    where: { workspaceId },
    select: { id: true },
  });
  if (found) return found.id;
  // ON CONFLICT DO NOTHING: of two concurrent first calls one inserts, both then read the same row.
  await ctx.db.supervisorConversation.createMany({ data: [{ workspaceId }], skipDuplicates: true });
  const row = await ctx.db.supervisorConversation.findUniqueOrThrow({
    where: { workspaceId },
    select: { id: true },
  });
  return row.id;
}

/** Oldest first, as the SupervisorConversation and SupervisorMessage types list them. */
const oldestFirst = [{ createdAt: "asc" }, {
  id: "asc",
}] as const satisfies Prisma.SupervisorMessageOrderByWithRelationInput[];

/** What the SupervisorConversation type shows beside the row: every message with the approvals it proposed. */
const conversationInclude = {
  messages: { orderBy: oldestFirst, include: { approvals: { orderBy: oldestFirst } } },
} as const satisfies Prisma.SupervisorConversationInclude;

/** The conversation's stored row with every stored message, oldest first. */
export async function getConversation(
  ctx: ActorContext,
): Promise<Prisma.SupervisorConversationGetPayload<{ include: typeof conversationInclude }>> {
  authorize(ctx.actor, "supervisor:use");
  const id = await conversationIdOf(ctx);
  return await ctx.db.supervisorConversation.findUniqueOrThrow({
    where: { id },
    include: conversationInclude,
  });
}

/**
 * Erases the history. The conversation keeps its id; approvals the erased messages created stay,
 * their `supervisorMessageId` set null by the foreign key; the day's credit use stays counted.
 */
export async function resetConversation(ctx: ActorContext): Promise<void> {
  authorize(ctx.actor, "supervisor:use");
  await ctx.db.supervisorMessage.deleteMany({
    where: { conversation: { workspaceId: ctx.actor.workspaceId } },
  });
}
