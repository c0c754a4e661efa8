/**
 * AppError -> RFC 9457 problem+json, with the request id as `instance`. A client that went away is
 * not an error (nothing is answered to anyone). Anything else is a bug: logged, bare 500.
 */
import type { Context } from "hono";
import { AppError, type FieldProblem, RateLimitedError } from "../shared/errors.ts";
import { dbAppError } from "../shared/db_errors.ts";
import type { ErrorCode, StatusOf } from "../shared/error_codes.ts";
import type { Logger } from "../shared/logger.ts";
import { isClientGone, requestInstance } from "../shared/request_scope.ts";

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
};

/** `status` is the one ERROR_CODES gives `code` (checked by the type). */
export function problem<C extends ErrorCode>(
  status: StatusOf<C>,
  code: C,
  detail: string,
  errors?: FieldProblem[],
  headers: Record<string, string> = {},
): Response {
  const instance = requestInstance();
  const body = {
    type: `/problems/${code.toLowerCase().replaceAll("_", "-")}`,
    title: TITLES[status] ?? "Error",
    status,
    detail,
    code,
    ...(instance ? { instance } : {}),
    ...(errors ? { errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}

export function errorResponse(err: unknown, c: Context, logger: Logger): Response {
  err = dbAppError(err) ?? err; // a row changed under the request: 404/409, not 500
  if (err instanceof AppError) {
    const headers: Record<string, string> = err.status === 401 ? { "www-authenticate": "Bearer" } : {};
    if (err instanceof RateLimitedError) headers["retry-after"] = String(err.retryAfterSeconds);
    return problem(err.status, err.code, err.message, err.errors, headers);
  }
  if (isClientGone(err)) {
    logger.debug("client gone", { path: c.req.path });
    return clientGoneResponse();
  }
  logger.error("unhandled error", { path: c.req.path, error: err });
  return problem(500, "INTERNAL", "Something went wrong on our side.");
}

/** Nobody reads it: 499 (nginx's "client closed request") only shows in access logs. */
export function clientGoneResponse(): Response {
  return new Response(null, { status: 499 });
}
