/**
 * A page's arguments, checked once and read the same way by the GraphQL translation (to refuse
 * them at their field), the binder (their values) and the compiler (the statement's shape).
 */
import type { PageRequest, PageShape } from "./selection.ts";
import { AppError } from "../shared/errors.ts";
import {
  badCursor,
  decodeCursor,
  DEFAULT_PAGE,
  type Keyset,
  MAX_CONNECTION_PAGE,
  MAX_REST_PAGE,
} from "../shared/pagination.ts";

/** A page's arguments, checked: how many rows, which way, from where. */
export interface PageWindow {
  size: number;
  backward: boolean;
  cursor?: Keyset;
  hasAfter: boolean;
  hasBefore: boolean;
  hasLast: boolean;
}

const invalid = (message: string) => new AppError("VALIDATION_FAILED", 400, message);

/**
 * Relay's arguments as @pothos/plugin-prisma reads them (same refusals, same default and maximum
 * rule): `first`/`last` at most `max`, default DEFAULT_PAGE; `last` or `before` pages backwards.
 */
export function pageWindow(req: PageRequest, max: number): PageWindow {
  const { first, last, after, before } = req;
  if (first != null && first < 0) throw invalid('Argument "first" must be a non-negative integer');
  if (last != null && last < 0) throw invalid('Argument "last" must be a non-negative integer');
  if (before && after) throw invalid('Arguments "before" and "after" are not supported at the same time');
  if (before != null && first != null) {
    throw invalid('Arguments "before" and "first" are not supported at the same time');
  }
  if (after != null && last != null) {
    throw invalid('Arguments "after" and "last" are not supported at the same time');
  }
  const size = Math.min(first ?? last ?? DEFAULT_PAGE, max);
  const raw = before ?? after;
  let cursor: Keyset | undefined;
  if (raw != null) {
    cursor = decodeCursor(raw);
    if (!cursor) throw badCursor();
  }
  return {
    size,
    backward: before != null || last != null,
    cursor,
    hasAfter: after != null,
    hasBefore: before != null,
    hasLast: last != null,
  };
}

/** The largest page a shape may ask for: a GraphQL connection's, or REST's. */
export const maxPageOf = (shape: PageShape): number =>
  shape.kind === "connection" ? MAX_CONNECTION_PAGE : MAX_REST_PAGE;

/**
 * Does the page need its extra row and numbering: REST's nextCursor, a page-info cursor, or a
 * hasNextPage / hasPreviousPage that the arguments alone do not decide?
 */
export function isCounted(w: PageWindow, shape: PageShape): boolean {
  if (shape.kind !== "connection") return true;
  return shape.parts.some((p) =>
    "pageInfo" in p && p.pageInfo.some((i) => {
      if (!("info" in i)) return false;
      if (i.info === "hasNextPage") return !w.hasBefore && !w.hasLast;
      if (i.info === "hasPreviousPage") return !w.hasAfter && w.backward;
      return true;
    })
  );
}
