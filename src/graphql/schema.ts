/**
 * The GraphQL schema: scalars, the types declared with Pothos (./types/), then every capability's
 * fields and the types derived from them (./derive.ts), and the views read from the declared types
 * (./declared.ts) for the read planner, REST and OpenAPI. `buildSchema()` builds them once; the
 * app's setup (src/app.ts) hands its views to whoever reads them.
 */
import type { GraphQLSchema } from "graphql";
import { builder } from "./builder.ts";
import "./types/root.ts";
import "./types/scalars.ts";
import { deriveFields, deriveSubscriptions, readTypeName } from "./derive.ts";
import { CAPABILITIES, SUBSCRIPTIONS } from "../capabilities.ts";
import { isReadFilter } from "../shared/capability.ts";
import type { DeclaredViews } from "../shared/view.ts";
import { declaredViews } from "./declared.ts";
import { DECLARED_TYPES } from "./types/mod.ts";

/** The executable schema and the views of its declared types. */
export interface BuiltSchema {
  /** Served at /graphql and printed to schema.graphql. */
  schema: GraphQLSchema;
  /** The views of the declared types (src/shared/view.ts), for the planner, REST and OpenAPI. */
  views: DeclaredViews;
}

let built: BuiltSchema | undefined;

/**
 * The schema and its views, built on the first call (Pothos' builder takes each field once) and the
 * same objects after. A declaration the views cannot be read from fails here, at start.
 */
export function buildSchema(): BuiltSchema {
  if (built) return built;
  deriveFields(CAPABILITIES);
  deriveSubscriptions(SUBSCRIPTIONS);
  const schema = builder.toSchema({ sortSchema: false });
  const views = declaredViews(schema, DECLARED_TYPES.keys());
  // A read's filter is an argument of its declared enum: the field it pins must be of that enum.
  for (const cap of CAPABILITIES) {
    if (cap.kind !== "read") continue;
    const view = views.get(readTypeName(cap));
    for (const [name, type] of Object.entries(cap.filters ?? {})) {
      if (isReadFilter(type)) continue;
      const field = view.fields[name];
      if (!field || field.sql || field.type !== type) {
        throw new Error(`${cap.name}: filter ${name} is not a stored ${type.name} field of ${view.name}`);
      }
    }
  }
  return built = { schema, views };
}
