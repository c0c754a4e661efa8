/**
 * Capabilities: each thing the API can do, declared once in its domain folder (`<domain>/capabilities.ts`)
 * with who may do it, its zod input, its output and its function. The REST routes
 * (src/rest/derive.ts), the GraphQL fields and input types (src/graphql/derive.ts) and the OpenAPI
 * document (src/rest/openapi.ts) are derived from these declarations, and `invoke` is the one runner:
 * it checks access before it parses anything, so a refused caller gets 403 whatever it sent.
 *
 * Two kinds:
 * - a read names rows of a view reached from the workspace (`from`, then relations by id); the read
 *   planner (src/reads/) answers it in one SQL statement, for REST and GraphQL alike;
 * - an operation runs a function with typed, parsed input. Internal callers (jobs, approvals) call
 *   `invoke` or the function itself with typed input.
 */
import type { z } from "zod";
import type { Action } from "../auth/permissions.ts";
import type { Principal } from "../auth/actor.ts";
import type { ActorContext, Deps } from "../context.ts";
import type { Actor } from "../auth/actor.ts";
import type { Sql } from "./sql_fragment.ts";
import type { CallerSql, DeclaredType, EnumType } from "./view.ts";
import { authorize } from "../auth/permissions.ts";
import { AppError } from "./errors.ts";
import { parseInput } from "./validation.ts";
import { isRowId } from "./pagination.ts";

/** Who may call: anyone, any valid credential, or an actor of the workspace allowed `action`. */
export type Access =
  | { kind: "public" }
  | { kind: "principal" }
  | { kind: "workspace"; action: Action };

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Where REST serves a capability. Path parameters are written `{name}` and are the capability's params. */
export interface HttpBinding {
  method: HttpMethod;
  path: string;
  /** The success status (200 unless given; 204 answers no body). */
  status?: 200 | 201 | 202 | 204;
}

/** What a caller brings: the context its access kind needs, plus where a login attempt came from. */
export interface CallerContext {
  deps: Deps;
  /** Resolves the credential (401 otherwise). */
  principal(): Promise<Principal>;
  /** Resolves the acting workspace and role (400 WORKSPACE_REQUIRED, 403). */
  actor(): Promise<ActorContext>;
  /** The client's socket address, for abuse limits (null when unknown). */
  clientAddress: string | null;
}

/** What an operation's function receives, by access kind. */
export type RunContext<A extends Access> = A extends { kind: "workspace" } ? ActorContext
  : A extends { kind: "principal" } ? { deps: Deps; principal: Principal; clientAddress: string | null }
  : { deps: Deps; clientAddress: string | null };

/** One step from a row to related rows: a relation of the current view, optionally one row by id. */
export interface ReadStep {
  relation: string;
  /** The param naming one row of the relation; without it the step is the relation's page. */
  idParam?: string;
}

export interface ReadCapability {
  kind: "read";
  /** Public operation name (GraphQL field, OpenAPI operationId). */
  name: string;
  summary: string;
  action: Action;
  /** The ids this read takes, in path order, each with what it names (REST path params, GraphQL ID! arguments). */
  params: Params;
  /**
   * The rows it starts from: a view listed under the workspace, one row by `idParam` or all, by
   * (`sortKey`, id) in `order` (createdAt unless named, oldest first unless given; the key is a
   * stored, non-null DateTime field).
   */
  from: { view: DeclaredType; idParam?: string; order?: "asc" | "desc"; sortKey?: string };
  /** Relations walked from there (each by id but the last, which may be a page). */
  path?: readonly ReadStep[];
  http?: { path: string };
  /**
   * Filters of a page, as REST query parameters and GraphQL arguments of the same name
   * (`?status=OPEN`, `status: OPEN`): an enum pins the page's stored field of that name and enum
   * (checked against the field's type at start); a ReadFilter is a condition of its own.
   */
  filters?: Readonly<Record<string, EnumType | ReadFilter>>;
  /**
   * REST's answer: a page of `{data, nextCursor}` (default for lists) or, with `unpaged`, every row
   * as `{data}`; `fields` limits and renames what REST shows of each row (default: src/reads/row_shape.ts).
   */
  rest?: { unpaged?: boolean; fields?: RestFields };
}

