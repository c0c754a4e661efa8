/**
 * GraphQL types shared by the derived types (./derive.ts) and the declared ones (./types/): the
 * enums and JSON object types of the declarations (src/shared/view.ts' EnumType, JsonObjectType),
 * one Pothos type each by name, and the registry ./declared.ts reads back from a built schema.
 */
import type { EnumRef, ObjectRef } from "@pothos/core";
import type { ConnectionShape } from "@pothos/plugin-relay";
import { builder } from "./builder.ts";
import type { EnumType, JsonObjectType, Scalar } from "../shared/view.ts";

/** The builder's schema types (context, scalars, scopes, Prisma types). */
export type Types = typeof builder.$inferSchemaTypes;
/**
 * What a derived object type resolves from: an object of the read planner's answer (keyed by
 * response key) or a row a capability returned.
 */
export type Row = Record<string, unknown>;
export type ScalarName = Scalar;
export type EnumTypeRef = EnumRef<Types, string, string>;
/** A derived object type (its objects are Rows), or a declared one (./types/). */
export type ObjectTypeRef = ObjectRef<Types, Row> | ObjectRef<Types, unknown>;
/** A type of a derived field (`Of` its object types: output or input), or a list of one. */
export type Ref<Of> = ScalarName | EnumTypeRef | Of;
export type RefParam<Of> = Ref<Of> | [Ref<Of>];

const enums = new Map<string, EnumTypeRef>();
/** The object types by name: derived ones, and the JSON object types. */
export const objects = new Map<string, ObjectTypeRef>();
/** The declarations behind enums and JSON object types made from them, by GraphQL name. */
export const enumDeclarations = new Map<string, EnumType>();
export const jsonObjectDeclarations = new Map<string, JsonObjectType>();

/** A GraphQL name can hold only letters, digits and `_`: enums of other values stay String. */
const isGraphQLName = (s: string) => /^[_A-Za-z][_0-9A-Za-z]*$/.test(s);

/** The enum `name` of `values` (one type per name), or String when a value is no GraphQL name. */
export function enumRef(
  name: string,
  values: readonly string[],
  description?: string,
): EnumTypeRef | "String" {
  if (!values.every(isGraphQLName)) return "String";
  let ref = enums.get(name);
  if (!ref) {
    ref = builder.enumType(name, { values: [...values] as [string, ...string[]], description });
    enums.set(name, ref);
  }
  return ref;
}

/** The GraphQL enum of a declared EnumType. */
export function enumOf(type: EnumType): EnumTypeRef {
  const ref = enumRef(type.name, type.values, type.description);
  if (ref === "String") throw new Error(`${type.name}'s values are not GraphQL names`);
  enumDeclarations.set(type.name, type);
  return ref;
}

/** The object type of a JSON object column's objects (an intent's requiredFields). */
export function jsonObjectRef(type: JsonObjectType): ObjectTypeRef {
  let ref = objects.get(type.name);
  if (ref) return ref;
  const created = builder.objectRef<Row>(type.name);
  objects.set(type.name, ref = created);
  jsonObjectDeclarations.set(type.name, type);
  created.implement({
    description: type.description,
    fields: (t) =>
      Object.fromEntries(
        Object.entries(type.fields).map(([name, f]) => [
          name,
          t.field({
            type: f.type,
            nullable: f.nullable ?? false,
            description: f.description,
            // A planned object is read by response key (./planned_answers.ts); a row by its keys.
            resolve: (row) => row[name],
          }),
        ]),
      ),
  });
  return ref;
}

const connections = new Map<string, ObjectRef<Types, unknown>>();

/** The shape of a connection of `T` (Relay's). */
export type ConnectionOf<T> = ConnectionShape<Types, T, false>;

/**
 * The Relay connection of an object type (`<Name>Connection`, `<Name>Edge`, PageInfo), one per
 * type: the same type for a declared relation (`t.relatedConnection(..., connectionOf(Intent))`)
 * and a derived read's page.
 */
export function connectionOf<T>(type: ObjectRef<Types, T>): ObjectRef<Types, ConnectionOf<T>> {
  const found = connections.get(type.name);
  if (found) return found as ObjectRef<Types, ConnectionOf<T>>;
  const ref = builder.connectionObject({ type, name: `${type.name}Connection` });
  connections.set(type.name, ref);
  return ref;
}
