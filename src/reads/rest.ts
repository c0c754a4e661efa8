// TEMPORARY shim until the planner branch lands (h/planner).
import type { ActorContext } from "../context.ts";
import type { ReadCapability } from "../shared/capability.ts";
export function restRead(
  _ctx: ActorContext,
  _read: ReadCapability,
  _params: Record<string, string>,
  _query: Record<string, string>,
): Promise<string> {
  throw new Error("planner not merged");
}