/**
 * A filter of a page that is not a stored field's equality (a search, "mine"): its condition in SQL
 * for the read planner and as a Prisma `where` for the other GraphQL executor
 * (src/graphql/prisma_reads.ts), which must keep the same rows.
 */
export interface ReadFilter {
  kind: "filter";
  /** What a caller gives: a value of an enum, an id, or text. */
  type: EnumType | "ID" | "String";
  description: string;
  /**
   * The value as given (REST's query text, GraphQL's argument) made what the condition takes;
   * throws 400 VALIDATION_FAILED for a value it refuses. An enum's value is checked after it.
   */
  parse?: (value: string) => string;
  /** The condition on the page's row aliased `row`, with the value bound as `value` (text). */
  sql: (row: Sql, value: Sql, caller: CallerSql) => Sql;
  /** The same condition as a Prisma `where` of the page's model. */
  prisma: (value: string, actor: Actor) => Record<string, unknown>;
}

export const defineFilter = (filter: Omit<ReadFilter, "kind">): ReadFilter => ({ kind: "filter", ...filter });

export const isReadFilter = (filter: EnumType | ReadFilter): filter is ReadFilter =>
  "kind" in filter && filter.kind === "filter";

/**
 * A filter's value as given, made what the page takes: a ReadFilter's `parse`, then an enum's check
 * (400 VALIDATION_FAILED naming the filter). REST and GraphQL read filters through this.
 */
export function filterValue(name: string, filter: EnumType | ReadFilter, given: string): string {
  const value = isReadFilter(filter) && filter.parse ? filter.parse(given) : given;
  const type = isReadFilter(filter) ? filter.type : filter;
  if (typeof type === "object") {
    const allowed: readonly string[] = type.values;
    if (!allowed.includes(value)) {
      const message = `must be one of ${allowed.join(", ")}`;
      throw new AppError("VALIDATION_FAILED", 400, `Invalid input: ${name}: ${message}`, [
        { path: name, message },
      ]);
    }
  }
  return value;
}

/** REST's fields of a row: a field or relation name, or `[shownAs, relationOrField]`. */
export type RestFields = ReadonlyArray<string | readonly [string, string]>;

export interface OperationCapability<
  A extends Access = Access,
  P extends Params = Params,
  I = unknown,
  O = unknown,
> {
  kind: "operation";
  name: string;
  summary: string;
  access: A;
  /** Ids from the REST path or GraphQL arguments, each with what it names ("Agent": 404 "Agent not found."). */
  params: P;
  /** The param naming the row the operation acts on (GraphQL calls that argument `id`). */
  target?: string;
  /** Runs after access is checked and before the input is parsed (abuse counters). */
  guard?: (ctx: RunContext<A>) => Promise<void>;
  /** The body (REST) or `input` argument (GraphQL), parsed with zod after access is checked. */
  input?: z.ZodType<I>;
  /** What it answers: a row of a view as the function returns it, a described value, or nothing. */
  output: OperationOutput;
  http?: HttpBinding;
  /** Is it a read with no side effects (a GraphQL query rather than a mutation)? */
  query?: boolean;
  /**
   * GraphQL: a field of this other query's answer type instead of a root field, with its input's
   * fields as the field's arguments (`workspace { usage(from, to) }`). Both act in the request's
   * workspace; the field takes no params.
   */
  fieldOf?: OperationCapability;
  run(ctx: RunContext<A>, params: IdsOf<P>, input: I): Promise<O>;
}

export type OperationOutput =
  /**
   * A row of the declared type `view`: the function returns the stored (Prisma) row, with the
   * `extra` fields beside it, and each transport presents it (REST: the type's fields and the
   * extras in one object). `nested` names the object for transports that show the row nested
   * beside the extras instead (`{ [rowKey]: row, ...extra }`).
   */
  | { view: DeclaredType; extra?: z.ZodObject; nested?: { name: string; rowKey: string } }
  /**
   * A value described by `schema` (OpenAPI), and by `typeName` for GraphQL. Inside a workspace
   * operation's answer, a part whose schema's `id` names a declared type is a stored row of that
   * type, which each transport presents (a supervisor turn's approvals).
   */
  | { schema: z.ZodType; typeName?: string }
  /** Nothing (REST 204). */
  | { none: true };

