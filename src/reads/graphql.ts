/**
 * GraphQL operations into the read planner's selection trees (./selection.ts), and the fast path
 * of /graphql: a query whose root fields are all reads of capabilities is answered by one SQL
 * statement (./plan.ts) after one for the credential, its JSON text sent as PostgreSQL built it.
 *
 * The translation follows graphql-js' CollectFields: aliases, named and inline fragments,
 * `@skip`/`@include`, variables anywhere, the same response key selected twice merged. Types are
 * named after the views (`<View>Connection`, `<View>Edge`, `PageInfo`), fields after their fields
 * and relations, so the document is read against the views, and against the schema only for
 * argument coercion. The document has been validated before (Yoga), so unknown names do not occur.
 */
import {
  type DirectiveNode,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  getArgumentValues,
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  GraphQLIncludeDirective,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  GraphQLSkipDirective,
  Kind,
  type SelectionSetNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import type { ActorContext } from "../context.ts";
import { filterValue, type ReadCapability } from "../shared/capability.ts";
import type { View } from "../shared/view.ts";
import type {
  ConnectionPart,
  EdgePart,
  PageInfoPart,
  PageRequest,
  PageShape,
  Root,
  Selected,
  Selection,
} from "./selection.ts";
import { readOne, runReads } from "./plan.ts";
import { maxPageOf, pageWindow } from "./page_window.ts";
import { isOneRow, viewOfRead } from "./read_path.ts";
import { CAPABILITIES } from "../capabilities.ts";
import { AppError } from "../shared/errors.ts";
import { authorize } from "../auth/permissions.ts";
import type { GraphQLContext } from "../graphql/context.ts";
import { type AnswerObject, isPlanned, markPlanned } from "./planned.ts";
import { sendJsonBytes, withJsonBytes } from "../graphql/yoga_internals.ts";

export type { AnswerObject };

/** The read capabilities by GraphQL root field name. */
const READS: ReadonlyMap<string, ReadCapability> = new Map(
  CAPABILITIES.flatMap((c) => c.kind === "read" ? [[c.name, c] as const] : []),
);

/**
 * The GraphQL argument of each param: a page's params by their names; for one row, the last is
 * `id` (agent(id), intent(agentId, id), webhookDelivery(agentId, webhookId, id)).
 */
export function argumentNames(read: ReadCapability): Record<string, string> {
  const names = Object.keys(read.params);
  const out: Record<string, string> = {};
  names.forEach((name, i) => out[name] = isOneRow(read) && i === names.length - 1 ? "id" : name);
  return out;
}

/** An error located at a field, with the code and status of an AppError. */
function fieldError(error: AppError, nodes: readonly FieldNode[], path: (string | number)[]): GraphQLError {
  return new GraphQLError(error.message, {
    nodes,
    path,
    originalError: error,
    extensions: { code: error.code, status: error.status },
  });
}

class Translator {
  constructor(
    readonly schema: GraphQLSchema,
    readonly fragments: Record<string, FragmentDefinitionNode>,
    readonly variables: Record<string, unknown>,
  ) {}

  /** CollectFields: the fields of `sets` for an object type, by response key, in document order. */
  collect(typeName: string, sets: readonly SelectionSetNode[]): Map<string, FieldNode[]> {
    const fields = new Map<string, FieldNode[]>();
    const visited = new Set<string>();
    const walk = (set: SelectionSetNode) => {
      for (const s of set.selections) {
        if (!this.included(s)) continue;
        if (s.kind === Kind.FIELD) {
          const key = s.alias?.value ?? s.name.value;
          const list = fields.get(key);
          if (list) list.push(s);
          else fields.set(key, [s]);
        } else if (s.kind === Kind.INLINE_FRAGMENT) {
          if (!s.typeCondition || s.typeCondition.name.value === typeName) walk(s.selectionSet);
        } else {
          const name = s.name.value;
          if (visited.has(name)) continue;
          visited.add(name);
          const fragment = this.fragments[name];
          if (fragment && fragment.typeCondition.name.value === typeName) walk(fragment.selectionSet);
        }
      }
    };
    for (const set of sets) walk(set);
    return fields;
  }

  included(node: { directives?: readonly DirectiveNode[] }): boolean {
    if (!node.directives?.length) return true;
    const skip = getDirectiveValues(GraphQLSkipDirective, node, this.variables);
    if (skip?.if === true) return false;
    const include = getDirectiveValues(GraphQLIncludeDirective, node, this.variables);
    return include?.if !== false;
  }

  subSets(nodes: readonly FieldNode[]): SelectionSetNode[] {
    return nodes.flatMap((n) => n.selectionSet ? [n.selectionSet] : []);
  }

  args(typeName: string, nodes: readonly FieldNode[]): Record<string, unknown> {
    const type = this.schema.getType(typeName) as GraphQLObjectType;
    const def = type.getFields()[nodes[0].name.value];
    return getArgumentValues(def, nodes[0], this.variables);
  }

  pageRequest(
    args: Record<string, unknown>,
    shape: PageShape,
    nodes: FieldNode[],
    path: (string | number)[],
  ) {
    const page: PageRequest = {};
    for (const k of ["first", "last"] as const) if (args[k] != null) page[k] = args[k] as number;
    for (const k of ["after", "before"] as const) if (args[k] != null) page[k] = args[k] as string;
    try {
      pageWindow(page, maxPageOf(shape));
    } catch (e) {
      if (e instanceof AppError) throw fieldError(e, nodes, path);
      throw e;
    }
    return page;
  }

  object(view: View, sets: readonly SelectionSetNode[], path: (string | number)[]): Selection {
    const out: Selected[] = [];
    for (const [key, nodes] of this.collect(view.name, sets)) {
      const name = nodes[0].name.value;
      if (name === "__typename") {
        out.push({ key, constant: view.name });
      } else if (view.fields[name]) {
        const type = view.fields[name].type;
        if (typeof type === "object" && "fields" in type) {
          // A JSON object type: only the keys the document selects, under their response keys.
          const of = [...this.collect(type.name, this.subSets(nodes))].map(([k, n]) =>
            n[0].name.value === "__typename"
              ? { key: k, constant: type.name }
              : { key: k, field: n[0].name.value }
          );
          out.push({ key, field: name, of });
        } else out.push({ key, field: name });
      } else {
        const rel = view.relations?.[name];
        if (!rel) throw new Error(`${view.name} has no field ${name}`);
        const target = rel.view();
        if (rel.kind === "connection") {
          const shape = this.connection(target, this.subSets(nodes), [...path, key]);
          const page = this.pageRequest(this.args(view.name, nodes), shape, nodes, [...path, key]);
          out.push({ key, relation: name, page, shape });
        } else {
          out.push({
            key,
            relation: name,
            selection: this.object(target, this.subSets(nodes), [...path, key]),
          });
        }
      }
    }
    return out;
  }

  connection(view: View, sets: readonly SelectionSetNode[], path: (string | number)[]): PageShape {
    const parts: ConnectionPart[] = [];
    const connection = `${view.name}Connection`;
    for (const [key, nodes] of this.collect(connection, sets)) {
      const name = nodes[0].name.value;
      if (name === "__typename") parts.push({ key, constant: connection });
      else if (name === "edges") {
        const edges: EdgePart[] = [];
        const edge = `${view.name}Edge`;
        for (const [k, n] of this.collect(edge, this.subSets(nodes))) {
          const f = n[0].name.value;
          if (f === "__typename") edges.push({ key: k, constant: edge });
          else if (f === "cursor") edges.push({ key: k, cursor: true });
          else edges.push({ key: k, node: this.object(view, this.subSets(n), [...path, key, k]) });
        }
        parts.push({ key, edges });
      } else if (name === "pageInfo") {
        const info: PageInfoPart[] = [];
        for (const [k, n] of this.collect("PageInfo", this.subSets(nodes))) {
          const f = n[0].name.value;
          if (f === "__typename") info.push({ key: k, constant: "PageInfo" });
          else info.push({ key: k, info: f as "hasNextPage" });
        }
        parts.push({ key, pageInfo: info });
      } else {
        throw new Error(`${connection} has no field ${name}`);
      }
    }
    return { kind: "connection", parts };
  }

  /** A root field of Query as a planner root (the field must be a read). */
  root(key: string, nodes: FieldNode[], read: ReadCapability): Root {
    const args = this.args("Query", nodes);
    const names = argumentNames(read);
    const params: Record<string, string> = {};
    for (const [param, arg] of Object.entries(names)) params[param] = String(args[arg] ?? "");
    const { view } = viewOfRead(read);
    const sets = this.subSets(nodes);
    if (isOneRow(read)) return { key, read, params, selection: this.object(view, sets, [key]) };
    const shape = this.connection(view, sets, [key]);
    const page = this.pageRequest(args, shape, nodes, [key]);
    const where: Record<string, string> = {};
    for (const [name, filter] of Object.entries(read.filters ?? {})) {
      if (args[name] == null) continue;
      try {
        where[name] = filterValue(name, filter, String(args[name]));
      } catch (e) {
        if (e instanceof AppError) throw fieldError(e, nodes, [key]);
        throw e;
      }
    }
    if (Object.keys(where).length) page.where = where;
    return { key, read, params, page, shape };
  }
}

/** A query operation whose root fields are all reads, translated; null when it is anything else. */
export interface ReadOperation {
  roots: Root[];
  /** Each root's field nodes, for error locations. */
  nodes: Map<string, FieldNode[]>;
}

export function translateOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
): ReadOperation | GraphQLError | null {
  const op = getOperationAST(document, operationName);
  if (!op || op.operation !== "query") return null;
  const coerced = getVariableValues(schema, op.variableDefinitions ?? [], rawVariables ?? {});
  // Variables that do not coerce: graphql-js reports them, as always.
  if (coerced.errors) return null;
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  }
  const t = new Translator(schema, fragments, coerced.coerced);
  const fields = t.collect("Query", [op.selectionSet]);
  if (fields.size === 0) return null;
  for (const nodes of fields.values()) if (!READS.has(nodes[0].name.value)) return null;
  const roots: Root[] = [];
  const nodes = new Map<string, FieldNode[]>();
  try {
    for (const [key, list] of fields) {
      roots.push(t.root(key, list, READS.get(list[0].name.value)!));
      nodes.set(key, list);
    }
  } catch (e) {
    if (e instanceof GraphQLError) return e;
    throw e;
  }
  return { roots, nodes };
}

