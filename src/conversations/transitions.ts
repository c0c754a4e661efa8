/**
 * The status transitions of a conversation that other changes make inside their own transaction:
 * OPEN → HUMAN (the reply pipeline's tag, escalation or unavailable model; a person's takeover in
 * ./handoff.ts) and → CLOSED (a person's close; the inactivity auto-close of ./timers.ts). The state
 * check is in the UPDATE's WHERE, so of two racing changes one makes it; each publishes its event in
 * the same transaction.
 */
import type { Deps } from "../context.ts";
import type { SqlTx, Tx } from "../db/client.ts";
import type { EventBus } from "../shared/events.ts";
import { markHuman } from "./sql.ts";

/** Why a conversation went to a person: a transfer tag, an escalation (or no model), a takeover. */
export type HumanReason = "TAG" | "ESCALATION" | "MANUAL";

/** The conversation a transition changes, with the ids its event carries. */
export interface ConversationRef {
  id: string;
  workspaceId: string;
  agentId: string;
}

/**
 * Inside `tx`: OPEN → HUMAN with the reason and summary, and `human.transferred`
 * `{ transferSummary, reason }`. Returns false (and changes nothing) when it was not OPEN.
 */
export async function transferToHuman(
  deps: Pick<Deps, "events" | "clock">,
  tx: SqlTx,
  conversation: ConversationRef,
  transfer: { reason: HumanReason; summary: string; userId?: string | null },
): Promise<boolean> {
  const changed = await markHuman.run(tx, {
    id: conversation.id,
    reason: transfer.reason,
    summary: transfer.summary,
    userId: transfer.userId ?? null,
    now: deps.clock.now(),
  });
  if (changed !== 1) return false;
  await deps.events.publish(tx, {
    type: "human.transferred",
    workspaceId: conversation.workspaceId,
    agentId: conversation.agentId,
    conversationId: conversation.id,
    data: { transferSummary: transfer.summary, reason: transfer.reason },
  });
  return true;
}

/** Inside `tx`: → CLOSED with `conversation.closed { reason }`; false when it already was. */
export async function closeConversation(
  deps: Pick<Deps, "events" | "clock">,
  tx: Tx,
  conversation: ConversationRef,
  reason: "MANUAL" | "INACTIVITY",
  where: { lastMessageAt?: Date } = {},
): Promise<boolean> {
  const changed = await tx.conversation.updateMany({
    where: { id: conversation.id, status: { not: "CLOSED" }, ...where },
    data: { status: "CLOSED", closeReason: reason, closedAt: deps.clock.now(), replyDueAt: null },
  });
  if (changed.count !== 1) return false;
  await deps.events.publish(tx, {
    type: "conversation.closed",
    workspaceId: conversation.workspaceId,
    agentId: conversation.agentId,
    conversationId: conversation.id,
    data: { reason },
  });
  return true;
}

/** Inside `tx`: `conversation.assigned` for a conversation whose assignee changed. */
export async function publishAssigned(
  events: EventBus,
  tx: SqlTx,
  e: { workspaceId: string; agentId: string; conversationId: string; assigneeId: string | null },
): Promise<void> {
  await events.publish(tx, {
    type: "conversation.assigned",
    workspaceId: e.workspaceId,
    agentId: e.agentId,
    conversationId: e.conversationId,
    data: { assigneeId: e.assigneeId },
  });
}
