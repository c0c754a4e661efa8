/** GraphQL over HTTP at /graphql: graphql-yoga serving the Pothos schema over the app's services. */
import { createYoga } from "graphql-yoga";
import type { Deps } from "../context.ts";
import { buildContext } from "./context.ts";
import { createMaskError } from "./errors.ts";
import { schema } from "./schema.ts";

/** The /graphql handler; GraphiQL only when APP_ENV is development. */
export function createGraphQLHandler(deps: Deps): (req: Request) => Promise<Response> {
  const yoga = createYoga({
    schema,
    graphqlEndpoint: "/graphql",
    graphiql: deps.config.appEnv === "development",
    landingPage: false,
    // Errors are logged by maskError (unexpected ones only), with the app's logger.
    logging: false,
    maskedErrors: { maskError: createMaskError(deps.logger), isDev: false },
    context: ({ request }) => buildContext(deps, request),
  });
  return async (req) => await yoga.fetch(req);
}
