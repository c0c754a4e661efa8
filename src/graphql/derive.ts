/**
 * The GraphQL fields derived from the capabilities: the Query fields of the read capabilities (a
 * row, or a Relay connection, of the type declared with Pothos in ./types/), and a Query or
 * Mutation field per operation with its input type generated from the operation's zod input (zod
 * enums become GraphQL enums) and its answer's type (a declared type, or one generated from the
 * answer's zod schema); the Subscription fields of the live feeds.
 *
 * Resolvers are thin: a read's root field resolves through plugin-prisma (./prisma_reads.ts; a
 * read-only operation never gets here, the planner's fast path answers it), a write's row through
 * the declared type's resolvers (./row_answers.ts), a subscription's rows through the read planner
 * (src/reads/graphql.ts), whose objects are keyed by response key; `byResponseKey` reads them.
 */
import { GraphQLError, type GraphQLResolveInfo } from "graphql";
import {
  type ArgBuilder,
  type ArgumentRef,
  type FieldRef,
  type InputObjectRef,
  type ObjectRef,
} from "@pothos/core";
import { z } from "zod";
import { builder } from "./builder.ts";
import type { GraphQLContext } from "./context.ts";
import type {
  CallerContext,
  Capability,
  OperationCapability,
  ReadCapability,
  SubscriptionCapability,
  SubscriptionPayload,
} from "../shared/capability.ts";
import { checkIds, invoke, isReadFilter } from "../shared/capability.ts";
import { authorize } from "../auth/permissions.ts";
import type { DeclaredType, View } from "../shared/view.ts";
import { DECLARED_TYPES, relatedTypeName } from "./types/mod.ts";
import {
  connectionOf,
  enumOf,
  enumRef,
  objects,
  type ObjectTypeRef,
  type RefParam,
  type Row,
  type Types,
} from "./common_types.ts";
import { argumentNames, byResponseKey, readRowById, selectionOf } from "../reads/graphql.ts";
import type { ActorContext } from "../context.ts";
import type { Selection } from "../reads/selection.ts";
import type { LiveEvent } from "../live/hub.ts";
import { oncePerEvent } from "../live/per_event.ts";
import { AppError } from "../shared/errors.ts";
import { isOneRow } from "../reads/plan.ts";
import { viewOf } from "../reads/views.ts";
import { prismaRead } from "./prisma_reads.ts";
import { rowAnswer } from "./row_answers.ts";

type InputTypeRef = InputObjectRef<Types, Row>;
type Args = Record<string, ArgumentRef<Types, unknown>>;

const inputs = new Map<string, InputTypeRef>();

// ---- the declared types (./types/) of the capabilities' rows ----

/** The Pothos ref of a declared type (src/shared/view.ts' declaredType names it). */
export function viewRef(type: DeclaredType): ObjectTypeRef {
  const declared = DECLARED_TYPES.get(type.name);
  if (!declared) throw new Error(`${type.name} is not a type declared with Pothos (./types/mod.ts)`);
  return declared;
}

/** The Relay connection of a declared type (a page read's answer). */
function connectionRef(type: DeclaredType): ObjectTypeRef {
  return connectionOf(viewRef(type));
}

/**
 * The declared type of a read's rows (the page's rows, or the one row): its path walked through
 * the Prisma relations of the declared types, as known before the schema (and its views) is built.
 */
export function readTypeName(read: ReadCapability): string {
  let name = read.from.view.name;
  for (const step of read.path ?? []) {
    const next = relatedTypeName(name, step.relation);
    if (!next) throw new Error(`${read.name}: ${name} has no relation ${step.relation} to a declared type`);
    name = next;
  }
  return name;
}

