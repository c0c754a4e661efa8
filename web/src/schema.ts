/**
 * The public API's schema as the console knows it, from `schema.graphql`: gql.tada's CLI writes its
 * introspection to `generated/graphql-env.ts` (`deno task web:types`, run by `deno task setup`,
 * `web:build` and `schema`), and the compiler types every document written with `graphql` from it:
 * its variables and its answer. A field the schema lacks fails `gql.tada check` (`deno task check`).
 */
import { initGraphQLTada } from "gql.tada";
import { introspection } from "./generated/graphql-env.ts";

export type { FragmentOf, ResultOf, TadaDocumentNode, VariablesOf } from "gql.tada";

/**
 * Writes a typed document. Fragments are not masked: a fragment names a selection several
 * documents share, and its fields are read where the document's answer is.
 */
export const graphql = initGraphQLTada<{
  introspection: typeof introspection;
  disableMasking: true;
  scalars: {
    /** ISO 8601 with milliseconds and `Z`, as the API writes it. */
    DateTime: string;
    JSON: unknown;
  };
}>();

/** The parts of an introspection the cache keys are read from (gql.tada writes more). */
interface SchemaTypes {
  __schema: {
    queryType: { name: string } | null;
    mutationType: { name: string } | null;
    subscriptionType: { name: string } | null;
    types: readonly { kind: string; name: string; fields?: readonly { name: string; type: TypeRef }[] }[];
  };
}
type TypeRef = { kind: string; name?: string; ofType?: TypeRef | null };

/**
 * Graphcache's `keys`: every object type without an `id: ID!` of its own is kept inside its parent
 * (`() => null`), never normalized. That covers pages, edges, events, answers, and records whose
 * `id` is a `String!` naming something else (a membership's workspace, the channel's media id),
 * which one record of that type does not own. The root types are the cache's own.
 */
export function embeddedKeys(schema: SchemaTypes = introspection): Record<string, () => null> {
  const s = schema.__schema;
  const roots = new Set([s.queryType?.name, s.mutationType?.name, s.subscriptionType?.name]);
  return Object.fromEntries(
    s.types
      .filter((t) => t.kind === "OBJECT" && !roots.has(t.name) && !t.fields?.some(isOwnId))
      .map((t) => [t.name, () => null]),
  );
}

const isOwnId = (field: { name: string; type: TypeRef }) =>
  field.name === "id" && field.type.kind === "NON_NULL" && field.type.ofType?.kind === "SCALAR" &&
  field.type.ofType.name === "ID";

/**
 * The values of an enum of the schema the console was built with, in its order: what the server
 * offers (the agent templates, say), without introspection, which production turns off.
 */
export function enumValues(name: string): string[] {
  const type = introspection.__schema.types.find((t) => t.name === name);
  return type && "enumValues" in type ? type.enumValues.map((v) => v.name) : [];
}
