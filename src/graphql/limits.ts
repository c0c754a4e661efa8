/**
 * Bounds on a GraphQL document, checked before graphql-js validation runs. Validation itself is the
 * risk: OverlappingFieldsCanBeMerged grows faster than quadratically with the fields of a selection
 * set (95 000 `__typename` kept the thread busy for minutes), and rules added to validation (as
 * graphql-armor's are) run in that same pass, so they cannot prevent it. So: parse with a token
 * limit, then one cheap walk over the AST (fragments expanded once each, memoized), and only then
 * validation. The walk's verdict is kept per document (Yoga caches the parsed document per source
 * string, so the same text gives the same DocumentNode); variables are checked per request.
 */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLSchema,
  isObjectType,
  Kind,
  Lexer,
  type OperationDefinitionNode,
  parse,
  type ParseOptions,
  type SelectionSetNode,
  Source,
  TokenKind,
  type ValueNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { decodeCursor, MAX_CONNECTION_PAGE } from "../shared/pagination.ts";
import type { ErrorCode } from "../shared/error_codes.ts";

export const LIMITS = {
  /** Tokens of one document; the standard introspection query has 163. */
  maxTokens: 2_000,
  /** Nested fields of one operation (introspection subtrees exempt, see maxIntrospectionLists). */
  maxDepth: 12,
  /** Aliased fields of one operation, fragments expanded. */
  maxAliases: 30,
  /** Field selections of one operation, fragments expanded. */
  maxFields: 1_000,
  /**
   * Inside `__schema` / `__type` depth is free (type references nest `ofType` deeply), but lists
   * of lists multiply: at most as many nested introspection lists as the standard query has
   * (`__schema.types.fields.args`).
   */
  maxIntrospectionLists: 3,
} as const;

export const QUERY_TOO_COMPLEX = "QUERY_TOO_COMPLEX" satisfies ErrorCode;
export const INTROSPECTION_DISABLED = "INTROSPECTION_DISABLED" satisfies ErrorCode;
export const BAD_CURSOR = "BAD_CURSOR" satisfies ErrorCode;

const INTROSPECTION_ROOTS = new Set(["__schema", "__type"]);
const INTROSPECTION_LISTS = new Set([
  "types",
  "fields",
  "args",
  "inputFields",
  "interfaces",
  "possibleTypes",
  "enumValues",
  "directives",
]);
const PAGE_ARGS = new Set(["first", "last"]);
const CURSOR_ARGS = new Set(["after", "before"]);

/** A refusal of the request (HTTP 400 through ./errors.ts useRequestErrorStatus). */
export function refusal(code: ErrorCode, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code, status: 400 } });
}

/**
 * Our connection cursors are shared/pagination.ts keysets (the same as REST's); anything else
 * (numbers, objects, other encodings, NUL) is refused before execution.
 */
export function isCursor(value: unknown): boolean {
  return typeof value === "string" && decodeCursor(value) !== undefined;
}

/** graphql-js parse, stopped after LIMITS.maxTokens; running over it is QUERY_TOO_COMPLEX. */
export function parseBounded(source: string | Source, options?: ParseOptions): DocumentNode {
  try {
    return parse(source, { ...options, maxTokens: LIMITS.maxTokens });
  } catch (error) {
    if (error instanceof GraphQLError && tokenCount(source, LIMITS.maxTokens + 1) > LIMITS.maxTokens) {
      throw refusal(QUERY_TOO_COMPLEX, `The document has more than ${LIMITS.maxTokens} tokens.`);
    }
    throw error;
  }
}

/** Tokens of `source`, counting at most `stop` (a lexing error ends the count). */
function tokenCount(source: string | Source, stop: number): number {
  const lexer = new Lexer(typeof source === "string" ? new Source(source) : source);
  let n = 0;
  try {
    while (n < stop && lexer.advance().kind !== TokenKind.EOF) n++;
  } catch { /* a syntax error: the count so far */ }
  return n;
}

interface Metrics {
  /** Nested fields outside introspection. */
  depth: number;
  /** Nested introspection lists. */
  lists: number;
  fields: number;
  aliases: number;
  cost: number;
}

/** Connection arguments given through variables, checked per request. */
interface VariableSites {
  page: Set<string>;
  cursor: Set<string>;
}

interface Verdict {
  error?: GraphQLError;
  variables: VariableSites;
}

export interface LimitOptions {
  schema: GraphQLSchema;
  /** Nodes one operation may return (see checkDocument). */
  maxCost: number;
  introspection: boolean;
}