const DATA_OPEN = new TextEncoder().encode('{"data":');
const DATA_CLOSE = new TextEncoder().encode("}");

/**
 * The answer of a read operation: `{"data": ...}`, or the one error graphql-js would give. Yoga
 * sends the planner's UTF-8 bytes as they are where it answers plain JSON (useReadPlanner's
 * sendJsonBytes), else what `stringify()` gives (a server-sent event, say).
 */
export async function executeReads(
  op: ReadOperation,
  actor: () => Promise<ActorContext>,
): Promise<ExecutionResult & { stringify?: () => string }> {
  const firstKey = op.roots[0].key;
  const errorAt = (error: unknown, key: string): ExecutionResult => {
    if (!(error instanceof AppError)) throw error;
    return { data: null, errors: [fieldError(error, op.nodes.get(key)!, [key])] };
  };
  let ctx: ActorContext;
  try {
    ctx = await actor();
  } catch (e) {
    return errorAt(e, firstKey);
  }
  for (const root of op.roots) {
    if (!("read" in root)) continue;
    try {
      // Refused before anything is read; the first refused field is the error, as graphql-js
      // reports only one error when a non-null root field fails.
      authorize(ctx.actor, root.read.action);
    } catch (e) {
      return errorAt(e, root.key);
    }
  }
  let answer;
  try {
    answer = await runReads(ctx, op.roots, [DATA_OPEN, DATA_CLOSE]);
  } catch (e) {
    // Over the byte budget: the whole document's answer is refused, located at its first field.
    return errorAt(e, firstKey);
  }
  for (const root of op.roots) {
    const missing = answer.missing.get(root.key);
    if (missing) return errorAt(missing, root.key);
  }
  const planned = answer;
  let parsed: unknown;
  return withJsonBytes({
    // Parsed only if a plugin reads it (none does on this path; useRequestErrorStatus looks at the
    // errors first); Yoga sends the bytes, or `stringify()`.
    get data() {
      return (parsed ??= (JSON.parse(planned.json) as { data: unknown }).data) as Record<string, unknown>;
    },
    stringify: () => planned.json,
  }, planned.bytes);
}

