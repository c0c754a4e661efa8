/**
 * REST reads through the planner: a read capability's answer as JSON text, one statement. What a
 * row shows is `read.rest.fields` (names, or `[shownAs, name]`), else ./row_shape.ts' default
 * (every field, and the object and list relations).
 */
import type { ActorContext } from "../context.ts";
import { checkIds, filterValue, type ReadCapability, type RestFields } from "../shared/capability.ts";
import type { DeclaredType, View } from "../shared/view.ts";
import type { PageShape, Selected, Selection } from "./selection.ts";
import { restRow as restRowEntries } from "./row_shape.ts";
import { authorize } from "../auth/permissions.ts";
import { parsePage } from "../shared/pagination.ts";
import { AppError } from "../shared/errors.ts";
import { readOne } from "./plan.ts";
import { isOneRow, viewOfRead } from "./read_path.ts";
import { viewOf } from "./views.ts";

/** A row of `view` as REST shows it (./row_shape.ts, the rule the OpenAPI schemas use too). */
export function restSelection(view: View, fields?: RestFields): Selection {
  return restRowEntries(view, fields).map((entry): Selected =>
    "field" in entry
      ? { key: entry.key, field: entry.name }
      : { key: entry.key, relation: entry.name, selection: restSelection(entry.relation.view()) }
  );
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
  let where: Record<string, string> | undefined;
  if (read.rest?.unpaged) {
    shape = { kind: "array", node };
  } else {
    const page = parsePage(query);
    shape = { kind: "rest", node };
    first = page.limit;
    after = (query as { cursor?: string } | undefined)?.cursor;
    where = restFilters(read, query);
  }
  const params = checkIds(rawParams, read.params);
  const json = await readOne(ctx, { key: "v", read, params, page: { first, after, where }, shape });
  // Every REST list answers `{ data: [...] }`, an unpaged one without nextCursor.
  return shape.kind === "array" ? `{"data":${json}}` : json;
}

/** A row just written (the caller found it in the workspace), as REST answers it: every field. */
export async function restRow(
  ctx: ActorContext,
  type: DeclaredType,
  id: string,
  fields?: RestFields,
): Promise<string> {
  const view = viewOf(type);
  return await readOne(ctx, { key: "v", view, id, selection: restSelection(view, fields) });
}

/** The read's declared filters given in the query, each checked (filterValue; 400 otherwise). */
function restFilters(read: ReadCapability, query: unknown): Record<string, string> | undefined {
  if (!read.filters) return undefined;
  const q = (query ?? {}) as Record<string, unknown>;
  const where: Record<string, string> = {};
  for (const [name, filter] of Object.entries(read.filters)) {
    const value = q[name];
    if (value === undefined || value === "") continue;
    if (typeof value !== "string") {
      throw new AppError("VALIDATION_FAILED", 400, `Invalid input: ${name}: give it once`, [
        { path: name, message: "give it once" },
      ]);
    }
    where[name] = filterValue(name, filter, value);
  }
  return where;
}
