/**
 * The reference of the read planner's differential test: graphql-js `execute` over the app's own
 * schema, its read fields resolved through Prisma as plugin-prisma's root fields do
 * (src/graphql/prisma_reads.ts), so that every field below them resolves through the declared
 * types' own resolvers (plugin-prisma's relations and connections, selects, presented fields),
 * never through the planner. One declaration, two executors.
 *
 * As /graphql answers a read operation: every root's access is checked before anything is read
 * (the first refused root is the error), and the first root field in document order that fails is
 * the error; so the root fields run one after another here (graphql-js would report whichever
 * failed first in time).
 */
import {
  type DocumentNode,
  execute,
  type ExecutionResult,
  getOperationAST,
  GraphQLError,
  type GraphQLFieldConfig,
  GraphQLObjectType,
  GraphQLSchema,
  Kind,
} from "graphql";
import type { Deps } from "../../src/context.ts";
import { buildSchema } from "../../src/graphql/schema.ts";
import { buildContext, type GraphQLContext } from "../../src/graphql/context.ts";
import { prismaRead } from "../../src/graphql/prisma_reads.ts";
import { CAPABILITIES } from "../../src/capabilities.ts";
import type { ReadCapability } from "../../src/shared/capability.ts";
import { authorize } from "../../src/auth/permissions.ts";
import { AppError } from "../../src/shared/errors.ts";

const { schema } = buildSchema();

const READS: ReadonlyMap<string, ReadCapability> = new Map(
  CAPABILITIES.flatMap((c) => c.kind === "read" ? [[c.name, c] as const] : []),
);

/** The context of one execution: the app's, and the queue that runs root fields in order. */
interface ReferenceContext extends GraphQLContext {
  inOrder<T>(run: () => Promise<T>): Promise<T>;
}

/** The app's schema with each read's root field resolved through Prisma, in document order. */
function buildReferenceSchema(): GraphQLSchema {
  const query = schema.getQueryType()!;
  const config = query.toConfig();
  const fields: Record<string, GraphQLFieldConfig<unknown, ReferenceContext>> = {};
  for (const [name, field] of Object.entries(config.fields)) {
    const read = READS.get(name);
    if (!read) {
      fields[name] = field;
      continue;
    }
    const resolve = prismaRead(read);
    fields[name] = {
      ...field,
      resolve: (root, args, ctx, info) => ctx.inOrder(async () => await resolve(root, args, ctx, info)),
    };
  }
  const { types, ...rest } = schema.toConfig();
  return new GraphQLSchema({
    ...rest,
    query: new GraphQLObjectType({ ...config, fields }),
    types: types.filter((t) => t !== query),
  });
}

export const referenceSchema: GraphQLSchema = buildReferenceSchema();

/**
 * The reference answer of `document` for the bearer `token` in `workspaceId`, its errors as
 * /graphql reports them (message, path, code).
 */
export async function referenceExecute(
  deps: Deps,
  token: string,
  workspaceId: string,
  document: DocumentNode,
  variables: Record<string, unknown>,
): Promise<ExecutionResult> {
  const request = new Request("http://reference.test/graphql", {
    headers: { authorization: `Bearer ${token}`, "x-workspace-id": workspaceId },
  });
  let previous: Promise<unknown> = Promise.resolve();
  const context: ReferenceContext = Object.assign(buildContext(deps, request), {
    inOrder<T>(run: () => Promise<T>): Promise<T> {
      const next = previous.then(run);
      previous = next.catch(() => {});
      return next;
    },
  });
  const { actor } = await context.actor();
  const error = (e: unknown, path: readonly (string | number)[]) => {
    const code = e instanceof AppError ? e.code : e instanceof GraphQLError ? e.extensions?.code : undefined;
    return new GraphQLError((e as Error).message, { path, extensions: { code } });
  };
  const op = getOperationAST(document);
  for (const s of op?.selectionSet.selections ?? []) {
    if (s.kind !== Kind.FIELD) continue;
    const read = READS.get(s.name.value);
    try {
      if (read) authorize(actor, read.action);
    } catch (e) {
      return { data: null, errors: [error(e, [s.alias?.value ?? s.name.value])] };
    }
  }
  const result = await execute({
    schema: referenceSchema,
    document,
    variableValues: variables,
    contextValue: context,
  });
  return {
    data: result.data ?? null,
    errors: result.errors?.map((e) => error(e.originalError ?? e, e.path ?? [])),
  };
}
