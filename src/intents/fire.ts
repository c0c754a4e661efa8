/**
 * The `intent.fired` event, committed before the webhook of that intent is called: the reply
 * (conversations/pipeline/reply.ts) calls fireIntent() for each intent tag it finds, and the
 * intent's own webhook (conversations/intent_call.ts) only after it returns.
 */
import type { Deps } from "../context.ts";

/** One event webhook attempt (at most 5 s) plus a margin. */
const DEFAULT_WAIT_MS = 6000;

export interface FiredIntent {
  workspaceId: string;
  agentId: string;
  conversationId: string;
  intentName: string;
  /** The required fields extracted from the tag, one string per field. */
  fields: Record<string, string>;
}

/**
 * Publishes `intent.fired` (data `{ intentName, fields }`) in a transaction of its own and commits
 * it, so its deliveries are durable whatever happens next; then waits until the first attempt of
 * each delivery has been made (answered, failed or timed out), at most `waitMs` (default: one
 * attempt's timeout plus a second). Retries of a failed delivery do not hold the intent back.
 * Returns the event's id. Internal: called by the conversation engine, not an API action.
 */
export async function fireIntent(
  deps: Pick<Deps, "db" | "events">,
  intent: FiredIntent,
  options: { waitMs?: number } = {},
): Promise<string> {
  const eventId = await deps.db.$transaction((tx) =>
    deps.events.publish(tx, {
      type: "intent.fired",
      workspaceId: intent.workspaceId,
      agentId: intent.agentId,
      conversationId: intent.conversationId,
      data: { intentName: intent.intentName, fields: intent.fields },
    })
  );
  await deps.events.settled(eventId, options.waitMs ?? DEFAULT_WAIT_MS);
  return eventId;
}
