/** The custom scalars: timestamps as REST writes them, and any JSON value. */
import { GraphQLError, Kind, type ValueNode } from "graphql";
import { builder } from "../builder.ts";

/** ISO 8601 UTC timestamps with milliseconds, as REST writes them. */
builder.scalarType("DateTime", {
  description: "An ISO 8601 timestamp in UTC with milliseconds, e.g. 2026-01-31T12:00:00.000Z.",
  serialize: (value) => (value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString()),
  parseValue: (value) => {
    const date = new Date(String(value));
    if (typeof value !== "string" || Number.isNaN(date.getTime())) {
      throw new GraphQLError("Invalid DateTime.");
    }
    return date;
  },
});

function literalValue(node: ValueNode, variables?: Record<string, unknown> | null): unknown {
  switch (node.kind) {
    case Kind.NULL:
      return null;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.STRING:
    case Kind.ENUM:
    case Kind.BOOLEAN:
      return node.value;
    case Kind.LIST:
      return node.values.map((v) => literalValue(v, variables));
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literalValue(f.value, variables)]));
    case Kind.VARIABLE:
      return variables?.[node.name.value];
  }
}

/** Any JSON value (webhook headers, lastError). Services validate its shape. */
builder.scalarType("JSON", {
  description: "Any JSON value.",
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (node, variables) => literalValue(node, variables),
});
