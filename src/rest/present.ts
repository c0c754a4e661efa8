/**
 * REST's answer of an operation: services return stored (Prisma) rows, and this presents them once,
 * as REST shows a row of their declared type (./row_shape.ts, the rule of the reads and of the
 * OpenAPI schemas): each field read from its column, or computed from the row (its `row`), then
 * shown as the actor may see it (its `present`), the object and list relations as rows of their
 * types. GraphQL presents the same stored rows through the declared types' resolvers
 * (src/graphql/row_answers.ts).
 */
import { z } from "zod";
import type { ActorContext } from "../context.ts";
import type { OperationCapability } from "../shared/capability.ts";
import { presentValue, type View } from "../shared/view.ts";
import { isDeclared, viewOf } from "../reads/views.ts";
import { restRow } from "../reads/row_shape.ts";

type Row = Record<string, unknown>;

const isRow = (value: unknown): value is Row =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);

/**
 * A stored row of `view` as REST shows it. A field whose input the row lacks is left out, as JSON
 * leaves out what is undefined.
 */
export function presentRow(ctx: ActorContext, view: View, stored: Row): Row {
  const out: Row = {};
  for (const entry of restRow(view)) {
    if ("field" in entry) {
      const spec = entry.field;
      if (spec.sql && !spec.row) throw new Error(`${view.name}.${entry.name} is computed in SQL only`);
      const value = spec.row ? spec.row(stored, ctx) : stored[spec.column ?? entry.name];
      if (value === undefined) continue;
      out[entry.key] = spec.present ? presentValue(ctx, spec.present, value) : value;
      continue;
    }
    const value = stored[entry.name];
    if (value === undefined) continue;
    const target = entry.relation.view();
    out[entry.key] = Array.isArray(value)
      ? value.map((row: Row) => presentRow(ctx, target, row))
      : value === null
      ? null
      : presentRow(ctx, target, value as Row);
  }
  return out;
}

/** The JSON Schema of an answer (zod's), where a part's `$ref` names its `id`. */
interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
}

const answerSchemas = new WeakMap<z.ZodType, JsonSchema>();

/**
 * What REST answers for an operation's result: a row of its declared type with the extras beside
 * it; inside a workspace operation's other answers, each part whose schema names a declared type
 * (a supervisor turn's approvals) presented as that type's row; anything else as the function
 * returned it.
 */
export function presentAnswer(
  ctx: ActorContext | undefined,
  cap: OperationCapability,
  result: unknown,
): unknown {
  const out = cap.output;
  if (!ctx || "none" in out) return result;
  if ("view" in out) {
    const row = result as Row;
    const extras = Object.keys(out.extra?.shape ?? {}).filter((k) => k in row);
    return {
      ...presentRow(ctx, viewOf(out.view), row),
      ...Object.fromEntries(extras.map((k) => [k, row[k]])),
    };
  }
  let schema = answerSchemas.get(out.schema);
  if (!schema) {
    schema = z.toJSONSchema(out.schema, {
      io: "output",
      unrepresentable: "any",
      reused: "inline",
    }) as JsonSchema;
    answerSchemas.set(out.schema, schema);
  }
  return presentPart(ctx, schema, schema.$defs ?? {}, result);
}

function presentPart(
  ctx: ActorContext,
  node: JsonSchema,
  defs: Record<string, JsonSchema>,
  value: unknown,
): unknown {
  if (value === null || value === undefined) return value;
  if (node.$ref) {
    const id = node.$ref.replace(/^#\/\$defs\//, "");
    if (isRow(value) && isDeclared(id)) return presentRow(ctx, viewOf({ name: id }), value);
    return defs[id] ? presentPart(ctx, defs[id], defs, value) : value;
  }
  if (node.anyOf) {
    const rest = node.anyOf.filter((n) => n.type !== "null");
    return rest.length === 1 ? presentPart(ctx, rest[0], defs, value) : value;
  }
  if (node.items && Array.isArray(value)) return value.map((v) => presentPart(ctx, node.items!, defs, v));
  if (node.properties && isRow(value)) {
    const out: Row = { ...value };
    for (const [key, prop] of Object.entries(node.properties)) {
      if (key in value) out[key] = presentPart(ctx, prop, defs, value[key]);
    }
    return out;
  }
  return value;
}
