/**
 * Keyset pagination of lists (REST `?limit=&cursor=` with `nextCursor` beside `data`, GraphQL
 * connections). Every list is ordered by (sort key, id), oldest or newest first; the sort key is
 * createdAt unless the connection declares another (conversations: lastMessageAt). The cursor is the
 * opaque base64url of the last row's (sort key value, id), and the next page is the rows strictly
 * after that position. So a page continues correctly when the cursor's row was deleted or moved
 * meanwhile, and a well-formed cursor of another list or workspace is just a position: the list's
 * own filter stays in the WHERE.
 * A cursor that does not decode to that shape is 400 BAD_CURSOR (the same code as GraphQL's).
 */
import { z } from "zod";
import { AppError } from "./errors.ts";
import { parseInput } from "./validation.ts";

// Page sizes: the one place GraphQL (document limits, plugin-prisma, the planner) and REST
// (`?limit=`, OpenAPI, the planner) read them from.
/** Rows of a page that names no size: a connection without `first`/`last`, a list without `?limit=`. */
export const DEFAULT_PAGE = 100;
/** The most rows a GraphQL connection's `first`/`last` may ask for. */
export const MAX_CONNECTION_PAGE = 100;
/** The most rows REST's `?limit=` may ask for. */
export const MAX_REST_PAGE = 500;

const pageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_REST_PAGE).default(DEFAULT_PAGE),
});

/** A row's position in its list: its sort key's value and its id (the next page starts after it). */
export interface Keyset {
  at: Date;
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
  const text = `k1.${key.at.getTime()}.${key.id}`;
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
  const at = new Date(Number(m[1]));
  if (Number.isNaN(at.getTime())) return undefined;
  const key = { at, id: m[2] };
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
