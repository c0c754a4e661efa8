/**
 * The Pothos schema builder: plugins and their options only. Types live in ./types/<domain>.ts and
 * are assembled by ./schema.ts.
 */
import SchemaBuilder from "@pothos/core";
import ScopeAuthPlugin from "@pothos/plugin-scope-auth";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import type PrismaTypes from "../generated/pothos-types.ts";
import { getDatamodel } from "../generated/pothos-types.ts";
import { forbidden } from "../shared/errors.ts";
import { DEFAULT_PAGE } from "../shared/pagination.ts";
import { LIMITS } from "./limits.ts";
import type { GraphQLContext } from "./context.ts";

/** The builder every type file registers its types with. */
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
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  // Fields are non-null unless declared nullable (nullable columns, optional results).
  defaultFieldNullability: false,
  plugins: [ScopeAuthPlugin, PrismaPlugin, RelayPlugin],
  scopeAuth: {
    // Both scopes reuse authenticate()/actorFor(): a failure throws the same AppError REST answers
    // (UNAUTHENTICATED, WORKSPACE_REQUIRED, FORBIDDEN); the role rules stay in the services.
    authScopes: (ctx) => ({
      authenticated: () => ctx.principal().then(() => true),
      member: () => ctx.actor().then(() => true),
    }),
    unauthorizedError: () => forbidden(),
  },
  prisma: {
    client: (ctx) => ctx.deps.db,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: "warn",
    defaultConnectionSize: DEFAULT_PAGE,
    maxConnectionSize: LIMITS.maxPageSize,
  },
  relay: {
    clientMutationId: "omit",
    cursorType: "String",
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
    // No global `node(id)` lookup: it would bypass the services' workspace scoping.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
});
