/** The GraphQL schema: scalars, then every capability's fields and types (./derive.ts); built once. */
import { builder } from "./builder.ts";
import "./types/root.ts";
import "./types/scalars.ts";
import { deriveFields, deriveSubscriptions } from "./derive.ts";
import { CAPABILITIES, SUBSCRIPTIONS } from "../capabilities.ts";
import { provideDeclaredFacts } from "../shared/view.ts";
import { declaredFacts } from "./declared.ts";

deriveFields(CAPABILITIES);
deriveSubscriptions(SUBSCRIPTIONS);

/** The executable schema served at /graphql and printed to schema.graphql. */
export const schema = builder.toSchema({ sortSchema: false });

// The declared types' facts (planner, REST, OpenAPI) are read from this schema.
provideDeclaredFacts((name) => declaredFacts(schema, name));