/**
 * Walks one document once. Cost: the nodes the document may return, counted as GitHub's GraphQL
 * API counts them: each connection returns as many nodes as its `first`/`last` (the page size of
 * 100 when not given or given through a variable), once per node of every connection above it, so
 * nested pages multiply; scalars and single objects add nothing.
 */
export function checkDocument(
  document: DocumentNode,
  options: LimitOptions,
  connections: Set<string>,
): Verdict {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  }
  const memo = new Map<string, Metrics>();
  const variables: VariableSites = { page: new Set(), cursor: new Set() };
  let error: GraphQLError | undefined;
  const refuse = (code: ErrorCode, message: string) => void (error ??= refusal(code, message));

  // Arguments as written (each field node once): literal page sizes and cursors, variable sites.
  const checkArguments = (field: FieldNode) => {
    for (const arg of field.arguments ?? []) {
      const name = arg.name.value;
      const page = PAGE_ARGS.has(name);
      if (!page && !CURSOR_ARGS.has(name)) continue;
      if (arg.value.kind === Kind.VARIABLE) {
        (page ? variables.page : variables.cursor).add(arg.value.name.value);
      } else if (page) {
        if (arg.value.kind === Kind.INT && Number(arg.value.value) > MAX_CONNECTION_PAGE) {
          refuse(QUERY_TOO_COMPLEX, `\`${name}\` is at most ${MAX_CONNECTION_PAGE}.`);
        }
      } else if (arg.value.kind !== Kind.NULL && !isCursor(literal(arg.value))) {
        refuse(BAD_CURSOR, `\`${name}\` is not a cursor of this API.`);
      }
    }
  };

  const walk = (set: SelectionSetNode, introspection: boolean): Metrics => {
    const m: Metrics = { depth: 0, lists: 0, fields: 0, aliases: 0, cost: 0 };
    for (const selection of set.selections) {
      let child: Metrics;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const isRoot = INTROSPECTION_ROOTS.has(name);
        if (isRoot && !options.introspection) {
          refuse(INTROSPECTION_DISABLED, "Introspection is disabled.");
        }
        const inside = introspection || isRoot;
        const sub = selection.selectionSet ? walk(selection.selectionSet, inside) : undefined;
        // A connection by name, with a selection (a scalar of the same name elsewhere, such as
        // `counts { intents }`, has none).
        const connection = !inside && connections.has(name) && selection.selectionSet !== undefined;
        const rows = connection ? pageSize(selection) : 1;
        child = {
          depth: inside ? 1 : 1 + (sub?.depth ?? 0),
          lists: (sub?.lists ?? 0) + (introspection && INTROSPECTION_LISTS.has(name) ? 1 : 0),
          fields: 1 + (sub?.fields ?? 0),
          aliases: (selection.alias ? 1 : 0) + (sub?.aliases ?? 0),
          cost: connection ? rows * (1 + (sub?.cost ?? 0)) : sub?.cost ?? 0,
        };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        child = walk(selection.selectionSet, introspection);
      } else {
        child = spread(selection.name.value, introspection);
      }
      m.depth = Math.max(m.depth, child.depth);
      m.lists = Math.max(m.lists, child.lists);
      m.fields += child.fields;
      m.aliases += child.aliases;
      m.cost += child.cost;
    }
    return m;
  };

  const EMPTY: Metrics = { depth: 0, lists: 0, fields: 0, aliases: 0, cost: 0 };
  const spread = (name: string, introspection: boolean): Metrics => {
    const key = `${introspection}:${name}`;
    const known = memo.get(key);
    if (known) return known;
    const fragment = fragments.get(name);
    // Unknown fragments and cycles are validation's to report; here they count as nothing.
    if (!fragment) return EMPTY;
    memo.set(key, EMPTY);
    const m = walk(fragment.selectionSet, introspection);
    memo.set(key, m);
    return m;
  };

  const visitArguments = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) checkArguments(s);
      if (s.kind !== Kind.FRAGMENT_SPREAD && s.selectionSet) visitArguments(s.selectionSet);
    }
  };

  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION || d.kind === Kind.FRAGMENT_DEFINITION) {
      visitArguments(d.selectionSet);
    }
  }
  for (const d of document.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    checkDefaults(d, variables, refuse);
    const m = walk(d.selectionSet, false);
    const what = d.name ? `Operation ${d.name.value}` : "The operation";
    if (m.depth > LIMITS.maxDepth) {
      refuse(QUERY_TOO_COMPLEX, `${what} nests ${m.depth} fields deep; at most ${LIMITS.maxDepth}.`);
    } else if (m.aliases > LIMITS.maxAliases) {
      refuse(QUERY_TOO_COMPLEX, `${what} has ${m.aliases} aliases; at most ${LIMITS.maxAliases}.`);
    } else if (m.fields > LIMITS.maxFields) {
      refuse(QUERY_TOO_COMPLEX, `${what} selects ${m.fields} fields; at most ${LIMITS.maxFields}.`);
    } else if (m.lists > LIMITS.maxIntrospectionLists) {
      refuse(
        QUERY_TOO_COMPLEX,
        `${what} nests ${m.lists} introspection lists; at most ${LIMITS.maxIntrospectionLists}.`,
      );
    } else if (m.cost > options.maxCost) {
      refuse(
        QUERY_TOO_COMPLEX,
        `${what} may return ${m.cost} nodes (page sizes multiplied down the tree); at most ${options.maxCost}.`,
      );
    }
  }
  return { error, variables };
}

