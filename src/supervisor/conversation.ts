/**
 * The workspace's one supervisor conversation, shared by its OWNERs and MANAGERs: created on first use, safe when two
 * first calls race; read with every stored message; reset by erasing the messages. Requires
 * `supervisor:use` (OWNER, MANAGER and so API tokens).
 */
import type { ActorContext } from "../context.ts";
import { authorize } from "../auth/permissions.ts";
import { restRow } from "../reads/rest.ts";
import { supervisorConversationView } from "./views.ts";

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

/** `{ id, createdAt, messages }`, every stored message oldest first (the read planner, one statement). */
export async function getConversation(ctx: ActorContext): Promise<Record<string, unknown>> {
  authorize(ctx.actor, "supervisor:use");
  const id = await conversationIdOf(ctx);
  return JSON.parse(await restRow(ctx, supervisorConversationView, id));
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
