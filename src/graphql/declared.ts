/**
 * The facts of the types declared with Pothos (./types/), read from the built schema: what the read
 * planner, REST row shapes and the OpenAPI document know of a type (src/shared/view.ts' View),
 * taken from the declaration itself. A field's GraphQL type gives its type, list-ness and
 * nullability; an exposed Prisma field its column, checked against Prisma's datamodel; a
 * prismaObject's model its table. What a declaration cannot say in GraphQL terms rides on
 * extensions: `typePlan` on the type (its label, its workspace column) and `fieldPlan` on a field
 * (SQL computing it, what an actor sees of it).
 */
import {
  type GraphQLField,
  type GraphQLNamedType,
  GraphQLNonNull,
  type GraphQLOutputType,
  type GraphQLSchema,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from "graphql";
import { getDatamodel } from "../generated/pothos-types.ts";
import type { DeclaredFacts, FieldSpec, Scalar } from "../shared/view.ts";
import { enumDeclarations, jsonObjectDeclarations } from "./common_types.ts";

/** The planner's facts of a field that its GraphQL type does not carry. */
export interface FieldPlan {
  /** The field is computed: SQL of the row aliased `t` (a correlated subquery, say). */
  sql?: (t: string) => string;
  /** What an actor sees of the stored value (see FieldSpec.present). */
  present?: FieldSpec["present"];
}

/** The planner's facts of a type that its GraphQL type does not carry. */
export interface TypePlan {
  /** How "not found" names it ("Prompt version"). */
  label: string;
  /** The column naming the row's workspace, for types listed directly under a workspace. */
  workspaceColumn?: string;
}

// The plans given to fieldPlan/typePlan: the schema keeps the same objects in its extensions, so
// a plan read back from a field is known by identity, typed, without re-checking its shape.
const fieldPlans = new WeakSet<object>();
const typePlans = new WeakSet<object>();

/** A field's extensions carrying its plan. */
export function fieldPlan(plan: FieldPlan): { plan: FieldPlan } {
  fieldPlans.add(plan);
  return { plan };
}

/** A type's extensions carrying its plan. */
export function typePlan(plan: TypePlan): { plan: TypePlan } {
  typePlans.add(plan);
  return { plan };
}

const isFieldPlan = (value: unknown): value is FieldPlan =>
  typeof value === "object" && value !== null && fieldPlans.has(value);
const isTypePlan = (value: unknown): value is TypePlan =>
  typeof value === "object" && value !== null && typePlans.has(value);

const SCALARS: ReadonlySet<string> = new Set<Scalar>([
  "ID",
  "String",
  "Int",
  "Float",
  "Boolean",
  "DateTime",
  "JSON",
]);
const isScalarName = (name: string): name is Scalar => SCALARS.has(name);

function typePlanOf(type: GraphQLNamedType): TypePlan {
  const plan = type.extensions.plan;
  if (!isTypePlan(plan)) throw new Error(`${type.name} is declared without typePlan({ label })`);
  return plan;
}

function fieldPlanOf(field: GraphQLField<unknown, unknown>): FieldPlan {
  const plan = field.extensions.plan;
  return isFieldPlan(plan) ? plan : {};
}

/** The Prisma model a prismaObject declares (plugin-prisma's type extension). */
function modelOf(type: GraphQLNamedType): string | undefined {
  const model = type.extensions.pothosPrismaModel;
  return typeof model === "string" ? model : undefined;
}

/**
 * The type (and list-ness, nullability) of a field's GraphQL type: a scalar, an enum of a declared
 * EnumType, or a JSON object type (./common_types.ts).
 */
function typeOf(
  typeName: string,
  fieldName: string,
  type: GraphQLOutputType,
): Omit<FieldSpec, "description"> {
  const nullable = !isNonNullType(type);
  const inner = type instanceof GraphQLNonNull ? type.ofType : type;
  const list = isListType(inner);
  const named = list ? inner.ofType : inner;
  const item = named instanceof GraphQLNonNull ? named.ofType : named;
  const declared = isScalarType(item) && isScalarName(item.name)
    ? item.name
    : isEnumType(item)
    ? enumDeclarations.get(item.name)
    : isObjectType(item)
    ? jsonObjectDeclarations.get(item.name)
    : undefined;
  if (!declared) {
    throw new Error(`${typeName}.${fieldName}: ${String(item)} is not a scalar, enum or JSON object type`);
  }
  return { type: declared, ...(list ? { list } : {}), ...(nullable ? { nullable } : {}) };
}

/** The facts of the declared type `name` of `schema`. */
export function declaredFacts(schema: GraphQLSchema, name: string): DeclaredFacts {
  const type = schema.getType(name);
  if (!type || !isObjectType(type)) throw new Error(`${name} is not an object type of the schema`);
  const { label, workspaceColumn } = typePlanOf(type);
  const model = modelOf(type);
  const columns = model
    ? new Set(
      getDatamodel().datamodel.models[model].fields.filter((f) => f.kind !== "object").map((f) => f.name),
    )
    : undefined;
  const fields: Record<string, FieldSpec> = {};
  for (const field of Object.values(type.getFields())) {
    const { sql, present } = fieldPlanOf(field);
    const spec: FieldSpec = {
      ...typeOf(name, field.name, field.type),
      ...(field.description ? { description: field.description } : {}),
      ...(sql ? { sql } : {}),
      ...(present ? { present } : {}),
    };
    const exposed = field.extensions.pothosExposedField;
    const column = typeof exposed === "string" ? exposed : field.name;
    if (!sql && columns && !columns.has(column)) {
      throw new Error(`${name}.${field.name}: ${model} has no column ${column}`);
    }
    if (!sql && column !== field.name) spec.column = column;
    fields[field.name] = spec;
  }
  return {
    label,
    description: type.description ?? undefined,
    // Prisma's default: the table and its columns are named as the model and its fields (no @map).
    table: model,
    workspaceColumn,
    fields,
  };
}
