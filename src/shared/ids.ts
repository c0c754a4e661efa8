/**
 * Ids of rows the app inserts with its own SQL (Prisma makes cuids for the rest): UUIDv7 (npm
 * `uuid`), which begin with their creation time in ms and, within a process, grow monotonically, so
 * rows read "oldest first" by (createdAt, id) keep the order they were made in when two share a
 * millisecond (the parts of a reply, a reply and the next customer message).
 */
import { v7 } from "uuid";

export const newId = (): string => v7();
