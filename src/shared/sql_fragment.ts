/**
 * The read planner's SQL fragments, and the SQL that type declarations give it (FieldSpec.sql and
 * present.mayChange in ./view.ts). A fragment's text comes only from template literals (the `sql`
 * tag, which takes fragments and nothing else between them), identifiers quoted
 * by `ident` (the one function for them), integers, GraphQL names as string constants, and
 * placeholders of bind parameters: ids, cursors, sizes and filters reach PostgreSQL only as
 * parameters. So no string from a request or a row can become SQL text, by type and at run time.
 *
 * The model is PostGraphile's pg-sql2 (tagged template, `sql.identifier`, `sql.value`), written
 * here rather than adopted because the planner numbers parameters itself: the statement's text is
 * cached per shape and each request binds fresh values in the order the compiler takes them
 * (./bind.ts), where pg-sql2 numbers values in text order as it compiles; and pg-sql2 keeps
 * `sql.raw` and a plain-string separator in `sql.join`, which this type has no room for.
 */

const TRUSTED = Symbol("sql fragment");

/** A piece of SQL text made by this module's functions only. */
export class Sql {
  readonly text: string;
  /** Not callable outside this module: the token is not exported. */
  constructor(token: typeof TRUSTED, text: string) {
    if (token !== TRUSTED) throw new TypeError("SQL fragments are made with sql`...`");
    this.text = text;
  }
}

const fragment = (text: string) => new Sql(TRUSTED, text);

/**
 * A fragment from a template literal: its text as written, and fragments between. A template's
 * strings array is frozen and carries `raw`; an array made at run time is refused, as is any
 * value that is not a fragment (a string, a number: use `ident`, `int`, `param`).
 */
export function sql(strings: TemplateStringsArray, ...parts: readonly Sql[]): Sql {
  if (!Object.isFrozen(strings) || !Array.isArray(strings.raw) || strings.length !== parts.length + 1) {
    throw new TypeError("sql is a template tag");
  }
  // A tagged template's invalid escape (`\u` without digits) has no cooked text.
  if (strings.some((s) => typeof s !== "string")) throw new TypeError("sql`...`: invalid escape");
  let text = strings[0];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (!(part instanceof Sql)) throw new TypeError(`sql\`...\`: part ${i} is not a fragment`);
    text += part.text + strings[i + 1];
  }
  return fragment(text);
}

/** The one way a name (a table, a column, a record's key) becomes SQL: quoted, as one identifier. */
export function ident(name: string): Sql {
  if (name.length === 0 || name.includes("\0")) throw new TypeError("An identifier is a non-empty name");
  return fragment(`"${name.replaceAll('"', '""')}"`);
}

/** An integer constant (byte counts, alias and parameter numbers). */
export function int(n: number): Sql {
  if (!Number.isSafeInteger(n)) throw new TypeError(`Not an integer: ${n}`);
  return fragment(String(n));
}

/** GraphQL's Name: response keys, type names, the keys of declared JSON objects. */
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/**
 * A GraphQL name as a string constant (a JSON key, a `__typename`): part of the statement's shape,
 * like an identifier, and made only of letters, digits and underscores, so it needs no escaping.
 */
export function nameText(name: string): Sql {
  if (!NAME.test(name)) throw new TypeError(`Not a GraphQL name: ${JSON.stringify(name)}`);
  return fragment(`'${name}'`);
}

/** The types bind parameters are cast to where PostgreSQL could not infer one. */
const CASTS = { text: sql`::text`, int: sql`::int`, bigint: sql`::bigint` } as const;
export type ParamType = keyof typeof CASTS;

/** The placeholder of bind parameter `n` (from 1), cast to `type` when given. */
export function placeholder(n: number, type?: ParamType): Sql {
  if (!Number.isSafeInteger(n) || n < 1) throw new TypeError(`Not a parameter number: ${n}`);
  return type ? sql`$${int(n)}${CASTS[type]}` : sql`$${int(n)}`;
}

/** `parts` one after another, `separator` between. */
export function join(parts: readonly Sql[], separator: Sql): Sql {
  if (!parts.every((p) => p instanceof Sql) || !(separator instanceof Sql)) {
    throw new TypeError("join takes fragments");
  }
  return fragment(parts.map((p) => p.text).join(separator.text));
}

const EMPTY = fragment("");

/** `parts` one after another (a statement too long for one line of a template). */
export const cat = (...parts: readonly Sql[]): Sql => join(parts, EMPTY);
