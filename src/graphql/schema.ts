/** The GraphQL schema: every type file registers with the builder; this builds it once. */
import { builder } from "./builder.ts";
import "./types/root.ts";
import "./types/scalars.ts";
import "./types/workspaces.ts";
import "./types/intents.ts";
import "./types/webhooks.ts";
import "./types/webhook_deliveries.ts";
import "./types/agents.ts";

/** The executable schema served at /graphql and printed to schema.graphql. */
export const schema = builder.toSchema({ sortSchema: false });
