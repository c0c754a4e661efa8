/**
 * The read capabilities resolved through Prisma, the way plugin-prisma's root fields resolve
 * (`prismaField`, `prismaConnection`): the rows a read names, loaded with the query plugin-prisma
 * plans from the document (`queryFromInfo`), then every field through the declared types' own
 * resolvers (./types/: their relatedConnections, selects and presented fields). /graphql answers
 * read-only operations with the read planner (src/reads/graphql.ts' fast path) and a read in any
 * other operation with this, the other executor of the same declarations, which the differential
 * test (tests/differential_test.ts) checks the planner against.
 *
 * What a read names is the capability's declaration (src/shared/capability.ts): the rows by id,
 * the first in the actor's workspace and each under the previous one, and the page at the end, in
 * the order its relation declares; refusals and 404s are the app's (authorize, notFoundAt).
 */
import type { GraphQLFieldResolver, GraphQLResolveInfo } from "graphql";
import { prismaConnectionHelpers, queryFromInfo } from "@pothos/plugin-prisma";
import { builder } from "./builder.ts";
import type { GraphQLContext } from "./context.ts";
import {
  type Keyset,
  keysetQuery,
  type RelayArgs,
  standInArgs,
  withKeysetCursors,
} from "./keyset_connections.ts";
import { filterValue, isReadFilter, type ReadCapability } from "../shared/capability.ts";
import type { View } from "../shared/view.ts";
import { authorize } from "../auth/permissions.ts";
import { isOneRow, notFoundAt, stepsOf, viewOfRead } from "../reads/plan.ts";
import { viewOf } from "../reads/views.ts";
import { argumentNames } from "../reads/graphql.ts";

type Row = Record<string, unknown>;
type Args = RelayArgs & Record<string, unknown>;

/** What is used here of a Prisma model's delegate (the model is named by a view's table). */
interface Delegate {
  findFirst(args: object): Promise<Row | null>;
  findMany(args: object): Promise<Row[]>;
}

/** The Prisma delegate of `view`'s model (also ./row_answers.ts'). */
export function delegateOf(ctx: GraphQLContext, view: View): Delegate {
  if (!view.table) throw new Error(`${view.name} has no table`);
  const name = view.table.charAt(0).toLowerCase() + view.table.slice(1);
  return (ctx.deps.db as unknown as Record<string, Delegate>)[name];
}

const idColumn = (view: View) => view.fields.id?.column ?? "id";

/**
 * plugin-prisma's Relay rules (page size, direction, hasNextPage / hasPreviousPage) for a model's
 * pages. The model is the view's, known at run time, while plugin-prisma's types name one: any
 * model has the `id` the helper's own cursor reads.
 */
const helperOf = (model: string) => prismaConnectionHelpers(builder, model as "Agent", { cursor: "id" });
const helpers = new Map<string, ReturnType<typeof helperOf>>();

/** A page of `view`'s rows matching `where`, by `keyset`, as a Relay connection of plugin-prisma's. */
async function page(
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
  view: View,
  where: Row,
  keyset: Keyset,
  args: Args,
): Promise<unknown> {
  const model = view.table!;
  let helper = helpers.get(model);
  if (!helper) helpers.set(model, helper = helperOf(model));
  // plugin-prisma gets stand-in cursors (./keyset_connections.ts): its take and skip, our position.
  const pothosArgs = standInArgs(args);
  // Its query (take, skip, stand-in cursor) selects the cursor's column only (no nested selection:
  // `() => true`); the nodes' query below selects what the document asks.
  const query: Row = helper.getQuery(pothosArgs, ctx, () => true);
  const { select: _cursorOnly, ...paging } = query;
  const nodes = await queryFromInfo({
    context: ctx,
    info,
    typeName: view.name,
    select: { [keyset.sortKey]: true, [keyset.idColumn]: true },
    paths: [["edges", "node"]],
    awaitSelections: true,
  });
  const order = keyset.order;
  const rows = await delegateOf(ctx, view).findMany({
    ...keysetQuery(
      { ...paging, where, orderBy: [{ [keyset.sortKey]: order }, { [keyset.idColumn]: order }] },
      args,
      keyset,
    ),
    ...nodes,
  });
  return withKeysetCursors(
    helper.resolve(rows as Parameters<typeof helper.resolve>[0], pothosArgs, ctx),
    keyset,
  );
}

/** The resolver of `read`'s root field through Prisma and the declared types' resolvers. */
export function prismaRead(read: ReadCapability): GraphQLFieldResolver<unknown, GraphQLContext, Args> {
  // The views are read from the built schema: known at the first call, not while it is built.
  let resolver: GraphQLFieldResolver<unknown, GraphQLContext, Args> | undefined;
  return (root, args, ctx, info) => (resolver ??= readResolver(read))(root, args, ctx, info);
}

function readResolver(read: ReadCapability): GraphQLFieldResolver<unknown, GraphQLContext, Args> {
  const names = argumentNames(read);
  const steps = stepsOf(read);
  const one = isOneRow(read);
  const { view } = viewOfRead(read);
  const from = viewOf(read.from.view);
  const ws = from.workspaceColumn;
  if (!ws) throw new Error(`${read.name}: ${from.name} is not listed under the workspace`);
  return async (_root, args, ctx, info) => {
    const { actor } = await ctx.actor();
    authorize(actor, read.action);
    // The rows named by id: the first in the workspace, each next one under the previous one.
    let at = from;
    let parentId: unknown;
    for (const [i, step] of steps.entries()) {
      let where: Row;
      if (i === 0) where = { [ws]: actor.workspaceId };
      else {
        const rel = at.relations?.[step.relation!];
        if (rel?.kind !== "connection" && rel?.kind !== "list") {
          throw new Error(`${read.name}: ${at.name}.${step.relation} is not a relation to many`);
        }
        at = rel.view();
        where = { [rel.foreignKey]: parentId };
      }
      where[idColumn(at)] = String(args[names[step.idParam]]);
      const last = one && i === steps.length - 1;
      const query = last
        ? await queryFromInfo({ context: ctx, info, awaitSelections: true })
        : { select: { [idColumn(at)]: true } };
      const row = await delegateOf(ctx, at).findFirst({ where, ...query });
      if (!row) throw notFoundAt(read, i);
      if (last) return row;
      parentId = row[idColumn(at)];
    }
    // A page: of the workspace's rows, or of the last row's relation.
    let where: Row;
    let keyset: Keyset;
    if (steps.length === 0) {
      where = { [ws]: actor.workspaceId };
      keyset = {
        sortKey: read.from.sortKey ?? "createdAt",
        order: read.from.order ?? "asc",
        idColumn: idColumn(view),
      };
    } else {
      const rel = at.relations?.[read.path!.at(-1)!.relation];
      if (rel?.kind !== "connection") throw new Error(`${read.name} does not end in a connection`);
      where = { [rel.foreignKey]: parentId };
      keyset = { sortKey: rel.sortKey ?? "createdAt", order: rel.order, idColumn: idColumn(view) };
    }
    const conditions: Row[] = [];
    for (const [name, filter] of Object.entries(read.filters ?? {})) {
      if (args[name] == null) continue;
      const value = filterValue(name, filter, String(args[name]));
      if (isReadFilter(filter)) conditions.push(filter.prisma(value, actor));
      else where[view.fields[name].column ?? name] = value;
    }
    if (conditions.length) where.AND = conditions;
    return await page(ctx, info, view, where, keyset, args);
  };
}
