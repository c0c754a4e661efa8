/**
 * Cursor pagination of REST lists (`?limit=&cursor=`, `nextCursor` beside `data`). The cursor is
 * the id of the last row of the previous page; rows are ordered by (createdAt, id). A cursor that
 * is not an id at all is 400 BAD_CURSOR (the same code as GraphQL's); an id that names no row of the
 * list (unknown, deleted, another workspace's) gives an empty page.
 */
import { z } from "zod";
import { AppError } from "./errors.ts";
import { parseInput } from "./validation.ts";

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 500;

export const pageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
  cursor: z.string().optional(),
});
export type PageInput = z.output<typeof pageSchema>;

/** The characters of our ids (cuid); anything else never reaches the database. */
const ROW_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const isRowId = (value: string) => ROW_ID.test(value);

export const badCursor = () => new AppError("BAD_CURSOR", 400, "The cursor is not one this API gave out.");

export function parsePage(input: unknown): PageInput {
  // First, so that a cursor with NUL is BAD_CURSOR rather than a field problem.
  const cursor = (input as { cursor?: unknown } | null | undefined)?.cursor;
  if (cursor !== undefined && (typeof cursor !== "string" || !isRowId(cursor))) throw badCursor();
  return parseInput(pageSchema, input ?? {});
}

/** Prisma args for one page: fetch one extra row to know whether there is a next page. */
export function pageArgs(page: PageInput) {
  return {
    take: page.limit + 1,
    ...(page.cursor ? { cursor: { id: page.cursor }, skip: 1 } : {}),
  };
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export function toPage<T extends { id: string }>(rows: T[], page: PageInput): Page<T> {
  const more = rows.length > page.limit;
  const data = more ? rows.slice(0, page.limit) : rows;
  return { data, nextCursor: more ? data[data.length - 1].id : null };
}
