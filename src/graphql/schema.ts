/** The GraphQL schema: scalars, then every capability's fields and types (./derive.ts); built once. */
import { builder } from "./builder.ts";
import "./types/root.ts";
import "./types/scalars.ts";
import { deriveFields } from "./derive.ts";
import { CAPABILITIES } from "../capabilities.ts";

deriveFields(CAPABILITIES);

/** The executable schema served at /graphql and printed to schema.graphql. */
export const schema = builder.toSchema({ sortSchema: false });
