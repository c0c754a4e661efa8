/**
 * `deno task schema`: writes schema.graphql (repo root) from the Pothos schema. With `--check` it
 * writes nothing and exits 1 when the committed file differs, so CI catches a stale schema.
 */
import { lexicographicSortSchema, printSchema } from "graphql";
import { buildSchema } from "./schema.ts";

/** Where the printed schema is committed. */
export const SCHEMA_FILE = new URL("../../schema.graphql", import.meta.url);

/** The schema as SDL, sorted so that the file's diff follows changes, not definition order. */
export function printedSchema(): string {
  return printSchema(lexicographicSortSchema(buildSchema().schema)) + "\n";
}

if (import.meta.main) {
  const printed = printedSchema();
  if (Deno.args.includes("--check")) {
    const committed = await Deno.readTextFile(SCHEMA_FILE).catch(() => "");
    if (committed !== printed) {
      console.error("schema.graphql is stale: run `deno task schema` and commit the result.");
      Deno.exit(1);
    }
    console.log("schema.graphql is up to date.");
  } else {
    await Deno.writeTextFile(SCHEMA_FILE, printed);
    console.log(`wrote ${SCHEMA_FILE.pathname}`);
  }
}
