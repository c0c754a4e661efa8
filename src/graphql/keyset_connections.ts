/**
 * The API's cursors in plugin-prisma's connections. plugin-prisma pages a `t.relatedConnection` with
 * Prisma's `cursor` (an id in its own encoding, whose row must still exist); the API's cursors are
 * positions, (sort key, id) as src/shared/pagination.ts encodes them: a cursor of a deleted row or
 * of another list is still a place to continue from, and one that does not decode is BAD_CURSOR.
 *
 * So a connection paged through plugin-prisma (every `t.relatedConnection`, by the plugin below, and
 * the root pages of ./prisma_reads.ts) hands plugin-prisma a stand-in cursor, which it parses as
 * always and from which it takes direction, page size and hasNextPage / hasPreviousPage; its query
 * then pages by a keyset `where` instead of Prisma's cursor, and the cursors it answers are each
 * row's position. The read planner and plugin-prisma take and give the same cursors.
 */
import SchemaBuilder, {
  BasePlugin,
  completeValue,
  type PothosOutputFieldConfig,
  type SchemaTypes,
} from "@pothos/core";
import { formatPrismaCursor } from "@pothos/plugin-prisma";
import type { GraphQLFieldResolver } from "graphql";
import { badCursor, decodeCursor, encodeCursor } from "../shared/pagination.ts";
import type { Order } from "../shared/view.ts";

/** Relay's arguments of a connection field. */
export interface RelayArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

/** How a page is ordered: by (`sortKey`, `idColumn`) in `order`. */
export interface Keyset {
  sortKey: string;
  order: Order;
  idColumn: string;
}

// A cursor plugin-prisma parses (an empty id): it only marks that `after` / `before` was given.
const STAND_IN = formatPrismaCursor({ id: "" }, "id");

/** `args` as plugin-prisma gets them: a given cursor replaced by the stand-in. */
export function standInArgs<A extends RelayArgs>(args: A): A {
  return {
    ...args,
    ...(args.after != null ? { after: STAND_IN } : {}),
    ...(args.before != null ? { before: STAND_IN } : {}),
  };
}

/** The rows strictly after (`after`) or before (`before`) the cursor's position, in the page's order. */
export function keysetWhere(args: RelayArgs, keyset: Keyset): Record<string, unknown> | undefined {
  const raw = args.after ?? args.before;
  if (raw == null) return undefined;
  const position = decodeCursor(raw);
  if (!position) throw badCursor();
  const op = (args.after != null) === (keyset.order === "asc") ? "gt" : "lt";
  return {
    OR: [
      { [keyset.sortKey]: { [op]: position.at } },
      { [keyset.sortKey]: position.at, [keyset.idColumn]: { [op]: position.id } },
    ],
  };
}

/** plugin-prisma's query of a page (built from stand-in arguments), paged by `args`' position instead. */
export function keysetQuery(query: object, args: RelayArgs, keyset: Keyset): Record<string, unknown> {
  const { cursor: _standIn, ...rest } = query as { cursor?: unknown; where?: unknown };
  const where = keysetWhere(args, keyset);
  if (!where) return rest;
  return { ...rest, skip: 0, where: rest.where ? { AND: [rest.where, where] } : where };
}

/** A connection as plugin-prisma answers it. */
interface Connection {
  edges: ({ cursor: string; node: unknown } | null)[];
  pageInfo: { startCursor: string | null; endCursor: string | null };
}

/** The connection plugin-prisma answered, its cursors each row's position. */
export function withKeysetCursors<C>(connection: C, keyset: Keyset): C {
  if (connection === null || connection === undefined) return connection;
  const { edges, pageInfo } = connection as unknown as Connection;
  for (const edge of edges) {
    if (!edge) continue;
    const row = edge.node as Record<string, unknown>;
    const at = row[keyset.sortKey];
    const id = row[keyset.idColumn];
    if (!(at instanceof Date) || typeof id !== "string") {
      throw new Error(`a page's row was loaded without ${keyset.sortKey} and ${keyset.idColumn}`);
    }
    edge.cursor = encodeCursor({ at, id });
  }
  pageInfo.startCursor = edges[0]?.cursor ?? null;
  pageInfo.endCursor = edges.at(-1)?.cursor ?? null;
  return connection;
}

