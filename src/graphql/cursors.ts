/**
 * A connection's cursor names a row by id. Prisma finds that row without the list's `where` when
 * paging backwards, so a row of another workspace would place the page by its position (and tell
 * its creation time). Adding the list's scope to the cursor makes such a cursor name no row: the
 * same empty page as an unknown id.
 */
export function scopeCursor<Q extends { cursor?: unknown }>(query: Q, scope: Record<string, string>): Q {
  if (!query.cursor) return query;
  return { ...query, cursor: { ...(query.cursor as object), ...scope } };
}
