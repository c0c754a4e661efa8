/** GraphQL over HTTP at /graphql: graphql-yoga serving the Pothos schema over the app's services. */
import { createYoga, type Plugin } from "graphql-yoga";
import { execute } from "graphql";
import type { Deps } from "../context.ts";
import { buildContext } from "./context.ts";
import { createMaskError, useRequestErrorStatus } from "./errors.ts";
import { closeUnanswered, parseJsonWith } from "./yoga_internals.ts";
import { useDocumentLimits } from "./limits.ts";
import { buildSchema } from "./schema.ts";
import { useReadPlanner } from "../reads/graphql.ts";
import { decodeUtf8, MAX_BODY_BYTES, readBody } from "../shared/http_body.ts";
import { AppError } from "../shared/errors.ts";
import { problem } from "../rest/errors.ts";
import { createWebSocketHandler, type WebSocketHandler, type YogaServerContext } from "./ws.ts";
import { requestAuthorization } from "../auth/console_cookie.ts";
import { asksForGraphiQL, graphiqlPage } from "./graphiql.ts";

/**
 * Executes with graphql-js itself instead of Yoga's default (@graphql-tools/executor, which adds
 * @defer/@stream support we do not use): about 5% less CPU per list request in bench/.
 */
const useGraphQLJsExecute: Plugin = {
  onExecute: ({ setExecuteFn }) => setExecuteFn(execute as Parameters<typeof setExecuteFn>[0]),
};

/**
 * POST bodies must be UTF-8 (400 INVALID_UTF8 problem+json, as over REST), where Yoga would read
 * them with U+FFFD in place of bad bytes; a body cut short is MALFORMED_BODY, or nothing at all
 * when its client has gone (readBody). Yoga's own parser for the content type is kept: a JSON
 * body is decoded here and handed to it (parseJsonWith), other types are checked on a copy first.
 */
const useStrictUtf8Body: Plugin = {
  onRequestParse: ({ request, requestParser, setRequestParser }) => {
    if (request.method !== "POST" || !requestParser) return;
    const yogaParser = requestParser;
    const isJson = /^application\/(graphql\+)?json\s*(;|,|$)/i.test(
      request.headers.get("content-type") ?? "",
    );
    setRequestParser(async (req) => {
      try {
        if (!isJson) {
          decodeUtf8(await readBody(req.clone()));
          return await yogaParser(req);
        }
        const text = decodeUtf8(await readBody(req));
        return await parseJsonWith(yogaParser, text);
      } catch (e) {
        if (e instanceof AppError) return problem(e.status, e.code, e.message);
        throw e;
      }
    });
  },
};

/**
 * A GET request's `variables` and `extensions` are JSON in the query string; Yoga's GET parser lets
 * a JSON syntax error escape as an unexpected error (a 500 in disguise). Refused here as a 400
 * MALFORMED_JSON naming the parameter, as a malformed body is.
 */
const useStrictGetParams: Plugin = {
  onRequestParse: ({ request, url, endResponse }) => {
    if (request.method !== "GET") return;
    const params = url.searchParams;
    for (const name of ["variables", "extensions"]) {
      const text = params.get(name);
      if (!text) continue;
      try {
        JSON.parse(text);
      } catch {
        return endResponse(problem(400, "MALFORMED_JSON", `the ${name} parameter is not valid JSON`));
      }
    }
  },
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

export interface GraphQLHandler {
  /** GraphQL over HTTP (subscriptions too, as SSE). */
  fetch(req: Request, clientAddress?: string | null): Promise<Response>;
  /** graphql-ws on the same path (./ws.ts), over the same Yoga envelop. */
  websocket: WebSocketHandler;
}

/**
 * The /graphql handler; GraphiQL only when APP_ENV is development (./graphiql.ts), introspection
 * not in production. The credential is the Authorization header, or the console's session cookie
 * once the request passed its checks (403 CSRF_REFUSED before anything runs otherwise).
 */
export function createGraphQLHandler(deps: Deps): GraphQLHandler {
  const { schema } = buildSchema();
  const maskError = createMaskError(deps.logger);
  const graphiql = deps.config.appEnv === "development";
  const yoga = createYoga<YogaServerContext>({
    schema,
    graphqlEndpoint: "/graphql",
    // Served before Yoga when enabled (fetch below): its opening headers depend on the session.
    graphiql: false,
    landingPage: false,
    // One CORS policy for REST and GraphQL: the app's (CORS_ORIGINS), applied before Yoga.
    cors: false,
    // Errors are logged by maskError (unexpected ones only), with the app's logger.
    logging: false,
    maskedErrors: { maskError, isDev: false },
    context: ({ request, clientAddress, authorization }) =>
      buildContext(deps, request, clientAddress ?? null, authorization),
    plugins: [
      useGraphQLJsExecute,
      useStrictUtf8Body,
      useStrictGetParams,
      useDocumentLimits({
        schema,
        maxCost: deps.config.graphqlMaxCost,
        introspection: deps.config.appEnv !== "production",
      }),
      // After the limits (they check variables first): read-only queries in one SQL statement.
      useReadPlanner(maskError),
      useRequestErrorStatus,
      // A subscription refused with 406 (asked for over plain JSON) lets its live stream go.
      { onResultProcess: closeUnanswered },
    ],
    // The 1 MiB body limit is applied before Yoga (413 as over REST). Yoga's own limit
    // pipes every body through a TransformStream, a large share of a small query's cost.
    maxRequestBodySize: false,
  });
  const fetch = async (req: Request, clientAddress: string | null = null) => {
    let authorization: string | null;
    try {
      authorization = requestAuthorization(deps.config, req);
    } catch (e) {
      if (e instanceof AppError) return problem(e.status, e.code, e.message);
      throw e;
    }
    if (graphiql && asksForGraphiQL(req)) return await graphiqlPage(deps, req, authorization);
    const context = { clientAddress, authorization };
    if (!req.body || declaredWithinLimit(req)) return await yoga.fetch(req, context);
    const body = await readBody(req);
    return await yoga.fetch(
      new Request(req.url, { method: req.method, headers: req.headers, body, signal: req.signal }),
      context,
    );
  };
  return { fetch, websocket: createWebSocketHandler(deps, yoga) };
}
