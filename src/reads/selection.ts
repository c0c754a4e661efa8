/**
 * What a read asks for, independent of the transport: the read planner (./plan.ts) turns roots and
 * their selections into one SQL statement that builds the answer's JSON in PostgreSQL. GraphQL
 * documents (./graphql.ts) and REST's fixed field lists (./rest.ts) are both translated into this.
 */
import type { ReadCapability } from "../shared/capability.ts";
import type { View } from "../shared/view.ts";

/** What to read: one row of a capability, a page of it, or a row just written (already scoped). */
export type Root =
  | { key: string; read: ReadCapability; params: Readonly<Record<string, string>>; selection: Selection }
  | {
    key: string;
    read: ReadCapability;
    params: Readonly<Record<string, string>>;
    page: PageRequest;
    shape: PageShape;
  }
  | { key: string; view: View; id: string; selection: Selection };

/** One entry of an object's answer, under the response key `key`. */
export type Selected =
  /** A field of the view; `of` picks the keys of a JSON object field (or of each of a list's objects). */
  | { key: string; field: string; of?: readonly JsonPart[] }
  /** A constant string (GraphQL `__typename`). */
  | { key: string; constant: string }
  /** An object, embedded object or list relation, with what to show of each related row. */
  | { key: string; relation: string; selection: Selection }
  /** A paged relation (connection). */
  | { key: string; relation: string; page: PageRequest; shape: PageShape };

export type Selection = readonly Selected[];

/** Relay's arguments; a REST page is `first` + `after`. Cursors are shared/pagination.ts keysets. */
export interface PageRequest {
  first?: number;
  after?: string;
  last?: number;
  before?: string;
  /** Equality filters (a read's declared `filters`): field name -> value. */
  where?: Readonly<Record<string, string>>;
}

/** How a page is shown. */
export type PageShape =
  /** GraphQL connection: `{edges: [{cursor, node}], pageInfo: {...}}`, any subset, any keys. */
  | { kind: "connection"; parts: readonly ConnectionPart[] }
  /** REST: `{data: [row...], nextCursor}`. */
  | { kind: "rest"; node: Selection }
  /** REST's unpaged lists (members): every row, as a bare array, oldest first. */
  | { kind: "array"; node: Selection };

export type ConnectionPart =
  | { key: string; constant: string }
  | { key: string; edges: readonly EdgePart[] }
  | { key: string; pageInfo: readonly PageInfoPart[] };

export type EdgePart =
  | { key: string; constant: string }
  | { key: string; cursor: true }
  | { key: string; node: Selection };

export type PageInfoPart =
  | { key: string; constant: string }
  | { key: string; info: "hasNextPage" | "hasPreviousPage" | "startCursor" | "endCursor" };

/** One key of a JSON object field's answer: one of its stored keys, or a constant (`__typename`). */
export type JsonPart = { key: string; field: string } | { key: string; constant: string };
