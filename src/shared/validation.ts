/** zod parsing for service inputs: a failure becomes 400 VALIDATION_FAILED with field problems. */
import { z } from "zod";
import { AppError, badRequest, type FieldProblem } from "./errors.ts";

/**
 * A request body that could not be taken as JSON (413, 415, 400 MALFORMED_JSON). Adapters hand it
 * to the service like any input, and parseInput throws its error: services authorize before they
 * parse, so a caller whose role is refused gets 403 whatever the body.
 */
export class UnreadableBody {
  constructor(readonly error: AppError) {}
}

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  if (input instanceof UnreadableBody) throw input.error;
  const result = schema.safeParse(input);
  if (result.success) {
    const bad = unstorable(result.data);
    if (bad) throw badRequest(`Invalid input: ${bad.path ? `${bad.path}: ` : ""}${bad.message}`, [bad]);
    return result.data;
  }
  const errors = result.error.issues.flatMap((issue) => {
    const path = issue.path.map(String).join(".");
    // Unknown keys are reported once per key, with the key as the path.
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((k) => ({ path: path ? `${path}.${k}` : k, message: "unknown field" }));
    }
    if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) {
      return [{ path, message: "is required" }];
    }
    return [{ path, message: issue.message }];
  });
  const summary = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ");
  throw badRequest(`Invalid input: ${summary}`, errors);
}

/** PostgreSQL cannot store NUL in text nor unpaired surrogates in jsonb: refused as a 400, not a 500. */
const isStorable = (s: string) => !s.includes("\0") && s.isWellFormed();
const UNSTORABLE = "must not contain NUL characters or unpaired surrogates";

/** The first string (or object key) of a parsed input that the database cannot store. */
function unstorable(value: unknown): FieldProblem | null {
  const stack: Array<[unknown, string]> = [[value, ""]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (!isStorable(v)) return { path, message: UNSTORABLE };
    } else if (v !== null && typeof v === "object") {
      for (const [k, child] of Object.entries(v)) {
        const p = path ? `${path}.${k}` : k;
        if (!isStorable(k)) return { path: p, message: UNSTORABLE };
        stack.push([child, p]);
      }
    }
  }
  return null;
}

/** A non-empty trimmed string of at most `max` characters. */
export const text = (max = 10_000) => z.string().trim().min(1, "must not be empty").max(max);

/** An id in a path or argument: opaque, but bounded so junk never reaches the database. */
export const idSchema = z.string().min(1).max(64).refine(isStorable);

/** Throws 404 for ids that cannot exist, without a database round trip. */
export function assertId(id: string, what: string): string {
  if (!idSchema.safeParse(id).success) throw new AppError("NOT_FOUND", 404, `${what} not found.`);
  return id;
}
