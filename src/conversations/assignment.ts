/**
 * Who holds a conversation, and how far each member has read it (docs/behaviour.md "Assignment and
 * unread"). Assigning is conversation:attend: OWNER and MANAGER (conversation:assign-others) may give
 * it to any member who may attend or to nobody, an AGENT only to themselves, or to nobody while they
 * hold it. Each change publishes `conversation.assigned` (live feeds only: no webhook has it).
 */
import { z } from "zod";
import type { ActorContext } from "../context.ts";
import { can } from "../auth/permissions.ts";
import { AppError, forbidden, notFound } from "../shared/errors.ts";
import { answer, type ConversationRow } from "./handoff.ts";
import { markRead, setAssignee } from "./assignment_sql.ts";
import { publishAssigned } from "./transitions.ts";

export const assignSchema = z.object({
  userId: z.string().min(1).max(64).nullable().describe(
    "The member to hold the conversation (a user id of the workspace, not a VIEWER), or null for nobody.",
  ),
}).strict();

/**
 * Assigns the conversation (conversation:attend; others: conversation:assign-others). 404 for a
 * conversation or member not of the workspace, 400 for a VIEWER, 409 CONVERSATION_CLOSED.
 */
export async function assign(
  ctx: ActorContext,
  id: string,
  { userId }: z.output<typeof assignSchema>,
): Promise<ConversationRow> {
  const self = ctx.actor.userId;
  const others = can(ctx.actor, "conversation:assign-others");
  if (!others && userId !== null && userId !== self) {
    throw forbidden(`Your role (${ctx.actor.role}) may assign conversations only to yourself.`);
  }
  await ctx.db.$transaction(async (tx) => {
    const result = await setAssignee(tx, {
      workspaceId: ctx.actor.workspaceId,
      conversationId: id,
      userId,
      now: ctx.clock.now(),
    });
    if (result === "missing") throw notFound("Conversation");
    if (result === "closed") throw new AppError("CONVERSATION_CLOSED", 409, "The conversation is closed.");
    if (result === "notMember") {
      if (userId === self) throw forbidden("A VIEWER cannot hold conversations.");
      const viewer = await tx.membership.findFirst({
        where: { workspaceId: ctx.actor.workspaceId, userId: userId!, role: "VIEWER" },
        select: { id: true },
      });
      if (!viewer) throw notFound("Member");
      throw new AppError(
        "VALIDATION_FAILED",
        400,
        "Invalid input: userId: a VIEWER cannot hold conversations",
        [
          { path: "userId", message: "a VIEWER cannot hold conversations" },
        ],
      );
    }
    // An AGENT lets go only of what they hold (nobody's stays nobody's).
    if (!others && userId === null && result.before !== null && result.before !== self) {
      throw forbidden(`Your role (${ctx.actor.role}) may unassign only a conversation you hold.`);
    }
    if (result.before !== userId) {
      await publishAssigned(ctx.events, tx, {
        workspaceId: ctx.actor.workspaceId,
        agentId: result.agentId,
        conversationId: id,
        assigneeId: userId,
      });
    }
  });
  return await answer(ctx, id);
}

/**
 * The calling member has read the conversation up to now (workspace:read): its `unread` counts from
 * here. 404 for a conversation not of the workspace; an API token has no read marker (403).
 */
export async function read(ctx: ActorContext, id: string): Promise<void> {
  const userId = ctx.actor.userId;
  if (userId === null) throw forbidden("An API token is no member: it has no read marker.");
  const found = await markRead(ctx.db, {
    workspaceId: ctx.actor.workspaceId,
    conversationId: id,
    userId,
    now: ctx.clock.now(),
  });
  if (!found) throw notFound("Conversation");
}
