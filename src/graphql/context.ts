/**
 * The GraphQL context, built once per request by Yoga's context factory. Credentials and the acting
 * workspace are resolved lazily (and at most once), so `login` and `acceptInvite` work without them.
 */
import type { ActorContext, Deps } from "../context.ts";
import type { Principal } from "../auth/actor.ts";
import { authenticate, authenticateActor, requireWorkspaceHeader } from "../auth/authenticate.ts";

export interface GraphQLContext {
  deps: Deps;
  request: Request;
  /** The client's socket address (null when unknown), for login abuse limits. */
  clientAddress: string | null;
  /** The bearer credential; rejects with 401 UNAUTHENTICATED. Memoized. */
  principal(): Promise<Principal>;
  /** The principal acting in the x-workspace-id workspace (400 WORKSPACE_REQUIRED, 403). Memoized. */
  actor(): Promise<ActorContext>;
  /** The principal acting in a workspace named by an argument (deleteWorkspace). Not memoized. */
  actorIn(workspaceId: string): Promise<ActorContext>;
  /**
   * Set by graphql-ws (src/graphql/ws.ts) on a subscription whose execution is shared by every
   * socket of this role and workspace: the transport checks each member's credential per event.
   */
  liveGroup?: boolean;
}

/** Builds the per-request context; nothing is resolved until a resolver asks for it. */
export function buildContext(
  deps: Deps,
  request: Request,
  clientAddress: string | null = null,
): GraphQLContext {
  let principal: Promise<Principal> | undefined;
  let actor: Promise<ActorContext> | undefined;
  const ctx: GraphQLContext = {
    deps,
    request,
    clientAddress,
    principal: () => principal ??= authenticate(deps, request.headers.get("authorization")),
    actor: () =>
      actor ??= (async () => {
        // Credentials first, then the header: the same order as REST's actorOf().
        const workspaceId = () => requireWorkspaceHeader(request.headers.get("x-workspace-id"));
        return {
          ...deps,
          actor: await authenticateActor(deps, request.headers.get("authorization"), workspaceId),
        };
      })(),
    actorIn: async (workspaceId) => ({
      ...deps,
      actor: await authenticateActor(deps, request.headers.get("authorization"), () => workspaceId),
    }),
  };
  return ctx;
}
