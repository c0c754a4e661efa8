/**
 * Views: what the read planner (src/reads/), REST row shapes and the OpenAPI document know of each
 * readable type: its table, its fields (the column or SQL that reads each, its type, who may see it
 * as stored) and its relations to other views. Every readable type is declared with Pothos
 * (src/graphql/types/<domain>.ts); its view is read from that declaration once the schema is built
 * (`declaredView`, src/graphql/declared.ts). Domains name a type's view with `declaredView("Agent")`
 * and keep here what a declaration refers to: enums (`enumType`), JSON object shapes, and how an
 * actor sees a stored value (`present`).
 */
import { z } from "zod";
import { type Action, can } from "../auth/permissions.ts";
import type { ActorContext } from "../context.ts";

export type Scalar = "ID" | "String" | "Int" | "Float" | "Boolean" | "DateTime" | "JSON";

/** A closed set of strings (a PostgreSQL enum or a checked text column). */
export interface EnumType<V extends string = string> {
  name: string;
  values: readonly [V, ...V[]];
  description?: string;
  /** The zod schema of a value, for inputs: its `id` names the same enum in GraphQL and OpenAPI. */
  schema: z.ZodEnum<{ [K in V]: K }>;
}

export function enumType<const V extends string>(
  name: string,
  values: readonly [V, ...V[]],
  description?: string,
): EnumType<V> {
  const schema = z.enum(values as [V, ...V[]]).meta({ id: name, ...(description ? { description } : {}) });
  return { name, values, description, schema: schema as unknown as z.ZodEnum<{ [K in V]: K }> };
}

/** An object of a declared shape stored in a JSON column (intent requiredFields). */
export interface JsonObjectType {
  name: string;
  description?: string;
  fields: Record<string, { type: Scalar; nullable?: boolean; description?: string }>;
}

export interface FieldSpec {
  type: Scalar | EnumType | JsonObjectType;
  /** A list of `type` (a PostgreSQL array, or a JSON array for JsonObjectType). */
  list?: boolean;
  nullable?: boolean;
  description?: string;
  /** The column read, when it is not the field's name. */
  column?: string;
  /** Computed fields: the SQL expression for the row aliased `t` (a correlated subquery, say). */
  sql?: (t: string) => string;
  /**
   * What the actor sees of the stored value, applied after the read (masking, opening sealed
   * values). Skipped for actors allowed `unless`, who see the value as stored. `apply` must depend
   * only on the actor's role, the stored value and the app (config, secrets): the read planner
   * remembers its answers. `mayChange`, when given, is SQL over the stored value (`value`) that is
   * true wherever `apply` could change it for this actor: the read planner hands only those values
   * to `apply` and answers the others as stored (most URLs carry no secret).
   */
  present?: {
    unless?: Action;
    apply: (ctx: ActorContext, stored: unknown) => unknown;
    mayChange?: (ctx: ActorContext, value: string) => string;
  };
}

/** What an actor sees of a stored value (FieldSpec.present). */
export type Presenter = NonNullable<FieldSpec["present"]>;

export type Order = "asc" | "desc";

export type RelationSpec =
  /**
   * The rows of another view whose `foreignKey` is this row's id, paged by (sortKey, id) in `order`.
   * `sortKey` is a stored, non-null DateTime field of that view; createdAt unless named.
   */
  | {
    kind: "connection";
    view: () => View;
    foreignKey: string;
    order: Order;
    sortKey?: string;
    description?: string;
  }
  /** The rows of another view whose `foreignKey` is this row's id, all of them, by `orderBy`. */
  | { kind: "list"; view: () => View; foreignKey: string; orderBy: string; description?: string }
  /** The row of another view whose id is this row's `localKey` (null when none). */
  | { kind: "object"; view: () => View; localKey: string; nullable: boolean; description?: string }
  /** An object of fields computed from this same row (each field has `sql`). */
  | { kind: "embedded"; view: () => View; description?: string };

