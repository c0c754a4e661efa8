// TEMPORARY shim until the planner branch lands (h/planner).
import type { GraphQLResolveInfo } from "graphql";
import type { ActorContext } from "../context.ts";
import type { GraphQLContext } from "../graphql/context.ts";
import type { OperationCapability, ReadCapability } from "../shared/capability.ts";
export const plannedObjects = new WeakSet<object>();
export function graphQLRead(
  _ctx: GraphQLContext,
  _read: ReadCapability,
  _ids: Record<string, unknown>,
  _args: Record<string, unknown>,
  _info: GraphQLResolveInfo,
): Promise<unknown> {
  throw new Error("planner not merged");
}
export function graphQLOperationAnswer(
  _ctx: ActorContext,
  _cap: OperationCapability,
  _result: unknown,
  _info: GraphQLResolveInfo,
): Promise<unknown> {
  throw new Error("planner not merged");
}