// ---- types from zod schemas (operation inputs and non-view answers), through JSON Schema ----

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: string[];
  anyOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  format?: string;
  description?: string;
  readOnly?: boolean;
  additionalProperties?: unknown;
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** JSON Schema of a zod schema as GraphQL sees it; transforms and refinements are left out. */
const toJson = (schema: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(schema, { io, unrepresentable: "any", reused: "inline" }) as JsonSchema;

type Resolved<Of> = { ref: RefParam<Of>; nullable: boolean };
/** The object types of one side: output objects, or input objects. */
type ObjectOf<Of> = (node: JsonSchema, defs: Record<string, JsonSchema>, name: string) => Of;

/** A JSON Schema node as a GraphQL type of one side; `name` names inline objects and enums. */
function typeOf<Of>(
  node: JsonSchema,
  defs: Record<string, JsonSchema>,
  name: string,
  objectOf: ObjectOf<Of>,
): Resolved<Of> {
  if (node.$ref) {
    const id = node.$ref.replace(/^#\/\$defs\//, "");
    return { ...typeOf(defs[id], defs, id, objectOf), nullable: false };
  }
  if (node.anyOf) {
    const rest = node.anyOf.filter((n) => n.type !== "null");
    const nullable = rest.length < node.anyOf.length;
    if (rest.length === 1) return { ref: typeOf(rest[0], defs, name, objectOf).ref, nullable };
    return { ref: "JSON", nullable };
  }
  // zod writes a nullable scalar as `type: ["string", "null"]`.
  if (Array.isArray(node.type)) {
    const rest = node.type.filter((t) => t !== "null");
    const nullable = rest.length < node.type.length;
    if (rest.length === 1) {
      return { ref: typeOf({ ...node, type: rest[0] }, defs, name, objectOf).ref, nullable };
    }
    return { ref: "JSON", nullable };
  }
  if (node.enum) return { ref: enumRef(name, node.enum, node.description), nullable: false };
  switch (node.type) {
    case "string":
      return { ref: node.format === "date-time" ? "DateTime" : "String", nullable: false };
    case "integer":
      return { ref: "Int", nullable: false };
    case "number":
      return { ref: "Float", nullable: false };
    case "boolean":
      return { ref: "Boolean", nullable: false };
    case "array": {
      const item = typeOf(node.items ?? {}, defs, name, objectOf).ref;
      // GraphQL lists of lists are not derived: such a value is JSON.
      return { ref: Array.isArray(item) ? "JSON" : [item], nullable: false };
    }
    case "object":
      if (!node.properties) return { ref: "JSON", nullable: false };
      return { ref: objectOf(node, defs, name), nullable: false };
    default:
      return { ref: "JSON", nullable: false };
  }
}

function inputObject(node: JsonSchema, defs: Record<string, JsonSchema>, name: string): InputTypeRef {
  const typeName = name.endsWith("Input") ? name : `${name}Input`;
  let ref = inputs.get(typeName);
  if (ref) return ref;
  const required = new Set(node.required ?? []);
  ref = builder.inputType(typeName, {
    description: node.description,
    fields: (t) =>
      Object.fromEntries(
        Object.entries(node.properties ?? {})
          .filter(([, prop]) => !prop.readOnly)
          .map(([field, prop]) => {
            const { ref: type, nullable } = typeOf(
              prop,
              defs,
              `${typeName.replace(/Input$/, "")}${pascal(field)}`,
              inputObject,
            );
            return [
              field,
              t.field({ type, required: required.has(field) && !nullable, description: prop.description }),
            ];
          }),
      ),
  });
  inputs.set(typeName, ref);
  return ref;
}

/** The declared type a field's type names (itself or as a list), if it names one. */
function declaredOf(type: RefParam<ObjectTypeRef>): string | undefined {
  const item = Array.isArray(type) ? type[0] : type;
  return typeof item === "object" && "name" in item && DECLARED_TYPES.get(item.name) === item
    ? item.name
    : undefined;
}

/**
 * A value of a declared type inside a workspace operation's answer (the approvals a supervisor turn
 * created): that type's stored row, through the type's resolvers (./row_answers.ts).
 */
const declaredAnswer = (name: string) =>
async (
  parent: Row,
  _args: unknown,
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
): Promise<unknown> => {
  const value: unknown = byResponseKey(parent, null, null, info);
  if (value === null || value === undefined) return value;
  const row = (v: unknown) => rowAnswer(ctx, viewOf({ name }), v as Row, info);
  return Array.isArray(value) ? await Promise.all(value.map(row)) : await row(value);
};

/**
 * The object type of an answer's object (by its `id` meta, else `name`). An answer naming a declared
 * type (a session's User) is that type; inside a workspace operation's answer (`scoped`), its values
 * are that type's rows (declaredAnswer), elsewhere they reach its own resolvers.
 */
const outputObjectOf = (scoped: boolean) =>
  function outputObject(node: JsonSchema, defs: Record<string, JsonSchema>, name: string): ObjectTypeRef {
    const declared = DECLARED_TYPES.get(name);
    if (declared) return declared;
    let ref = objects.get(name);
    if (ref) return ref;
    const created = builder.objectRef<Row>(name);
    objects.set(name, ref = created);
    const required = new Set(node.required ?? []);
    created.implement({
      description: node.description,
      fields: (t) =>
        Object.fromEntries(
          Object.entries(node.properties ?? {}).map(([field, prop]) => {
            const { ref: type, nullable } = typeOf(prop, defs, `${name}${pascal(field)}`, outputObject);
            const declaredName = scoped ? declaredOf(type) : undefined;
            return [
              field,
              t.field({
                type,
                nullable: nullable || !required.has(field),
                description: prop.description,
                resolve: declaredName ? declaredAnswer(declaredName) : byResponseKey,
              }),
            ];
          }),
        ),
    });
    return ref;
  };

/** The GraphQL type of a zod schema, named by its `id` meta or `fallback`. */
function zodInputType(schema: z.ZodType, fallback: string): Resolved<InputTypeRef> {
  const json = toJson(schema, "input");
  return typeOf(json, json.$defs ?? {}, fallback, inputObject);
}

function zodOutputType(schema: z.ZodType, fallback: string, scoped: boolean): Resolved<ObjectTypeRef> {
  const json = toJson(schema, "output");
  return typeOf(json, json.$defs ?? {}, fallback, outputObjectOf(scoped));
}

// ---- fields of the capabilities ----

/** The caller of a GraphQL request (the context resolves credentials lazily, once). */
function graphQLCaller(ctx: GraphQLContext, workspaceArg?: string): CallerContext {
  return {
    deps: ctx.deps,
    clientAddress: ctx.clientAddress,
    principal: ctx.principal,
    // An argument naming the workspace (deleteWorkspace) acts there, not in x-workspace-id.
    actor: workspaceArg === undefined ? ctx.actor : () => ctx.actorIn(workspaceArg),
  };
}

/** A param's GraphQL argument name: the row the operation acts on is `id`. */
const argName = (param: string, target: string | undefined) => param === target ? "id" : param;
const isId = (param: string) => param === "id" || param.endsWith("Id");

/** A page read's declared filters, each an optional argument of its enum, an ID or a String. */
const filterArgs = (arg: ArgBuilder<Types>, read: ReadCapability): Args =>
  Object.fromEntries(
    Object.entries(read.filters ?? {}).map(([name, filter]) => {
      if (!isReadFilter(filter)) return [name, arg({ type: enumOf(filter) })];
      const { type, description } = filter;
      return [name, arg({ type: typeof type === "object" ? enumOf(type) : type, description })];
    }),
  );

/** The fields of Query and Mutation (the same options on either). */
type RootFields = PothosSchemaTypes.RootFieldBuilder<Types, Types["Root"], "Query" | "Mutation">;
type RootField = FieldRef<Types, unknown, "Query" | "Mutation">;

function readField(t: RootFields, read: ReadCapability): RootField {
  const one = isOneRow(read);
  const view = { name: readTypeName(read) };
  const args: Args = Object.fromEntries(
    Object.values(argumentNames(read)).map((a) => [a, t.arg.id({ required: true })]),
  );
  return t.field({
    type: one ? viewRef(view) : connectionRef(view),
    description: read.summary,
    authScopes: { member: true },
    args: one ? args : { ...args, ...t.arg.connectionArgs(), ...filterArgs(t.arg, read) },
    // The fast path (src/reads/graphql.ts) answers operations of reads only; in any other
    // operation the read runs through plugin-prisma, the executor the differential test checks.
    resolve: prismaRead(read),
  });
}

function outputType(cap: OperationCapability): Resolved<ObjectTypeRef> {
  const out = cap.output;
  if ("view" in out) {
    if (!out.extra || !out.nested) return { ref: viewRef(out.view), nullable: false };
    const nested = out.nested;
    let ref = objects.get(nested.name);
    if (!ref) {
      const created = builder.objectRef<Row>(nested.name);
      objects.set(nested.name, ref = created);
      const extra = toJson(out.extra, "output");
      created.implement({
        fields: (t) => ({
          [nested.rowKey]: t.field({
            type: viewRef(out.view),
            resolve: (
              p: Record<string, unknown>,
              _args: unknown,
              ctx: GraphQLContext,
              info: GraphQLResolveInfo,
            ) => rowAnswer(ctx, viewOf(out.view), p[nested.rowKey] as Record<string, unknown>, info),
          }),
          ...Object.fromEntries(
            Object.entries(extra.properties ?? {}).map(([field, prop]) => [
              field,
              t.field({
                type: typeOf(prop, extra.$defs ?? {}, field, outputObjectOf(false)).ref,
                description: prop.description,
                resolve: byResponseKey,
              }),
            ]),
          ),
        }),
      });
    }
    return { ref, nullable: false };
  }
  if ("schema" in out) {
    return zodOutputType(out.schema, out.typeName ?? pascal(cap.name), cap.access.kind === "workspace");
  }
  // Nothing to answer: the id acted on, or true.
  return { ref: noneAnswerParam(cap) ? "ID" : "Boolean", nullable: false };
}

/** The param whose value a capability without an answer returns (its target, or its last param). */
const noneAnswerParam = (cap: OperationCapability) => cap.target ?? Object.keys(cap.params).at(-1);

function operationField(t: RootFields, cap: OperationCapability): RootField {
  const params = Object.keys(cap.params);
  const args: Args = Object.fromEntries(
    params.map((p) => {
      const name = argName(p, cap.target);
      return [name, isId(name) ? t.arg.id({ required: true }) : t.arg.string({ required: true })];
    }),
  );
  if (cap.input) {
    const input = zodInputType(cap.input, `${pascal(cap.name)}Input`);
    args.input = t.arg({ type: input.ref, required: !cap.input.safeParse(undefined).success });
  }
  const { ref, nullable } = outputType(cap);
  return t.field({
    type: ref,
    nullable,
    description: cap.summary,
    authScopes: cap.access.kind === "public"
      ? undefined
      : cap.access.kind === "principal"
      ? { authenticated: true }
      : params.includes("workspaceId")
      ? { authenticated: true }
      : { member: true },
    args,
    resolve: async (
      _root: unknown,
      rawArgs: Record<string, unknown>,
      ctx: GraphQLContext,
      info: GraphQLResolveInfo,
    ) => {
      const ids = Object.fromEntries(params.map((p) => [p, rawArgs[argName(p, cap.target)]]));
      const caller = graphQLCaller(ctx, params.includes("workspaceId") ? String(ids.workspaceId) : undefined);
      const result = await invoke(cap, caller, ids, rawArgs.input);
      if ("none" in cap.output) {
        const param = noneAnswerParam(cap);
        return param ? ids[param] : true;
      }
      const out = cap.output;
      if (!("view" in out)) return result;
      const row = result as Record<string, unknown>;
      if (!out.nested) return rowAnswer(ctx, viewOf(out.view), row, info);
      // The stored row beside the extras (createInvite: { invite, inviteUrl }).
      const extras = Object.keys(out.extra?.shape ?? {});
      const only = Object.fromEntries(Object.entries(row).filter(([k]) => !extras.includes(k)));
      return { ...Object.fromEntries(extras.map((k) => [k, row[k]])), [out.nested.rowKey]: only };
    },
  });
}

/** GraphQL input undefined where absent or null: a field's `null` argument asks for the default. */
const givenArgs = (args: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null && v !== undefined));

/**
 * A query operation declared as a field of another query's answer (`fieldOf`): the input's fields
 * are the field's arguments, and it runs through `invoke` in the request's workspace, as a root
 * field would (its own access, then its input).
 */
function nestedOperationField(cap: OperationCapability): void {
  const parent = cap.fieldOf!;
  if (!cap.query || !parent.query || Object.keys(cap.params).length || Object.keys(parent.params).length) {
    throw new Error(`${cap.name}: only a query without params is a field of another query without params`);
  }
  const { ref: parentRef } = outputType(parent);
  if (Array.isArray(parentRef) || typeof parentRef === "string") {
    throw new Error(`${cap.name}: ${parent.name}'s answer is not an object type`);
  }
  const input = cap.input ? toJson(cap.input, "input") : undefined;
  const required = new Set(input?.required ?? []);
  builder.objectField(parentRef as ObjectTypeRef, cap.name, (t) => {
    const { ref, nullable } = outputType(cap);
    return t.field({
      type: ref,
      nullable,
      description: cap.summary,
      authScopes: cap.access.kind === "workspace" ? { member: true } : { authenticated: true },
      args: Object.fromEntries(
        Object.entries(input?.properties ?? {}).map(([name, prop]) => {
          const arg = typeOf(prop, input?.$defs ?? {}, `${pascal(cap.name)}${pascal(name)}`, inputObject);
          return [
            name,
            t.arg({
              type: arg.ref,
              required: required.has(name) && !arg.nullable,
              description: prop.description,
            }),
          ];
        }),
      ),
      resolve: (_parent: unknown, rawArgs: Record<string, unknown>, ctx: GraphQLContext) =>
        invoke(cap, graphQLCaller(ctx), {}, givenArgs(rawArgs)),
    });
  });
}

/** Adds the fields of every capability to Query and Mutation (and to the types `fieldOf` names). */
export function deriveFields(capabilities: readonly Capability[]): void {
  builder.queryFields((t) =>
    Object.fromEntries(
      capabilities
        .filter((cap) => cap.kind === "read" || (cap.query && !cap.fieldOf))
        .map((cap) => [cap.name, cap.kind === "read" ? readField(t, cap) : operationField(t, cap)]),
    )
  );
  for (const cap of capabilities) {
    if (cap.kind === "operation" && cap.fieldOf) nestedOperationField(cap);
  }
  builder.mutationFields((t) =>
    Object.fromEntries(
      capabilities
        .filter((cap): cap is OperationCapability => cap.kind === "operation" && !cap.query)
        .map((cap) => [cap.name, operationField(t, cap)]),
    )
  );
}

// ---- subscriptions ----

/**
 * What a subscription's source yields for each kept event: the ids `select` gave, the event, and
 * the subscriber's actor as checked for this event.
 */
interface LiveItem {
  ids: SubscriptionPayload;
  event: LiveEvent;
  ctx: ActorContext;
  /** The subscriber may no longer read (401/403): this item answers the error, and the feed ends. */
  refused?: AppError;
}

/** The source, ended (complete) after the item that answers a refusal. */
function endAfterRefusal(source: AsyncIterableIterator<LiveItem>): AsyncIterableIterator<LiveItem> {
  let ended = false;
  return {
    async next() {
      if (ended) return await source.return!();
      const result = await source.next();
      if (!result.done && result.value.refused) ended = true;
      return result;
    },
    return: () => source.return!(),
    throw: (error) => source.throw!(error),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * The planner selection of a field and its cache key, per field node of the (cached) document and
 * variables: thousands of subscribers of one document translate it once.
 */
const selections = new WeakMap<object, Map<string, { selection: Selection; key: string }>>();
function cachedSelection(view: View, info: GraphQLResolveInfo): { selection: Selection; key: string } {
  let byVariables = selections.get(info.fieldNodes[0]);
  if (!byVariables) selections.set(info.fieldNodes[0], byVariables = new Map());
  const variables = JSON.stringify(info.variableValues);
  let entry = byVariables.get(variables);
  if (!entry) {
    const selection = selectionOf(view, info);
    byVariables.set(variables, entry = { selection, key: JSON.stringify(selection) });
  }
  return entry;
}

/**
 * A row of the item by id, shaped by the field's selection. Subscribers with the same role and
 * selection share one read per event (live/per_event.ts): 5 000 subscribers of one document cost
 * one statement, not 5 000.
 */
const rowResolver = (type: DeclaredType) => (item: LiveItem, key: string, info: GraphQLResolveInfo) => {
  const id = item.ids[key];
  if (!id) return null;
  const view = viewOf(type);
  const { selection, key: selected } = cachedSelection(view, info);
  const shared = `row:${item.ctx.actor.workspaceId}:${item.ctx.actor.role}:${view.name}:${id}:${selected}`;
  return oncePerEvent(item.event, shared, () => readRowById(item.ctx, view, id, selection));
};

/** The event types of subscriptions (ConversationEvent, ApprovalEvent): their objects are LiveItems. */
const events = new Map<string, ObjectRef<Types, LiveItem>>();

/**
 * A row the event named is gone by the time it is read (deleted since): the error graphql-js gives
 * a non-null field that resolves to null, raised here so the field's type stays non-null.
 */
function vanished(info: GraphQLResolveInfo): never {
  throw new GraphQLError(
    `Cannot return null for non-nullable field ${info.parentType.name}.${info.fieldName}.`,
  );
}

function subscriptionOutput(sub: SubscriptionCapability): ObjectTypeRef | ObjectRef<Types, LiveItem> {
  const out = sub.output;
  if ("view" in out) return viewRef(out.view);
  let ref = events.get(out.name);
  if (ref) return ref;
  const created = builder.objectRef<LiveItem>(out.name);
  events.set(out.name, ref = created);
  created.implement({
    description: out.description,
    fields: (t) => ({
      type: t.field({
        type: enumRef(out.typeEnum.name, out.typeEnum.values, out.typeEnum.description),
        resolve: (item: LiveItem, _a: unknown, _c: unknown, info: GraphQLResolveInfo) =>
          item.ids.type ?? vanished(info),
      }),
      ...Object.fromEntries(
        Object.entries(out.rows).map(([name, row]) => {
          const read = rowResolver(row.view);
          const type = viewRef(row.view);
          const { description } = row;
          return [
            name,
            row.nullable
              ? t.field({
                type,
                nullable: true,
                description,
                resolve: (item: LiveItem, _a: unknown, _c: unknown, info: GraphQLResolveInfo) =>
                  read(item, name, info),
              })
              : t.field({
                type,
                description,
                resolve: async (item: LiveItem, _a: unknown, _c: unknown, info: GraphQLResolveInfo) =>
                  (await read(item, name, info)) ?? vanished(info),
              }),
          ];
        }),
      ),
    }),
  });
  return ref;
}

type SubscriptionFields = PothosSchemaTypes.SubscriptionFieldBuilder<Types, Types["Root"]>;

function subscriptionField(t: SubscriptionFields, sub: SubscriptionCapability) {
  const out = sub.output;
  const readRoot = "view" in out ? rowResolver(out.view) : undefined;
  return t.field({
    type: subscriptionOutput(sub),
    description: sub.summary,
    authScopes: { member: true },
    args: Object.fromEntries(Object.keys(sub.params).map((p) => [p, t.arg.id({ required: true })])),
    // Access, then the ids, then the rows they name: the same order and answers as a read.
    subscribe: async (_root: unknown, args: Record<string, unknown>, ctx: GraphQLContext) => {
      const first = await ctx.actor();
      authorize(first.actor, sub.action);
      const ids = checkIds(args, sub.params);
      await sub.check?.(first, ids);
      const { workspaceId } = first.actor;
      const live = first.live;
      // Shared by every socket of this role (src/graphql/ws.ts): the transport checks each member.
      if (ctx.liveGroup) {
        return live.stream(workspaceId, (event): LiveItem | null => {
          const selected = sub.select(event, ids);
          return selected && { ids: selected, event, ctx: first };
        });
      }
      // The credential and role as they are at each event (kept current by the changes PostgreSQL
      // announces, src/live/credentials.ts): a logout, a revoked token or a removed membership ends
      // the feed with its 401/403 at the next event.
      const credential = await live.credentials.track(
        ctx.deps,
        ctx.authorization,
        workspaceId,
        first.actor,
      );
      const source = live.stream(workspaceId, (event): LiveItem | null => {
        const selected = sub.select(event, ids);
        if (!selected) return null;
        const { ctx: now, refused } = credential.standing;
        if (refused) return { ids: selected, event, ctx: first, refused };
        try {
          authorize(now.actor, sub.action);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return { ids: selected, event, ctx: first, refused: error };
        }
        return { ids: selected, event, ctx: now };
      }, () => credential.release());
      return endAfterRefusal(source);
    },
    resolve: async (item: LiveItem, _args: unknown, _ctx: unknown, info: GraphQLResolveInfo) => {
      if (item.refused) throw item.refused;
      return readRoot ? (await readRoot(item, "id", info)) ?? vanished(info) : item;
    },
  });
}

/** Adds the Subscription type with a field per live feed. */
export function deriveSubscriptions(subscriptions: readonly SubscriptionCapability[]): void {
  if (!subscriptions.length) return;
  builder.subscriptionType({});
  builder.subscriptionFields((t) =>
    Object.fromEntries(subscriptions.map((sub) => [sub.name, subscriptionField(t, sub)]))
  );
}
