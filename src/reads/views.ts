/**
 * The views the planner reads: those of the built schema (src/graphql/schema.ts `buildSchema()`),
 * handed over by the app's setup (src/app.ts) before the first read. A capability names its types
 * (shared/view.ts' DeclaredType); the planner reads their views here.
 */
import type { DeclaredType, DeclaredViews, View } from "../shared/view.ts";

let declared: DeclaredViews | undefined;

/** The views to read with: `buildSchema().views`. */
export function readWithViews(views: DeclaredViews): void {
  declared = views;
}

/** The view of a declared type. */
export function viewOf(type: DeclaredType): View {
  if (!declared) {
    throw new Error("The read planner has no views: call readWithViews(buildSchema().views) first");
  }
  return declared.get(type);
}

/** Does `name` name a declared type (rather than, say, a zod schema's own id)? */
export function isDeclared(name: string): boolean {
  return declared?.has(name) ?? false;
}
