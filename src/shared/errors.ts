/**
 * The one error type of the domain. Adapters turn it into problem+json (REST) or a GraphQLError
 * with `extensions.code` (GraphQL); anything that is not an AppError is a bug and answers 500.
 */
import type { ConflictCode, ErrorCode, StatusOf } from "./error_codes.ts";

export interface FieldProblem {
  /** Dotted path of the offending field ("" for the body itself). */
  path: string;
  message: string;
}

/**
 * `C` only ties the constructor's `status` to the code's row of ERROR_CODES (a mismatch fails the
 * type check); the fields are typed without it, so `instanceof AppError` narrows to them.
 */
export class AppError<C extends ErrorCode = ErrorCode> extends Error {
  /** Stable UPPER_SNAKE identifier, the same in REST `code` and GraphQL `extensions.code`. */
  readonly code: ErrorCode;
  readonly status: StatusOf<ErrorCode>;

  constructor(code: C, status: StatusOf<C>, message: string, readonly errors?: FieldProblem[]) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.status = status;
  }
}

export const badRequest = (message: string, errors?: FieldProblem[]) =>
  new AppError("VALIDATION_FAILED", 400, message, errors);
export const unauthorized = (message = "Missing or invalid credentials.") =>
  new AppError("UNAUTHENTICATED", 401, message);
export const forbidden = (message = "You are not allowed to do this.") =>
  new AppError("FORBIDDEN", 403, message);
/** Unknown ids and ids of another workspace answer the same, so existence never leaks. */
export const notFound = (what: string) => new AppError("NOT_FOUND", 404, `${what} not found.`);
export const conflict = (code: ConflictCode, message: string) => new AppError(code, 409, message);

/** 429 RATE_LIMITED: REST adds `Retry-After`, GraphQL `extensions.retryAfter` (both in seconds). */
export class RateLimitedError extends AppError<"RATE_LIMITED"> {
  constructor(readonly retryAfterSeconds: number, message: string) {
    super("RATE_LIMITED", 429, message);
  }
}