/**
 * The /graphql fast path (an envelop onExecute hook): answers read-only queries through the
 * planner; anything else (mutations, viewer, workspaces, introspection) runs in graphql-js.
 * Registered after the document limits, which check variables first. Yoga's error masking does not
 * run for a result set here, so every error goes through the same `maskError` here. An answer goes
 * out as the planner's bytes where Yoga answers plain JSON (sendJsonBytes).
 */
export function useReadPlanner(maskError: (error: unknown, message: string) => Error): Plugin {
  const masked = (result: ExecutionResult): ExecutionResult =>
    result.errors
      ? { ...result, errors: result.errors.map((e) => maskError(e, "Unexpected error.") as GraphQLError) }
      : result;
  return {
    onResultProcess: sendJsonBytes,
    onExecute: ({ args, setResultAndStopExecution }) => {
      const op = translateOperation(
        args.schema,
        args.document,
        args.operationName,
        args.variableValues as Record<string, unknown> | undefined,
      );
      if (op === null) return;
      if (op instanceof GraphQLError) {
        setResultAndStopExecution(masked({ data: null, errors: [op] }));
        return;
      }
      const ctx = args.contextValue as unknown as GraphQLContext;
      const first = op.roots[0].key;
      return executeReads(op, () => ctx.actor()).then(
        (result) => setResultAndStopExecution(masked(result)),
        (error) => {
          // Not the request's fault (the database, a client gone): masked and logged as graphql-js' would be.
          const located = new GraphQLError(String((error as Error)?.message ?? error), {
            nodes: op.nodes.get(first),
            path: [first],
            originalError: error as Error,
          });
          setResultAndStopExecution(masked({ data: null, errors: [located] }));
        },
      ) as unknown as void;
    },
  };
}

