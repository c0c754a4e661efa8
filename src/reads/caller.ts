/**
 * The caller's parameters: every read statement of the planner binds the actor's workspace as `$1`
 * and the acting member as `$2` (./bind.ts, ./compile.ts), so a field's or a filter's SQL names
 * who reads through these (src/shared/view.ts CallerSql) and its text stays one per shape.
 */
import type { CallerSql } from "../shared/view.ts";
import { sql } from "../shared/sql_fragment.ts";

export const CALLER: CallerSql = { workspace: sql`$1::text`, user: sql`$2::text` };
