/**
 * What REST shows of a row of a view: one rule for the REST reads (their selection) and the OpenAPI
 * schemas, so the document cannot drift from the answers.
 */
import type { ReadCapability, RestFields } from "../shared/capability.ts";
import type { FieldSpec, RelationSpec, View } from "../shared/view.ts";
import { isOneRow, viewOfRead } from "./read_path.ts";

/** One entry of a REST row: shown under `key`, read from a field or a relation of the view. */
export type RowEntry =
  | { key: string; field: FieldSpec; name: string }
  | { key: string; relation: RelationSpec; name: string };

/**
 * With `fields` (a read's `rest.fields`), those, renamed `[shownAs, name]`; without, every field and
 * the object and list relations. Embedded objects and connections are never part of a default row:
 * REST shows them through `rest.fields` or their own routes (agent counts, a webhook's deliveries).
 */
export function restRow(view: View, fields?: RestFields): RowEntry[] {
  const names: ReadonlyArray<readonly [string, string]> = fields
    ? fields.map((f) => (typeof f === "string" ? [f, f] as const : f))
    : [
      ...Object.keys(view.fields).map((k) => [k, k] as const),
      ...Object.entries(view.relations ?? {})
        .filter(([, r]) => r.kind === "object" || r.kind === "list")
        .map(([k]) => [k, k] as const),
    ];
  return names.map(([key, name]) => {
    const field = view.fields[name];
    if (field) return { key, field, name };
    const relation = view.relations?.[name];
    if (relation) return { key, relation, name };
    throw new Error(`${view.name} has no field or relation ${name}`);
  });
}

/** How REST answers a read: one row, a page `{data, nextCursor}`, or every row `{data}`. */
export type RestAnswer = "one" | "page" | "list";

/** The view a read's rows come from and how REST answers it: one row, a page, or every row. */
export function restAnswer(cap: ReadCapability): { view: View; answer: RestAnswer } {
  const { view } = viewOfRead(cap);
  return { view, answer: isOneRow(cap) ? "one" : cap.rest?.unpaged ? "list" : "page" };
}
