/**
 * What a read capability's path names: its steps by id (the rows a request names, each found
 * under the one before, the first under the workspace), the view its rows are of, whether it
 * answers one row or a page, and the 404 of a step that names no row. The compiler, the binder and
 * the transports (REST row shapes, the GraphQL types of the derived reads) read a path the same way.
 */
import type { ReadCapability } from "../shared/capability.ts";
import type { View } from "../shared/view.ts";
import { viewOf } from "./views.ts";
import { type AppError, notFound } from "../shared/errors.ts";
import { isRowId } from "../shared/pagination.ts";

/** Does the read name one row (its last step is by id), rather than a page? */
export function isOneRow(read: ReadCapability): boolean {
  const path = read.path ?? [];
  return path.length === 0 ? read.from.idParam !== undefined : path[path.length - 1].idParam !== undefined;
}

/** The view a read's rows are of (the page's rows, or the one row). */
export function viewOfRead(read: ReadCapability): { view: View } {
  let view = viewOf(read.from.view);
  for (const step of read.path ?? []) {
    const next = view.relations?.[step.relation]?.view();
    if (!next) throw new Error(`${read.name}: no relation ${step.relation}`);
    view = next;
  }
  return { view };
}

/**
 * The 404 of a read whose step `at` (of stepsOf) names no row. As the services have always
 * answered: the agent and the row under it are one lookup, so an unknown agent of
 * `intent(agentId, id)` is "Intent not found.", while a page under an unknown agent
 * (`intents(agentId)`) is "Agent not found.".
 */
export function notFoundAt(read: ReadCapability, at: number): AppError {
  const steps = stepsOf(read);
  return notFound(read.params[steps[at === 0 && steps.length > 1 ? 1 : at].idParam]);
}

/** The steps by id of a read: its `from` row (when by id), then each path step by id. */
export function stepsOf(read: ReadCapability): { relation?: string; idParam: string }[] {
  if (!read.from.idParam) return [];
  const steps: { relation?: string; idParam: string }[] = [{ idParam: read.from.idParam }];
  for (const step of read.path ?? []) {
    if (step.idParam) steps.push({ relation: step.relation, idParam: step.idParam });
  }
  return steps;
}

/** The view of each step by id. */
export function viewsOf(read: ReadCapability): View[] {
  const views = [viewOf(read.from.view)];
  for (const step of read.path ?? []) {
    if (!step.idParam) break;
    const rel = views[views.length - 1].relations?.[step.relation];
    if (!rel) throw new Error(`${read.name}: no relation ${step.relation}`);
    views.push(rel.view());
  }
  return views;
}

/** Something that cannot be an id (NUL, 10 KB) names no row, and must not reach PostgreSQL as text. */
export const rowId = (value: unknown): string => typeof value === "string" && isRowId(value) ? value : "";
