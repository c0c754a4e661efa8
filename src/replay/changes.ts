/**
 * Which approvals a replay is for, and the agent as an approval proposes it: a change of what the
 * agent says (its prompt, training context, behaviour flags, model or temperature).
 */
import type { Agent } from "../generated/prisma/client.ts";

/** The agent's columns a reply is made from (its request and its shaping): what a replay compares. */
export const REPLAYED_COLUMNS = [
  "systemPrompt",
  "trainingContext",
  "model",
  "temperature",
  "enabledHumanTransfer",
  "splitMessages",
  "enabledEmoji",
  "signMessages",
  "enabledVision",
] as const satisfies readonly (keyof Agent)[];

/** The agent as a replay reads it. */
export type ReplayAgent = Pick<Agent, "id" | "name" | typeof REPLAYED_COLUMNS[number]>;

/** Whether an approval writing `after` to its agent changes what the agent says. */
export function changesReplies(after: unknown): boolean {
  if (!after || typeof after !== "object") return false;
  return REPLAYED_COLUMNS.some((c) => Object.hasOwn(after, c));
}

/** The agent with the approval's `after` applied to the columns a reply is made from. */
export function proposedAgent(agent: ReplayAgent, after: unknown): ReplayAgent {
  const proposed: ReplayAgent = { ...agent };
  const values = (after ?? {}) as Record<string, unknown>;
  for (const c of REPLAYED_COLUMNS) {
    if (Object.hasOwn(values, c)) (proposed as Record<string, unknown>)[c] = values[c];
  }
  return proposed;
}
