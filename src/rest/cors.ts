/**
 * The one CORS policy, for REST and GraphQL alike (Yoga's own is off): only the origins of
 * CORS_ORIGINS get CORS headers; a request from any other origin (or none) gets none at all, and
 * a preflight from it falls through to the routes like any OPTIONS request (405).
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";

export const CORS_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
/**
 * Not `x-switchboard-csrf`: a page of another origin must never be let to send the console's CSRF
 * header (src/auth/console_cookie.ts), so no preflight grants it.
 */
export const CORS_REQUEST_HEADERS = ["authorization", "content-type", "x-workspace-id", "x-request-id"];

export function corsPolicy(origins: string[]): MiddlewareHandler {
  const allowed = new Set(origins);
  const policy = cors({
    origin: (origin) => allowed.has(origin) ? origin : null,
    allowMethods: CORS_METHODS,
    allowHeaders: CORS_REQUEST_HEADERS,
    // Readable by the page: the id to quote in a support request, and the hints of 405/429.
    exposeHeaders: ["x-request-id", "allow", "retry-after"],
    maxAge: 600,
  });
  return async (c, next) => {
    if (!allowed.has(c.req.header("origin") ?? "")) return await next();
    // Hono's middleware answers every OPTIONS as a preflight; a real one names its method.
    if (c.req.method === "OPTIONS" && !c.req.header("access-control-request-method")) return await next();
    return await policy(c, next);
  };
}
