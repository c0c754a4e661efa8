/**
 * Yoga's error masking: an AppError becomes a GraphQLError whose `extensions.code` is the REST
 * `code`; a deliberate GraphQL error (parse, validation, bad connection arguments) keeps its own;
 * anything else is a bug: logged, and answered as "Unexpected error." with code INTERNAL.
 */
import { GraphQLError } from "graphql";
import { PothosValidationError } from "@pothos/core";
import { AppError } from "../shared/errors.ts";
import type { Logger } from "../shared/logger.ts";
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

/** Builds Yoga's `maskedErrors.maskError` for the app's logger. */
export function createMaskError(logger: Logger): (error: unknown, message: string) => Error {
  return (error) => {
    const cause = rootCause(error);
    if (cause instanceof AppError) {
      return new GraphQLError(cause.message, {
        ...located(error),
        extensions: {
          code: cause.code,
          status: cause.status,
          ...(cause.errors ? { errors: cause.errors } : {}),
        },
      });
    }
    if (cause instanceof PothosValidationError) {
      // Invalid cursors and unsupported connection argument combinations: the client's mistake.
      return new GraphQLError(cause.message, {
        ...located(error),
        extensions: { code: "VALIDATION_FAILED", status: 400 },
      });
    }
    if (cause instanceof GraphQLError) return error as GraphQLError; // parse/validation: Yoga's own codes
    if (isClientGone(cause)) {
      // Stopped because nobody waits for the answer: not an error.
      logger.debug("client gone", {
        path: error instanceof GraphQLError ? error.path?.join(".") : undefined,
      });
      return new GraphQLError("The client has gone.", { extensions: { code: "CLIENT_GONE", status: 499 } });
    }
    logger.error("unhandled GraphQL error", {
      path: error instanceof GraphQLError ? error.path?.join(".") : undefined,
      error: cause,
    });
    return new GraphQLError("Unexpected error.", {
      ...located(error),
      extensions: { code: "INTERNAL", status: 500 },
    });
  };
}
