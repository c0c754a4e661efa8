/**
 * REST reads through the planner: a read capability's answer as JSON text, one statement. What a
 * row shows is `read.rest.fields` (names, or `[shownAs, name]`), else every field of the view;
 * relations only when named (an embedded one, like the agents list's `_count`, shows all its fields).
 */
import type { ActorContext } from "../context.ts";
import { checkIds, type ReadCapability, type RestFields } from "../shared/capability.ts";
import type { View } from "../shared/view.ts";
import type { PageShape, Selected, Selection } from "./selection.ts";
import { authorize } from "../auth/permissions.ts";
import { parsePage } from "../shared/pagination.ts";
import { isOneRow, readOne, viewOfRead } from "./plan.ts";

/** Every field of a view (no relations), as REST shows a row. */
export function allFields(view: View): Selection {
  return Object.keys(view.fields).map((name) => ({ key: name, field: name }));
}

/** A row of `view` with `fields` (names or renames); relations named show all their fields. */
export function restSelection(view: View, fields?: RestFields): Selection {
  if (!fields) return allFields(view);
  return fields.map((entry): Selected => {
    const [key, name] = typeof entry === "string" ? [entry, entry] : entry;
    if (view.fields[name]) return { key, field: name };
    const rel = view.relations?.[name];
    if (!rel) throw new Error(`${view.name} has no field or relation ${name}`);
    return { key, relation: name, selection: allFields(rel.view()) };
  });
}

/**
 * The REST answer of `read`: one row, a page `{data, nextCursor}` (`?limit=&cursor=`), or every row
 * as `{data}` (`rest.unpaged`). Access first (403), then the query (400), then the ids (404).
 */
export async function restRead(
  ctx: ActorContext,
  read: ReadCapability,
  rawParams: Record<string, unknown>,
  query: unknown,
): Promise<string> {
  authorize(ctx.actor, read.action);
  const { view } = viewOfRead(read);
  const node = restSelection(view, read.rest?.fields);
  if (isOneRow(read)) {
    const params = checkIds(rawParams, read.params);
    return await readOne(ctx, { key: "v", read, params, selection: node });
  }
  let shape: PageShape;
  let first: number | undefined;
  let after: string | undefined;
  if (read.rest?.unpaged) {
    shape = { kind: "array", node };
  } else {
    const page = parsePage(query);
    shape = { kind: "rest", node };
    first = page.limit;
    after = (query as { cursor?: string } | undefined)?.cursor;
  }
  const params = checkIds(rawParams, read.params);
  const json = await readOne(ctx, { key: "v", read, params, page: { first, after }, shape });
  // Every REST list answers `{ data: [...] }` (decisions.md), an unpaged one without nextCursor.
  return shape.kind === "array" ? `{"data":${json}}` : json;
}

/** A row just written (the caller found it in the workspace), as REST answers it: every field. */
export async function restRow(
  ctx: ActorContext,
  view: View,
  id: string,
  fields?: RestFields,
): Promise<string> {
  return await readOne(ctx, { key: "v", view, id, selection: restSelection(view, fields) });
}