const isObject = (value: unknown): value is AnswerObject =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Parses planner JSON for graphql-js, marking its objects as keyed by response key. */
function parsePlanned(json: string): AnswerObject | null {
  const value: unknown = JSON.parse(json, (_key, value) => {
    if (isObject(value)) markPlanned(value);
    return value;
  });
  if (value === null || isObject(value)) return value;
  throw new Error("read planner: a root's answer is not an object");
}

/**
 * The field resolver of every view type: by response key in planned answers, else by field name.
 * `T` is the field's type as declared: the planner built the value for it, and graphql-js checks
 * it against that type when it serializes the answer.
 */
export function byResponseKey<T>(
  source: AnswerObject | null,
  _args: unknown,
  _ctx: unknown,
  info: GraphQLResolveInfo,
): T {
  const value = source === null
    ? null
    : isPlanned(source)
    ? source[info.path.key as string]
    : source[info.fieldName];
  return value as T;
}

/** What a field of `view`'s type selects, as a planner selection (plain data: it can key a cache). */
export function selectionOf(view: View, info: GraphQLResolveInfo): Selection {
  const t = new Translator(info.schema, info.fragments, info.variableValues);
  return t.object(view, t.subSets(info.fieldNodes), [info.path.key]);
}

/**
 * One row of `view` by id with `selection`, through the planner in one statement; null when the
 * row is gone. The caller vouches that the id is of the actor's workspace (a live event of it,
 * src/live/hub.ts): a `{view, id}` root is not scoped by the planner.
 */
export async function readRowById(
  ctx: ActorContext,
  view: View,
  id: string,
  selection: Selection,
): Promise<AnswerObject | null> {
  return parsePlanned(await readOne(ctx, { key: "v", view, id, selection }));
}
