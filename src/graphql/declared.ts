/**
 * The views of the types declared with Pothos (./types/), read from the built schema: what the read
 * planner, REST row shapes and the OpenAPI document know of a type (src/shared/view.ts' View),
 * taken from the declaration itself. A field's GraphQL type gives its type, list-ness and
 * nullability; an exposed Prisma field its column, checked against Prisma's datamodel; a
 * prismaObject's model its table. What a declaration cannot say in GraphQL terms rides on
 * extensions: `typePlan` on the type (its label, its workspace column, the columns it keeps
 * private) and `fieldPlan` on a field (what an actor sees of it), `computedField` for a field
 * computed from its row (its SQL and the same value from a stored row).
 *
 * A field of another declared type is a relation: plugin-prisma's `t.relation` (an object, or a
 * list) and `t.relatedConnection` carry the Prisma relation (`pothosPrismaRelationField`), whose
 * foreign key joins the rows, and the `query` given to plugin-prisma (read back through
 * `pothosPrismaSelect`) orders them; a field of a declared type without a model (AgentCounts) is an
 * object computed from the same row.
 */
import {
  type GraphQLField,
  type GraphQLNamedType,
  GraphQLNonNull,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from "graphql";
import { getDatamodel } from "../generated/pothos-types.ts";
import type { GraphQLContext } from "./context.ts";
import type { ActorContext } from "../context.ts";
import {
  type DeclaredViews,
  type FieldSpec,
  type Presenter,
  presentValue,
  type RelationSpec,
  type Scalar,
  type View,
} from "../shared/view.ts";
import { enumDeclarations, jsonObjectDeclarations } from "./common_types.ts";
import { orderOf } from "./keyset_connections.ts";

/** The planner's facts of a field that its GraphQL type does not carry. */
export interface FieldPlan {
  /** The field is computed: SQL of the row aliased `t` (a correlated subquery, say); see FieldSpec.sql. */
  sql?: FieldSpec["sql"];
  /** The same value from a stored (Prisma) row (see FieldSpec.row); given with `sql`. */
  row?: FieldSpec["row"];
  /** What an actor sees of the stored value (see FieldSpec.present). */
  present?: FieldSpec["present"];
}

/** The planner's facts of a type that its GraphQL type does not carry. */
export interface TypePlan {
  /** How "not found" names it ("Prompt version"). */
  label: string;
  /** The column naming the row's workspace, for types listed directly under a workspace. */
  workspaceColumn?: string;
  /**
   * The columns the type keeps private (secrets): no field may read them, and its domain's services
   * leave them out of the rows they return (Prisma's `omit` of the same object).
   */
  private?: Readonly<Record<string, true>>;
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

/**
 * A stored field an actor sees through `present` (masked URLs and headers): the planner applies it
 * to the values it reads (the extension), and `resolve` to any other row reaching the field (a
 * Prisma row through plugin-prisma), so no path shows the stored value to an actor who may not see
 * it. `read` takes the stored value from the row.
 */
export function presentedField<Row, Value>(
  present: Presenter,
  read: (row: Row) => Value,
): {
  extensions: { plan: FieldPlan };
  resolve: (row: Row, args: object, ctx: GraphQLContext) => Promise<Value>;
} {
  return {
    extensions: fieldPlan({ present }),
    // A presenter gives a value of the stored value's kind (a URL for a URL, headers for headers).
    resolve: async (row, _args, ctx) => presentValue(await ctx.actor(), present, read(row)) as Value,
  };
}

/**
 * A field computed from its row: `sql` for the planner, `row` for a stored (Prisma) row that holds
 * what the field's `select` asks (the transports' rows: a write's answer, plugin-prisma's rows),
 * `present` (when given) applied to either value. `resolve` is the field's resolver, from `row`.
 */
export function computedField<Row, Value>(
  plan: {
    sql: NonNullable<FieldSpec["sql"]>;
    row: (row: Row, ctx: ActorContext) => Value;
    present?: Presenter;
  },
): {
  extensions: { plan: FieldPlan };
  resolve: (row: Row, args: object, ctx: GraphQLContext) => Promise<Value>;
} {
  const { sql, row, present } = plan;
  return {
    // A plan's rows are stored rows of the field's type (the `select` beside it holds what `row` reads).
    extensions: fieldPlan({ sql, row: row as unknown as FieldSpec["row"], present }),
    resolve: async (stored, _args, ctx) => {
      const actor = await ctx.actor();
      const value = row(stored, actor);
      // A presenter gives a value of the kind its field declares (a URL for a URL).
      return (present ? presentValue(actor, present, value) : value) as Value;
    },
  };
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

/** Prisma's datamodel (DMMF) field of a relation, as plugin-prisma carries it. */
interface RelationField {
  name: string;
  type: string;
  isList: boolean;
  relationName: string;
  relationFromFields?: readonly string[];
}

const isRelationField = (value: unknown): value is RelationField =>
  typeof value === "object" && value !== null && "relationName" in value && "type" in value &&
  typeof value.relationName === "string" && typeof value.type === "string";

/** The foreign key of a relation to many: the column of the other model pointing back (its `fields`). */
function foreignKeyOf(relation: RelationField): string {
  const other = getDatamodel().datamodel.models[relation.type].fields.find((f) =>
    f.relationName === relation.relationName && (f.relationFromFields?.length ?? 0) > 0
  );
  const key = other?.relationFromFields?.[0];
  if (!key) throw new Error(`${relation.type} has no foreign key of the relation ${relation.relationName}`);
  return key;
}

/** The named object type of a field's type (through non-null and list), if it is one. */
function objectTypeOf(type: GraphQLOutputType) {
  const inner = type instanceof GraphQLNonNull ? type.ofType : type;
  const item = isListType(inner) ? inner.ofType : inner;
  const named = item instanceof GraphQLNonNull ? item.ofType : item;
  return isObjectType(named) && !jsonObjectDeclarations.has(named.name) ? named : undefined;
}

/** A relation field of a declared type, as the planner walks it. */
function relationOf(
  typeName: string,
  field: GraphQLField<unknown, unknown>,
  target: GraphQLObjectType,
  viewNamed: (name: string) => View,
): RelationSpec {
  const where = `${typeName}.${field.name}`;
  const description = field.description ?? undefined;
  const relation = field.extensions.pothosPrismaRelationField;
  if (!isRelationField(relation)) {
    if (modelOf(target) !== undefined) throw new Error(`${where} is not declared with t.relation`);
    return { kind: "embedded", view: () => viewNamed(target.name), description };
  }
  const select = field.extensions.pothosPrismaSelect;
  const edges = target.getFields().edges;
  const edge = edges && objectTypeOf(edges.type);
  const node = edge?.getFields().node;
  const nodeType = node && objectTypeOf(node.type);
  // The type a read's path is given while the schema is built (./types/mod.ts: the model's type).
  if (modelOf(nodeType ?? target) !== relation.type) {
    throw new Error(`${where} is not of the type declared for ${relation.type}`);
  }
  if (nodeType) {
    const { key, order } = orderOf(where, select);
    return {
      kind: "connection",
      view: () => viewNamed(nodeType.name),
      foreignKey: foreignKeyOf(relation),
      order,
      ...(key === "createdAt" ? {} : { sortKey: key }),
      description,
    };
  }
  if (relation.isList) {
    if (relation.name !== field.name) {
      throw new Error(`${where} is not named as its Prisma relation ${relation.name}`);
    }
    const { key, order } = orderOf(where, select);
    if (order !== "asc") throw new Error(`${where}: a list is read oldest first (asc)`);
    return {
      kind: "list",
      view: () => viewNamed(target.name),
      foreignKey: foreignKeyOf(relation),
      orderBy: key,
      description,
    };
  }
  // A transport presents a stored row's relation from the row's Prisma field of that name.
  if (relation.name !== field.name) {
    throw new Error(`${where} is not named as its Prisma relation ${relation.name}`);
  }
  const localKey = relation.relationFromFields?.[0];
  if (!localKey) throw new Error(`${where}: the foreign key is on the other side`);
  return {
    kind: "object",
    view: () => viewNamed(target.name),
    localKey,
    nullable: !isNonNullType(field.type),
    description,
  };
}

/**
 * The views of the declared types `names` of `schema`, each read once; a relation leads to the view
 * of its type among them. A declaration the planner cannot read fails here, when the schema is built.
 */
export function declaredViews(schema: GraphQLSchema, names: Iterable<string>): DeclaredViews {
  const views = new Map<string, View>();
  const get = (name: string): View => {
    const view = views.get(name);
    if (!view) throw new Error(`${name} is not a type declared with Pothos (src/graphql/types/mod.ts)`);
    return view;
  };
  for (const name of names) views.set(name, { name, ...declaredFacts(schema, name, get) });
  return { get: (type) => get(typeof type === "string" ? type : type.name), has: (name) => views.has(name) };
}

/** The facts of the declared type `name` of `schema`; its relations lead to `viewNamed`'s views. */
function declaredFacts(
  schema: GraphQLSchema,
  name: string,
  viewNamed: (name: string) => View,
): Omit<View, "name"> {
  const type = schema.getType(name);
  if (!type || !isObjectType(type)) throw new Error(`${name} is not an object type of the schema`);
  const { label, workspaceColumn, private: secret = {} } = typePlanOf(type);
  const model = modelOf(type);
  const columns = model
    ? new Set(
      getDatamodel().datamodel.models[model].fields.filter((f) => f.kind !== "object").map((f) => f.name),
    )
    : undefined;
  const fields: Record<string, FieldSpec> = {};
  const relations: Record<string, RelationSpec> = {};
  for (const field of Object.values(type.getFields())) {
    const target = objectTypeOf(field.type);
    if (target) {
      relations[field.name] = relationOf(name, field, target, viewNamed);
      continue;
    }
    const { sql, row, present } = fieldPlanOf(field);
    const spec: FieldSpec = {
      ...typeOf(name, field.name, field.type),
      ...(field.description ? { description: field.description } : {}),
      ...(sql ? { sql } : {}),
      ...(row ? { row } : {}),
      ...(present ? { present } : {}),
    };
    const exposed = field.extensions.pothosExposedField;
    const column = typeof exposed === "string" ? exposed : field.name;
    if (!sql && columns && !columns.has(column)) {
      throw new Error(`${name}.${field.name}: ${model} has no column ${column}`);
    }
    if (!sql && Object.hasOwn(secret, column)) throw new Error(`${name}.${field.name}: ${column} is private`);
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
    ...(Object.keys(relations).length ? { relations } : {}),
  };
}
