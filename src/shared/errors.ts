/**
 * The one error type of the domain. Adapters turn it into problem+json (REST) or a GraphQLError
 * with `extensions.code` (GraphQL); anything that is not an AppError is a bug and answers 500.
 */
export interface FieldProblem {
  /** Dotted path of the offending field ("" for the body itself). */
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    /** Stable UPPER_SNAKE identifier, the same in REST `code` and GraphQL `extensions.code`. */
    readonly code: string,
    readonly status: number,
    message: string,
    readonly errors?: FieldProblem[],
  ) {
    super(message);
    this.name = "AppError";
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
export const conflict = (code: string, message: string) => new AppError(code, 409, message);

/** 429 RATE_LIMITED: REST adds `Retry-After`, GraphQL `extensions.retryAfter` (both in seconds). */
export class RateLimitedError extends AppError {
  constructor(readonly retryAfterSeconds: number, message: string) {
    super("RATE_LIMITED", 429, message);
  }
}
