/**
 * Keyset pagination of REST lists (`?limit=&cursor=`, `nextCursor` beside `data`). Every list is
 * ordered by (createdAt, id), oldest or newest first; the cursor is the opaque base64url of the last
 * row's (createdAt, id), and the next page is the rows strictly after that position. So a page
 * continues correctly when the cursor's row was deleted meanwhile, and a well-formed cursor of
 * another list or workspace is just a position: the list's own filter stays in the WHERE.
 * A cursor that does not decode to that shape is 400 BAD_CURSOR (the same code as GraphQL's).
 */
import { z } from "zod";
import { AppError } from "./errors.ts";
import { parseInput } from "./validation.ts";

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 500;

const pageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
});

/** The ordering key of a row: where the next page starts (exclusive). */
export interface Keyset {
  createdAt: Date;
  id: string;
}

export interface PageInput {
  limit: number;
  after?: Keyset;
}

/** The characters of our ids (cuid); anything else never reaches the database. */
const ROW_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const isRowId = (value: string) => ROW_ID.test(value);

export const badCursor = () => new AppError("BAD_CURSOR", 400, "The cursor is not one this API gave out.");

// "k1" versions the format; the milliseconds match the columns' precision (timestamptz(3)).
const DECODED = /^k1\.(\d{1,16})\.([A-Za-z0-9_-]{1,64})$/;
const BASE64URL = /^[A-Za-z0-9_-]{1,128}$/;

export function encodeCursor(key: Keyset): string {
  const text = `k1.${key.createdAt.getTime()}.${key.id}`;
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The position a cursor names, or undefined when it is not one `encodeCursor` could give. */
export function decodeCursor(cursor: string): Keyset | undefined {
  if (!BASE64URL.test(cursor)) return undefined;
  let text: string;
  try {
    text = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return undefined;
  }
  const m = DECODED.exec(text);
  if (!m) return undefined;
  const createdAt = new Date(Number(m[1]));
  if (Number.isNaN(createdAt.getTime())) return undefined;
  const key = { createdAt, id: m[2] };
  // One spelling per position (no stray bits in the last base64 character).
  return encodeCursor(key) === cursor ? key : undefined;
}

export function parsePage(input: unknown): PageInput {
  // First, so that a cursor with NUL is BAD_CURSOR rather than a field problem.
  const cursor = (input as { cursor?: unknown } | null | undefined)?.cursor;
  let after: Keyset | undefined;
  if (cursor !== undefined) {
    after = typeof cursor === "string" ? decodeCursor(cursor) : undefined;
    if (!after) throw badCursor();
  }
  const { limit } = parseInput(pageSchema, input ?? {});
  return after ? { limit, after } : { limit };
}

/** Oldest first (ascending) or newest first (descending), always with the id as tiebreak. */
export type ListOrder = "asc" | "desc";

/** The keyset condition "strictly after `key` in `order`", as a Prisma where. */
function afterKey({ createdAt, id }: Keyset, order: ListOrder) {
  return order === "asc"
    ? { OR: [{ createdAt: { gt: createdAt } }, { createdAt, id: { gt: id } }] }
    : { OR: [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }] };
}

/**
 * Prisma `where`/`orderBy`/`take` for one page of a list filtered by `where` (the workspace, or an
 * agent/webhook already found in it): one extra row tells whether there is a next page.
 */
export function pageArgs<W extends object>(page: PageInput, order: ListOrder, where: W) {
  return {
    where: page.after ? { AND: [where, afterKey(page.after, order)] } : where,
    orderBy: [{ createdAt: order }, { id: order }],
    take: page.limit + 1,
  };
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** The page of `rows` (fetched with `pageArgs`), each row shown through `view`. */
export function toPage<R extends Keyset, T = R>(
  rows: R[],
  page: PageInput,
  view: (row: R) => T = (row) => row as unknown as T,
): Page<T> {
  const more = rows.length > page.limit;
  const kept = more ? rows.slice(0, page.limit) : rows;
  const last = kept[kept.length - 1];
  return { data: kept.map(view), nextCursor: more ? encodeCursor(last) : null };
}
