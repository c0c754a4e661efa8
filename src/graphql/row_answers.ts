/**
 * The answer of a write whose result is a row of a declared type (createWebhook's webhook, an
 * agent, the approvals a supervisor turn created): the stored row the write returned, resolved by
 * the declared type's own resolvers, the way plugin-prisma resolves the rows it loads.
 *
 * What the document asks beyond the row (an agent's intents, its counts) plugin-prisma plans from
 * the document (`queryFromInfo`) and is read by the row's id, one query; what the row has (the
 * fields the write set, a queued delivery's empty attempts) is answered as the write left it, so a
 * delivery it queued still shows PENDING. Services return stored rows: presented fields
 * (./declared.ts presentedField, computedField) present them here, REST in src/rest/present.ts, so
 * each path presents once.
 */
import type { GraphQLResolveInfo } from "graphql";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type { GraphQLContext } from "./context.ts";
import type { View } from "../shared/view.ts";
import { notFound } from "../shared/errors.ts";
import { delegateOf } from "./prisma_reads.ts";

type Row = Record<string, unknown>;

/** plugin-prisma's query of a field: the relations and computed selections its type's fields need. */
interface FieldQuery {
  select?: Row;
  include?: Row;
}

/** `stored` (the row a service returned) as the answer of the field `info` resolves. */
export async function rowAnswer(
  ctx: GraphQLContext,
  view: View,
  stored: Row,
  info: GraphQLResolveInfo,
): Promise<Row> {
  // Also records, for the fields below, that their selections are planned: they read the row.
  const query: FieldQuery = await queryFromInfo({ context: ctx, info, awaitSelections: true });
  const wanted = query.select ?? query.include ?? {};
  const missing = Object.entries(wanted).filter(([key]) => !(key in stored));
  if (!missing.length) return stored;
  // By the model's own id (a Member's `id` field is the user's; its stored row has the membership's).
  const loaded = await delegateOf(ctx, view).findFirst({
    where: { id: stored.id },
    select: { id: true, ...Object.fromEntries(missing) },
  });
  // Deleted since the write (a concurrent delete): gone, as a read of it would say.
  if (!loaded) throw notFound(view.label);
  return { ...loaded, ...stored };
}
