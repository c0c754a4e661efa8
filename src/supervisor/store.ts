/**
 * The two writes of a supervisor turn, one SQL statement each (a turn's latency is mostly round
 * trips to PostgreSQL): opening it (the conversation found or created, the person's message and
 * the answer's row stored, the history read) and settling it (the answer with its usage and
 * credits, and the day's credit use, together).
 */
import type { ActorContext } from "../context.ts";
import type { PricedUsage } from "./credits.ts";
import { storableJson, storableText } from "../shared/storable.ts";
import type { RowOf } from "../db/statement.ts";
import { openTurnStatement, settleAnswerStatement, type TurnHistory } from "./sql.ts";

export interface OpenedTurn {
  conversationId: string;
  /** The answer's row, empty until settled (approvals of the turn point at it). */
  replyId: string;
  /** The last `historySize` messages with content, oldest first, the person's new one last. */
  history: TurnHistory;
}

/**
 * Stores the person's message (at `at`) and the answer's empty row (1 ms later, so the history's
 * order is the turn's order) in the workspace's conversation, created when absent (ON CONFLICT:
 * concurrent first turns share one), and reads the history as it was before, plus the message.
 */
export async function openTurn(
  ctx: ActorContext,
  message: string,
  options: { at: Date; historySize: number },
): Promise<OpenedTurn> {
  const replyId = crypto.randomUUID();
  const answeredAt = new Date(options.at.getTime() + 1);
  const [row] = await openTurnStatement.rows(ctx.db, {
    workspaceId: ctx.actor.workspaceId,
    conversationId: crypto.randomUUID(),
    questionId: crypto.randomUUID(),
    userId: ctx.actor.userId,
    message,
    at: options.at,
    replyId,
    answeredAt,
    historySize: options.historySize,
  });
  return {
    conversationId: row.id,
    replyId,
    history: [...(row.history ?? []), { role: "USER", content: message }],
  };
}

/** The answer as stored (every column but its conversation). */
export type StoredAnswer = RowOf<typeof settleAnswerStatement.columns>;

/**
 * Writes the answer and adds its usage to the workspace's UTC day of `at`, atomically (one
 * statement). The day is counted even when a reset erased the answer meanwhile: the tokens were
 * spent. Returns the answer, or null when it was erased.
 */
export async function settleAnswer(
  ctx: ActorContext,
  replyId: string,
  answer: { content: string; toolCalls: unknown; usage: PricedUsage; credits: number; at: Date },
): Promise<StoredAnswer | null> {
  const u = answer.usage;
  const day = new Date(Date.UTC(answer.at.getUTCFullYear(), answer.at.getUTCMonth(), answer.at.getUTCDate()));
  // The model's text may hold what PostgreSQL cannot store; nothing of it may fail the write.
  const content = storableText(answer.content);
  const toolCalls = answer.toolCalls === null ? null : JSON.stringify(storableJson(answer.toolCalls));
  const rows = await settleAnswerStatement.rows(ctx.db, {
    workspaceId: ctx.actor.workspaceId,
    day,
    u,
    credits: answer.credits,
    content,
    toolCalls,
    replyId,
  });
  return rows[0] ?? null;
}

/** Removes the answer's row of a turn that failed before any model answer or approval. */
export async function dropAnswer(ctx: ActorContext, replyId: string): Promise<void> {
  await ctx.db.supervisorMessage.deleteMany({ where: { id: replyId } });
}
