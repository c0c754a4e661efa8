/** GraphQL over HTTP at /graphql: graphql-yoga serving the Pothos schema over the app's services. */
import { createYoga, type Plugin } from "graphql-yoga";
import { execute } from "graphql";
import type { Deps } from "../context.ts";
import { buildContext } from "./context.ts";
import { createMaskError, useRequestErrorStatus } from "./errors.ts";
import { useDocumentLimits } from "./limits.ts";
import { schema } from "./schema.ts";
import { MAX_BODY_BYTES, readBody } from "../shared/http_body.ts";

/**
 * Executes with graphql-js itself instead of Yoga's default (@graphql-tools/executor, which adds
 * @defer/@stream support we do not use): about 5% less CPU per list request in bench/.
 */
const useGraphQLJsExecute: Plugin = {
  onExecute: ({ setExecuteFn }) => setExecuteFn(execute as Parameters<typeof setExecuteFn>[0]),
};

/**
 * A body whose declared length is within the limit goes to Yoga as it is: the HTTP server delivers
 * exactly the declared length. Others are read here, capped, so an undeclared (chunked) body is
 * limited too.
 */
function declaredWithinLimit(req: Request): boolean {
  const length = req.headers.get("content-length");
  return length !== null && /^\d+$/.test(length) && Number(length) <= MAX_BODY_BYTES;
}

/** The /graphql handler; GraphiQL only when APP_ENV is development, introspection not in production. */
export function createGraphQLHandler(
  deps: Deps,
): (req: Request, clientAddress?: string | null) => Promise<Response> {
  const yoga = createYoga<{ clientAddress?: string | null }>({
    schema,
    graphqlEndpoint: "/graphql",
    graphiql: deps.config.appEnv === "development",
    landingPage: false,
    // Errors are logged by maskError (unexpected ones only), with the app's logger.
    logging: false,
    maskedErrors: { maskError: createMaskError(deps.logger), isDev: false },
    context: ({ request, clientAddress }) => buildContext(deps, request, clientAddress ?? null),
    plugins: [
      useGraphQLJsExecute,
      useDocumentLimits({
        schema,
        maxCost: deps.config.graphqlMaxCost,
        introspection: deps.config.appEnv !== "production",
      }),
      useRequestErrorStatus,
    ],
    // The 1 MiB limit of decisions.md is applied before Yoga (413 as over REST). Yoga's own limit
    // pipes every body through a TransformStream, a large share of a small query's cost.
    maxRequestBodySize: false,
  });
  return async (req, clientAddress = null) => {
    if (!req.body || declaredWithinLimit(req)) return await yoga.fetch(req, { clientAddress });
    const body = await readBody(req);
    return await yoga.fetch(
      new Request(req.url, { method: req.method, headers: req.headers, body, signal: req.signal }),
      { clientAddress },
    );
  };
}
