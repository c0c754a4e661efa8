/**
 * Cursor pagination of REST lists (`?limit=&cursor=`, `nextCursor` beside `data`). The cursor is
 * the id of the last row of the previous page; rows are ordered by (createdAt, id).
 */
import { z } from "zod";
import { parseInput } from "./validation.ts";

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 500;

export const pageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
  cursor: z.string().min(1).max(64).optional(),
});
export type PageInput = z.output<typeof pageSchema>;

export function parsePage(input: unknown): PageInput {
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