export type Capability = ReadCapability | OperationCapability;

export function defineRead(cap: Omit<ReadCapability, "kind">): ReadCapability {
  return { kind: "read", ...cap };
}

export function defineOperation<A extends Access, const P extends Params, I, O>(
  cap: Omit<OperationCapability<A, P, I, O>, "kind">,
): OperationCapability<A, P, I, O> {
  return { kind: "operation", ...cap };
}

/** Id parameters by name, each with the label of what it names. */
export type Params = Readonly<Record<string, string>>;
/** The ids a function receives for its params. */
export type IdsOf<P extends Params> = { [K in keyof P]: string };

/** The params as ids, in declaration order; one that cannot be an id answers 404 for what it names. */
export function checkIds(raw: Record<string, unknown>, params: Params): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, label] of Object.entries(params)) {
    const value = raw[name];
    // Ids are opaque but bounded: anything else cannot name a row, so it answers 404 without a query.
    if (typeof value !== "string" || !isRowId(value)) {
      throw new AppError("NOT_FOUND", 404, `${label} not found.`);
    }
    out[name] = value;
  }
  return out;
}

/**
 * Runs an operation: access first (401/400/403 before anything is read), then the ids, then the
 * input, then the function. Every transport and internal caller goes through here.
 */
export async function invoke<A extends Access, P extends Params, I, O>(
  cap: OperationCapability<A, P, I, O>,
  caller: CallerContext,
  rawParams: Record<string, unknown>,
  rawInput: unknown,
): Promise<O> {
  const ctx = await runContext(cap.access, caller);
  await cap.guard?.(ctx as RunContext<A>);
  const params = checkIds(rawParams, cap.params);
  // An operation without input ignores the body, as it always has.
  const input = cap.input ? parseInput(cap.input, rawInput) : undefined;
  return await cap.run(ctx as RunContext<A>, params as IdsOf<P>, input as I);
}

/** Resolves and checks the caller for an access kind. */
async function runContext(access: Access, caller: CallerContext): Promise<unknown> {
  switch (access.kind) {
    case "public":
      return { deps: caller.deps, clientAddress: caller.clientAddress };
    case "principal":
      return { deps: caller.deps, principal: await caller.principal(), clientAddress: caller.clientAddress };
    case "workspace": {
      const ctx = await caller.actor();
      authorize(ctx.actor, access.action);
      return ctx;
    }
  }
}

/**
 * A live feed (a GraphQL subscription field, derived by src/graphql/derive.ts): who may subscribe
 * (`action`, checked at subscribe), its id params (404 like a read when `check` finds no row of
 * the workspace), and which live events of the subscriber's workspace it passes on. `select`
 * turns a kept event into ids; every subscriber then reads the rows by id through the read
 * planner with its own role and its own selection.
 */
export interface SubscriptionCapability<P extends Params = Params, E = unknown> {
  kind: "subscription";
  name: string;
  summary: string;
  action: Action;
  params: P;
  /** At subscribe, after access: throws (404) when a param names no row of the actor's workspace. */
  check?(ctx: ActorContext, params: IdsOf<P>): Promise<void>;
  /** What it answers for each kept event. */
  output: SubscriptionOutput;
  /** The answer's ids for an event of the workspace, or null to skip the event. */
  select(event: E, params: IdsOf<P>): SubscriptionPayload | null;
}

export type SubscriptionOutput =
  /** One row of `view`: the payload is `{ id }`. */
  | { view: DeclaredType }
  /**
   * An object type `name` with an enum field `type` (`typeEnum`) and row fields by id: the
   * payload is `{ type, [row]: id | null }`.
   */
  | {
    name: string;
    description?: string;
    typeEnum: EnumType;
    rows: Readonly<Record<string, { view: DeclaredType; nullable?: boolean; description?: string }>>;
  };

/** The ids of one answer: `{ id }` for a view, `{ type, ...rowIds }` for an object. */
export type SubscriptionPayload = Readonly<Record<string, string | null>>;

export function defineSubscription<const P extends Params, E>(
  cap: Omit<SubscriptionCapability<P, E>, "kind">,
): SubscriptionCapability<P, E> {
  return { kind: "subscription", ...cap };
}
