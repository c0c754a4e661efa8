/**
 * The read planner: a list of roots (reads of capabilities, or rows just written) and what to show
 * of each becomes ONE SQL statement whose single row is the whole answer as JSON text, built by
 * PostgreSQL, sent to the client as it is. Its parts:
 *
 * - ./bind.ts: the roots' shape key and the values to bind (every request);
 * - ./compile.ts, ./compile_page.ts, ./records.ts, ./row_bytes.ts, ./view_columns.ts: the statement
 *   of a shape (once per shape, cached here), made of ./sql_fragment.ts fragments;
 * - ./budget.ts: the statement run within the request's and the process' byte budgets;
 * - ./answer.ts: the row into the answer, fields presented.
 *
 * Access: `authorize` for every root before any SQL; the workspace is a condition of each root's
 * first row (./compile.ts), so an id of another workspace answers exactly as an unknown id.
 */
import type { ActorContext } from "../context.ts";
import type { Root } from "./selection.ts";
import { authorize } from "../auth/permissions.ts";
import { bind } from "./bind.ts";
import { compile } from "./compile.ts";
import { fetchBounded } from "./budget.ts";
import { type Answer, answerOf } from "./answer.ts";

export type { Answer, Root };
// What a read's path names, as the transports have always imported it from here.
export { isOneRow, notFoundAt, stepsOf, viewOfRead } from "./read_path.ts";

const MAX_PLANS = 2_000;
const plans = new Map<string, string>();

/**
 * The statement of `roots` and its values (the plan cached by shape). The statement takes two more
 * parameters after these: the cut-off and the round trip's byte budget (./budget.ts fetchBounded).
 */
export function plan(ctx: ActorContext, roots: readonly Root[]): { sql: string; values: unknown[] } {
  const { key, values } = bind(ctx, roots);
  let sql = plans.get(key);
  if (sql === undefined) {
    const compiled = compile(ctx, roots, values.length);
    // The binder and the compiler walk the roots in the same order; a difference is a bug here.
    if (JSON.stringify(compiled.values) !== JSON.stringify(values)) {
      throw new Error("read planner: bound values differ from the compiled plan's");
    }
    sql = compiled.sql;
    if (plans.size >= MAX_PLANS) plans.clear();
    plans.set(key, sql);
  }
  return { sql, values };
}

/**
 * Reads `roots` for the actor in one statement. Refuses (403) before anything is read when the
 * actor may not perform a root's read. `around` is UTF-8 to put before and after the answer.
 */
export async function runReads(
  ctx: ActorContext,
  roots: readonly Root[],
  around: readonly [Uint8Array, Uint8Array] = NOTHING_AROUND,
): Promise<Answer> {
  for (const root of roots) if ("read" in root) authorize(ctx.actor, root.read.action);
  return await fetchBounded(ctx, plan(ctx, roots), (row) => answerOf(ctx, roots, row, around));
}

const NOTHING_AROUND = [new Uint8Array(0), new Uint8Array(0)] as const;

/** One root's value as JSON text (REST answers, GraphQL resolvers); a missing row throws its 404. */
export async function readOne(ctx: ActorContext, root: Root): Promise<string> {
  const answer = await runReads(ctx, [{ ...root, key: "v" }]);
  const error = answer.missing.get("v");
  if (error) throw error;
  // The object is `{"v":<value>}`: the value is what follows the key.
  return answer.json.slice(answer.json.indexOf(":") + 1, -1).trim();
}
