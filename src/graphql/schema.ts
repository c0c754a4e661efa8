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
