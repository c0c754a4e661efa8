/**
 * The Pothos schema builder: plugins and their options only. The types are declared with it in
 * ./types/, the capabilities' fields (with their input and answer types) are derived by ./derive.ts,
 * and ./schema.ts assembles them.
 */
import SchemaBuilder from "@pothos/core";
import ScopeAuthPlugin from "@pothos/plugin-scope-auth";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import type PrismaTypes from "../generated/pothos-types.ts";
import { getDatamodel } from "../generated/pothos-types.ts";
import PlannedAnswersPlugin from "./planned_answers.ts";
import KeysetConnectionsPlugin from "./keyset_connections.ts";
import { DEFAULT_PAGE, MAX_CONNECTION_PAGE } from "../shared/pagination.ts";
import { forbidden } from "../shared/errors.ts";
import type { GraphQLContext } from "./context.ts";

/** The builder every type registers with. */
export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  AuthScopes: {
    /** A valid bearer credential (login JWT or API token). */
    authenticated: boolean;
    /** A credential acting in the workspace named by x-workspace-id. */
    member: boolean;
  };
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}>({
  // Fields are non-null unless declared nullable (nullable columns, optional results).
  defaultFieldNullability: false,
  // Scope checks first; then a planned answer is read by response key, before plugin-prisma would
  // look for a Prisma row's loaded relations in it; a Prisma row's connections page by the API's
  // cursors (./keyset_connections.ts).
  plugins: [ScopeAuthPlugin, PlannedAnswersPlugin, KeysetConnectionsPlugin, RelayPlugin, PrismaPlugin],
  // Connections (`t.relatedConnection`, and the derived reads' pages) as Relay's: `first`/`after`/
  // `last`/`before`, non-null edges and nodes, PageInfo; cursors are the planner's (src/shared/pagination.ts).
  relay: {},
  scopeAuth: {
    // Both scopes reuse authenticate()/actorFor(): a failure throws the same AppError REST answers
    // (UNAUTHENTICATED, WORKSPACE_REQUIRED, FORBIDDEN); the role rules are the capabilities'.
    authScopes: (ctx) => ({
      authenticated: () => ctx.principal().then(() => true),
      member: () => ctx.actor().then(() => true),
    }),
    unauthorizedError: () => forbidden(),
  },
  prisma: {
    // The request's client: the same pool and per-request cancellation as the services'.
    client: (ctx) => ctx.deps.db,
    dmmf: getDatamodel(),
    // Descriptions are the declarations' own, not schema.prisma's comments.
    exposeDescriptions: false,
    onUnusedQuery: null,
    // The read planner's page sizes (src/reads/page_window.ts).
    defaultConnectionSize: DEFAULT_PAGE,
    maxConnectionSize: MAX_CONNECTION_PAGE,
  },
});
