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
  /**
   * The credential as an `Authorization` value: the header, or the console's session cookie once
   * the transport checked where the request came from (src/auth/console_cookie.ts); null: none.
   */
  authorization: string | null;
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

/**
 * Builds the per-request context; nothing is resolved until a resolver asks for it. `authorization`:
 * the request's credential as the transport read it (default: its Authorization header).
 */
export function buildContext(
  deps: Deps,
  request: Request,
  clientAddress: string | null = null,
  authorization: string | null = request.headers.get("authorization"),
): GraphQLContext {
  let principal: Promise<Principal> | undefined;
  let actor: Promise<ActorContext> | undefined;
  const ctx: GraphQLContext = {
    deps,
    request,
    clientAddress,
    authorization,
    principal: () => principal ??= authenticate(deps, authorization),
    actor: () =>
      actor ??= (async () => {
        // Credentials first, then the header: the same order as REST's actorOf().
        const workspaceId = () => requireWorkspaceHeader(request.headers.get("x-workspace-id"));
        return {
          ...deps,
          actor: await authenticateActor(deps, authorization, workspaceId),
        };
      })(),
    actorIn: async (workspaceId) => ({
      ...deps,
      actor: await authenticateActor(deps, authorization, () => workspaceId),
    }),
  };
  return ctx;
}
