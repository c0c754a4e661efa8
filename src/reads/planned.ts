/**
 * Objects of a planned answer (JSON the read planner built, parsed for graphql-js): keyed by
 * response key (alias), not by field name. Fields of such an object are read by response key
 * (src/graphql/planned_answers.ts); anything else reaching a type is resolved as declared.
 */

/** An object of an answer (planned, or a row a capability returned), by response or field name. */
export type AnswerObject = Record<string, unknown>;

const planned = new WeakSet<object>();

/** Marks an object of a planned answer. */
export function markPlanned(value: AnswerObject): void {
  planned.add(value);
}

/** Is `value` an object of a planned answer? */
export function isPlanned(value: unknown): value is AnswerObject {
  return value !== null && typeof value === "object" && planned.has(value);
}