/** What plugin-prisma's select of a relation field is called with. */
export type RelationSelect = (
  args: object,
  ctx: object,
  nested: (query: unknown, path?: unknown) => object,
  selection: () => ReadonlySet<string>,
) => unknown;

/**
 * The order of a relation's rows: the first `orderBy` of the `query` its declaration gives
 * plugin-prisma (`{ orderBy: [{ createdAt: "desc" }, { id: "desc" }] }`), read back by calling the
 * field's plugin-prisma select with no arguments.
 */
export function orderOf(where: string, select: unknown): { key: string; order: Order } {
  let query: unknown;
  if (typeof select !== "function") throw new Error(`${where} has no plugin-prisma select`);
  (select as RelationSelect)({}, {}, (q) => {
    query = q;
    return {};
  }, () => new Set());
  const orderBy = typeof query === "object" && query !== null && "orderBy" in query
    ? query.orderBy
    : undefined;
  const first: unknown = Array.isArray(orderBy) ? orderBy[0] : orderBy;
  const [entry] = typeof first === "object" && first !== null ? Object.entries(first) : [];
  if (!entry || (entry[1] !== "asc" && entry[1] !== "desc")) {
    throw new Error(`${where}: its query names no orderBy ({ orderBy: { createdAt: "asc" } })`);
  }
  return { key: entry[0], order: entry[1] };
}

const PLUGIN = "keysetConnections";

/** A `t.relatedConnection` field: a Prisma relation paged by Relay's arguments. */
const isRelatedConnection = <Types extends SchemaTypes>(config: PothosOutputFieldConfig<Types>) =>
  config.extensions?.pothosPrismaRelationField !== undefined &&
  typeof config.extensions?.pothosPrismaSelect === "function" &&
  "after" in config.args && "before" in config.args;

/**
 * Every `t.relatedConnection` pages by the API's cursors: its plugin-prisma select gets stand-in
 * arguments and pages its query by the position, and its answer's cursors are the rows' positions
 * (its rows are ordered by its query's `orderBy`, the id breaking ties).
 */
export class KeysetConnectionsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(config: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    if (!isRelatedConnection(config)) return config;
    const select = config.extensions!.pothosPrismaSelect as RelationSelect;
    let keyset: Keyset | undefined;
    const keysetOf = () => {
      if (keyset) return keyset;
      const { key, order } = orderOf(`${config.parentType}.${config.name}`, select);
      // The related models all have an `id` (plugin-prisma's `cursor: "id"` reads it too).
      return keyset = { sortKey: key, order, idColumn: "id" };
    };
    // The rows' positions are selected beside plugin-prisma's cursor column, for their cursors.
    const positions = () => ({ [keysetOf().sortKey]: true, id: true });
    const paged: RelationSelect = (args, ctx, nested, selection) =>
      select(
        standInArgs(args),
        ctx,
        (query, path) =>
          nested({ ...keysetQuery(query as object, args, keysetOf()), select: positions() }, path),
        selection,
      );
    return {
      ...config,
      // `keyset`: the page's order, for wrapResolve's cursors.
      extensions: { ...config.extensions, pothosPrismaSelect: paged, keyset: keysetOf },
    };
  }

  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types["Context"], object>,
    config: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types["Context"], object> {
    const keysetOf = config.extensions?.keyset;
    if (typeof keysetOf !== "function") return resolver;
    return (parent, args, context, info) =>
      completeValue(
        resolver(parent, standInArgs(args), context, info),
        (connection) => withKeysetCursors(connection, keysetOf() as Keyset),
      );
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      keysetConnections: KeysetConnectionsPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin(PLUGIN, KeysetConnectionsPlugin);

export default PLUGIN;
