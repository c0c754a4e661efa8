/**
 * Views: what the read planner (src/reads/), REST row shapes and the OpenAPI document know of each
 * readable type: its table, its fields (the column or SQL that reads each, its type, who may see it
 * as stored) and its relations to other views. Every readable type is declared with Pothos
 * (src/graphql/types/<domain>.ts); its view is read from that declaration when the schema is built
 * (`buildSchema()`, src/graphql/schema.ts, returns them). Domains name a type with
 * `declaredType("Agent")` and keep here what a declaration refers to: enums (`enumType`), JSON
 * object shapes, and how an actor sees a stored value (`present`).
 */
import type { Sql } from "./sql_fragment.ts";
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

/**
 * The caller as a field's or a filter's SQL names it: bind parameters every read statement of the
 * planner takes first (src/reads/compile.ts), so a value that depends on who reads (a member's
 * unread count) is computed in the same statement, and the statement's text stays the same for
 * every caller of a role.
 */
export interface CallerSql {
  /** The actor's workspace (text). */
  workspace: Sql;
  /** The acting member's user id (text); NULL for an API token, which is no member. */
  user: Sql;
}

export interface FieldSpec {
  type: Scalar | EnumType | JsonObjectType;
  /** A list of `type` (a PostgreSQL array, or a JSON array for JsonObjectType). */
  list?: boolean;
  nullable?: boolean;
  description?: string;
  /** The column read, when it is not the field's name. */
  column?: string;
  /**
   * Computed fields: the SQL expression for the row aliased `t` (a correlated subquery, say);
   * `caller` names who reads, for a value that depends on it.
   */
  sql?: (t: Sql, caller: CallerSql) => Sql;
  /**
   * Computed fields: the value `sql` reads, taken from a stored (Prisma) row that holds what the
   * field's resolver selects (a member's user, a delivery's event). A transport presents a row a
   * service returned with it; `present` then applies as it does to `sql`'s value.
   */
  row?: (stored: Record<string, unknown>, ctx: ActorContext) => unknown;
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
    mayChange?: (ctx: ActorContext, value: Sql) => Sql;
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

/**
 * A type declared with Pothos as domains and capabilities name it (`declaredType("Agent")`): its
 * name only. Its View is read from the built schema (src/graphql/schema.ts `buildSchema().views`),
 * which the app's setup hands to those who read views (the read planner, src/reads/views.ts).
 */
export interface DeclaredType {
  readonly name: string;
}

/** The type declared with Pothos under the GraphQL name `name`. */
export function declaredType(name: string): DeclaredType {
  return Object.freeze({ name });
}

/** The views of the declared types, read from the built schema (src/graphql/declared.ts). */
export interface DeclaredViews {
  /** The view of a declared type; throws for a name that is not one. */
  get(type: DeclaredType | string): View;
  has(name: string): boolean;
}

/** A stored value as the actor may see it through `present` (as is for actors allowed `unless`). */
export function presentValue(
  ctx: ActorContext,
  present: Presenter,
  stored: unknown,
): unknown {
  return present.unless && can(ctx.actor, present.unless) ? stored : present.apply(ctx, stored);
}
