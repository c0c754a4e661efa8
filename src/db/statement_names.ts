/** Names for the SQL texts sent to PostgreSQL, so it prepares each once per connection. */

/** How many distinct statement texts get a name; later ones run unnamed (parsed and planned each time). */
const MAX_NAMED_STATEMENTS = 1_000;

/**
 * Names each distinct SQL text (`s0`, `s1`, ... in order of first use; another `prefix` for another
 * namer on the same connections), so `pg` prepares it once per connection and PostgreSQL keeps its
 * plan: the read planner's statements are long and the
 * same per query shape (plan.ts caches them), and parsing and planning one cost about as much as
 * running it. A name always means the same text (names are never reused), as `pg` requires. The
 * map is bounded: a statement text first seen after MAX_NAMED_STATEMENTS stays unnamed (""), so an
 * endless variety of texts cannot grow this process or the server's prepared statements.
 */
export function statementNames(max = MAX_NAMED_STATEMENTS, prefix = "s"): (query: { sql: string }) => string {
  const names = new Map<string, string>();
  return ({ sql }) => {
    let name = names.get(sql);
    if (name === undefined && names.size < max) {
      name = `${prefix}${names.size}`;
      names.set(sql, name);
    }
    // `pg` sends a statement with an empty name unnamed, as it does one without a name.
    return name ?? "";
  };
}
