/**
 * Yoga's error masking: an AppError becomes a GraphQLError whose `extensions.code` is the REST
 * `code`; a GraphQL error with a code (parse, validation, limits) keeps it; one without a code and
 * outside any resolver is the request's mistake (BAD_USER_INPUT); anything else is a bug: logged,
 * and answered as "Unexpected error." with code INTERNAL. Every error leaves with a code.
 */
import { GraphQLError } from "graphql";
import type { Plugin } from "graphql-yoga";
import { PothosValidationError } from "@pothos/core";
import { AppError, RateLimitedError } from "../shared/errors.ts";
import { dbAppError } from "../shared/db_errors.ts";
import type { ErrorCode, StatusOf } from "../shared/error_codes.ts";
import type { Logger } from "../shared/logger.ts";
import { BAD_CURSOR, INTROSPECTION_DISABLED, QUERY_TOO_COMPLEX } from "./limits.ts";
import { isClientGone } from "../shared/request_scope.ts";

/** The innermost cause of an error that GraphQL execution may have wrapped (once or more). */
function rootCause(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError && current.originalError) current = current.originalError;
  return current;
}

/** Where in the document the error happened, kept on the replacement error. */
function located(error: unknown) {
  return error instanceof GraphQLError
    ? { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path }
    : {};
}

/** `extensions` of an error with `code`; `status` as ERROR_CODES gives it (checked by the type). */
const coded = <C extends ErrorCode>(code: C, status: StatusOf<C>) => ({ code, status });

/** Builds Yoga's `maskedErrors.maskError` for the app's logger. */
export function createMaskError(logger: Logger): (error: unknown, message: string) => Error {
  return (error) => {
    const cause = dbAppError(rootCause(error)) ?? rootCause(error); // races: 404/409, not INTERNAL
    if (cause instanceof AppError) {
      return new GraphQLError(cause.message, {
        ...located(error),
        extensions: {
          code: cause.code,
          status: cause.status,
          ...(cause.errors ? { errors: cause.errors } : {}),
          ...(cause instanceof RateLimitedError ? { retryAfter: cause.retryAfterSeconds } : {}),
        },
      });
    }
    if (cause instanceof PothosValidationError) {
      // Connection arguments Pothos refuses (negative `first`, `first` with `before`): the client's
      // mistake. Cursors are checked before execution (./limits.ts); one Pothos still refuses is
      // BAD_CURSOR all the same.
      const code: ErrorCode = /cursor/i.test(cause.message) ? BAD_CURSOR : "VALIDATION_FAILED";
      return new GraphQLError(cause.message, { ...located(error), extensions: { code, status: 400 } });
    }
    if (cause instanceof GraphQLError && cause.extensions?.code) {
      // Parse (GRAPHQL_PARSE_FAILED) and validation (GRAPHQL_VALIDATION_FAILED) errors have Yoga's
      // code; the limits of ./limits.ts their own (QUERY_TOO_COMPLEX, BAD_CURSOR, ...).
      return error as GraphQLError;
    }
    if (cause instanceof GraphQLError && !(error instanceof GraphQLError && error.path)) {
      // Without a path it is the request's, not a resolver's: variables that do not coerce to
      // their types, an unknown operationName.
      return new GraphQLError(cause.message, {
        ...located(error),
        extensions: coded("BAD_USER_INPUT", 400),
      });
    }
    if (isClientGone(cause)) {
      // Stopped because nobody waits for the answer: not an error.
      logger.debug("client gone", {
        path: error instanceof GraphQLError ? error.path?.join(".") : undefined,
      });
      return new GraphQLError("The client has gone.", { extensions: coded("CLIENT_GONE", 499) });
    }
    logger.error("unhandled GraphQL error", {
      path: error instanceof GraphQLError ? error.path?.join(".") : undefined,
      error: cause,
    });
    return new GraphQLError("Unexpected error.", {
      ...located(error),
      extensions: coded("INTERNAL", 500),
    });
  };
}

/**
 * Codes of errors about the request itself (nothing was executed). Yoga answers them 200 when the
 * client accepts application/json (the GraphQL-over-HTTP rule for that media type); we answer 400,
 * as REST does for bad input, so that a refused document is a 4xx whatever the Accept header.
 */
export const REQUEST_ERROR_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_USER_INPUT",
  "BAD_REQUEST",
  "OPERATION_RESOLUTION_FAILURE",
  QUERY_TOO_COMPLEX,
  INTROSPECTION_DISABLED,
  BAD_CURSOR,
  // A read whose whole answer is refused for its size: the request asked for too much.
  "RESPONSE_TOO_LARGE",
]);

/** Yoga plugin: a result without data whose errors are all request errors answers HTTP 400. */
export const useRequestErrorStatus: Plugin = {
  onResultProcess: ({ result, setResult }) => {
    if (Array.isArray(result) || Symbol.asyncIterator in result) return;
    const errors = result.errors ?? [];
    // Errors first: the read planner's results parse their data only when it is read.
    if (errors.length === 0 || result.data != null) return;
    if (!errors.every((e) => REQUEST_ERROR_CODES.has(String(e.extensions?.code)))) return;
    setResult({ ...result, extensions: { ...result.extensions, http: { status: 400 } } });
  },
};