export interface View {
  /** The type's public name (GraphQL type, OpenAPI schema). */
  name: string;
  /** How "not found" names it ("Agent", "Delivery"). */
  label: string;
  description?: string;
  /** The table; absent for embedded views, whose fields are computed from their parent's row. */
  table?: string;
  /** The column naming the row's workspace, for views listed directly under a workspace. */
  workspaceColumn?: string;
  fields: Record<string, FieldSpec>;
  relations?: Record<string, RelationSpec>;
}

/** What a type declared with Pothos (src/graphql/types/) tells the read planner, REST and OpenAPI. */
export type DeclaredFacts = Omit<View, "name">;

let declaredFacts: ((name: string) => DeclaredFacts) | undefined;
const declaredViews = new Map<string, View>();

/**
 * Where the facts of declared types come from: the built GraphQL schema (src/graphql/declared.ts,
 * installed by src/graphql/schema.ts when it is built).
 */
export function provideDeclaredFacts(facts: (name: string) => DeclaredFacts): void {
  declaredFacts = facts;
}

let declaredTargets: ((typeName: string, relation: string) => string | undefined) | undefined;

/**
 * Where a declared type's relations lead before the schema is built (for the GraphQL type of a read
 * whose path walks them): the type declared for the related Prisma model
 * (src/graphql/types/mod.ts).
 */
export function provideDeclaredTargets(
  targets: (typeName: string, relation: string) => string | undefined,
): void {
  declaredTargets = targets;
}

/**
 * The view the relation `relation` of `view` leads to (undefined when it has none): from its facts,
 * or while the schema is being built, from its Prisma model.
 */
export function relatedView(view: View, relation: string): View | undefined {
  if (!declaredFacts) {
    const target = declaredTargets?.(view.name, relation);
    return target === undefined ? undefined : declaredView(target);
  }
  return view.relations?.[relation]?.view();
}

/**
 * The view of a type declared with Pothos, by its GraphQL name: read from its declaration on first
 * use (after the schema is built), the same object on every call.
 */
export function declaredView(name: string): View {
  let view = declaredViews.get(name);
  if (view) return view;
  let facts: DeclaredFacts | undefined;
  const read = (): DeclaredFacts => {
    if (facts) return facts;
    if (!declaredFacts) {
      throw new Error(`${name} is declared with Pothos: import src/graphql/schema.ts first`);
    }
    return facts = declaredFacts(name);
  };
  view = {
    name,
    get label() {
      return read().label;
    },
    get description() {
      return read().description;
    },
    get table() {
      return read().table;
    },
    get workspaceColumn() {
      return read().workspaceColumn;
    },
    get fields() {
      return read().fields;
    },
    get relations() {
      return read().relations;
    },
  };
  declaredViews.set(name, view);
  return view;
}

/**
 * A row a service read or wrote, as the actor may see it: each field's `present` applied, the same
 * rule the read planner applies to the rows it reads.
 */
export function presentRow<R extends Record<string, unknown>>(
  ctx: ActorContext,
  view: View,
  row: R,
  stored: Record<string, unknown> = row,
): R {
  const out: Record<string, unknown> = { ...row };
  for (const [name, spec] of Object.entries(view.fields)) {
    if (spec.present && name in out) out[name] = presentValue(ctx, spec.present, out[name]);
  }
  return keepStored(out as R, stored);
}

/**
 * The stored (Prisma) row behind a row a service shaped or presented for REST. GraphQL answers a
 * write with the stored row through the declared type's resolvers, which present it themselves:
 * each path presents once.
 */
const storedRows = new WeakMap<object, Record<string, unknown>>();

/** `shaped`, remembering the stored row it was made from (see storedRowOf). */
export function keepStored<R extends object>(shaped: R, stored: Record<string, unknown>): R {
  storedRows.set(shaped, stored);
  return shaped;
}

/** The stored row `row` was shaped from, or `row` itself when it is one. */
export function storedRowOf(row: Record<string, unknown>): Record<string, unknown> {
  return storedRows.get(row) ?? row;
}

/** A stored value as the actor may see it through `present` (as is for actors allowed `unless`). */
export function presentValue(
  ctx: ActorContext,
  present: Presenter,
  stored: unknown,
): unknown {
  return present.unless && can(ctx.actor, present.unless) ? stored : present.apply(ctx, stored);
}
