/**
 * The GraphQL schema: scalars, the types declared with Pothos (./types/), then every capability's
 * fields and the types derived from views (./derive.ts); built once.
 */
import { builder } from "./builder.ts";
import "./types/root.ts";
import "./types/scalars.ts";
import { deriveFields, deriveSubscriptions } from "./derive.ts";
import { CAPABILITIES, SUBSCRIPTIONS } from "../capabilities.ts";
import { provideDeclaredFacts } from "../shared/view.ts";
import { declaredFacts } from "./declared.ts";
import { DECLARED_TYPES } from "./types/mod.ts";
import { viewOfRead } from "../reads/plan.ts";

deriveFields(CAPABILITIES);
deriveSubscriptions(SUBSCRIPTIONS);

/** The executable schema served at /graphql and printed to schema.graphql. */
export const schema = builder.toSchema({ sortSchema: false });

// The declared types' facts (planner, REST, OpenAPI) are read from this schema, all of them now:
// a declaration the planner cannot read fails here, at start, not at its first request.
const facts = new Map([...DECLARED_TYPES.keys()].map((name) => [name, declaredFacts(schema, name)]));
provideDeclaredFacts((name) => {
  const found = facts.get(name);
  if (!found) throw new Error(`${name} is not a type declared with Pothos (src/graphql/types/mod.ts)`);
  return found;
});

// A read's filter is an argument of its declared enum: the field it pins must be of that enum.
for (const cap of CAPABILITIES) {
  if (cap.kind !== "read") continue;
  const { view } = viewOfRead(cap);
  for (const [name, type] of Object.entries(cap.filters ?? {})) {
    const field = view.fields[name];
    if (!field || field.sql || field.type !== type) {
      throw new Error(`${cap.name}: filter ${name} is not a stored ${type.name} field of ${view.name}`);
    }
  }
}