/** Rows a connection field may return: its literal `first`/`last`, else the page size limit. */
function pageSize(field: FieldNode): number {
  let rows = 0;
  for (const arg of field.arguments ?? []) {
    if (!PAGE_ARGS.has(arg.name.value)) continue;
    rows = Math.max(rows, arg.value.kind === Kind.INT ? Number(arg.value.value) : MAX_CONNECTION_PAGE);
  }
  return Math.max(1, Math.min(rows || MAX_CONNECTION_PAGE, MAX_CONNECTION_PAGE));
}

/** Default values of variables used as page sizes or cursors obey the same rules as literals. */
function checkDefaults(
  op: OperationDefinitionNode,
  sites: VariableSites,
  refuse: (c: ErrorCode, m: string) => void,
) {
  for (const v of op.variableDefinitions ?? []) {
    const name = v.variable.name.value;
    const value = v.defaultValue ? literal(v.defaultValue) : undefined;
    if (value == null) continue;
    if (sites.page.has(name) && typeof value === "number" && value > MAX_CONNECTION_PAGE) {
      refuse(QUERY_TOO_COMPLEX, `\`$${name}\` is a page size; at most ${MAX_CONNECTION_PAGE}.`);
    }
    if (sites.cursor.has(name) && !isCursor(value)) {
      refuse(BAD_CURSOR, `\`$${name}\` is not a cursor of this API.`);
    }
  }
}

/** A literal's plain value, enough to tell strings and numbers (objects and lists are neither). */
function literal(value: ValueNode): unknown {
  switch (value.kind) {
    case Kind.STRING:
      return value.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(value.value);
    case Kind.NULL:
      return null;
    default:
      return value;
  }
}

/** The request's variables against the document's page-size and cursor sites. */
function checkVariables(
  sites: VariableSites,
  values: Record<string, unknown> | null | undefined,
): GraphQLError | null {
  for (const name of sites.page) {
    const v = values?.[name];
    if (typeof v === "number" && v > MAX_CONNECTION_PAGE) {
      return refusal(QUERY_TOO_COMPLEX, `\`$${name}\` is a page size; at most ${MAX_CONNECTION_PAGE}.`);
    }
  }
  for (const name of sites.cursor) {
    const v = values?.[name];
    if (v != null && !isCursor(v)) return refusal(BAD_CURSOR, `\`$${name}\` is not a cursor of this API.`);
  }
  return null;
}

/** Names of the schema's fields that take `first` (connections), for the cost estimate. */
function connectionFields(schema: GraphQLSchema): Set<string> {
  const names = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.args.some((a) => a.name === "first")) names.add(field.name);
    }
  }
  return names;
}

/**
 * The Yoga plugin: bounded parse, the walk before validation (its refusal replaces validation),
 * the variables before execution. Registered before Yoga's parser/validation cache, so a cached
 * document is still looked up here (a WeakMap read).
 */
export function useDocumentLimits(options: LimitOptions): Plugin {
  const connections = connectionFields(options.schema);
  const verdicts = new WeakMap<DocumentNode, Verdict>();
  const verdictOf = (document: DocumentNode) => {
    let verdict = verdicts.get(document);
    if (!verdict) verdicts.set(document, verdict = checkDocument(document, options, connections));
    return verdict;
  };
  return {
    onParse: ({ setParseFn }) => setParseFn(parseBounded),
    onValidate: ({ params, setResult }) => {
      const { error } = verdictOf(params.documentAST);
      if (error) setResult([error]);
    },
    onExecute: ({ args, setResultAndStopExecution }) => {
      const error = checkVariables(verdictOf(args.document).variables, args.variableValues);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    // Subscriptions (SSE and graphql-ws) obey the same variables rules.
    onSubscribe: ({ args, setResultAndStopExecution }) => {
      const error = checkVariables(verdictOf(args.document).variables, args.variableValues);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}
