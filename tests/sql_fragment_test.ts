/**
 * The read planner's SQL fragments (src/reads/sql_fragment.ts) carry no unchecked string: text
 * only from template literals, identifiers only quoted, constants only as integers or GraphQL
 * names, and anything else refused at run time too (for a caller that casts its way past the types).
 */
import assert from "node:assert/strict";
import { cat, ident, int, join, nameText, placeholder, Sql, sql } from "../src/shared/sql_fragment.ts";

/** What a caller could pass by casting (a string from a request, a number, a look-alike object). */
const smuggled = (value: unknown) => value as Sql;

Deno.test("sql`...` joins template text and fragments, quoting identifiers once", () => {
  const table = ident('we"ird');
  const q = sql`SELECT ${ident("id")} FROM ${table} t${int(3)} WHERE id = ${placeholder(2, "text")}`;
  assert.equal(q.text, 'SELECT "id" FROM "we""ird" t3 WHERE id = $2::text');
  assert.equal(join([sql`a`, sql`b`], sql`, `).text, "a, b");
  assert.equal(cat(sql`a`, sql` `, sql`b`).text, "a b");
  assert.equal(nameText("__typename_2").text, "'__typename_2'");
});

Deno.test("sql`...` refuses a string, a number or a look-alike between its parts", () => {
  for (const value of ["1; DROP TABLE x", 1, { text: "x" }, null]) {
    assert.throws(() => sql`SELECT ${smuggled(value)}`, TypeError, JSON.stringify(value));
  }
  assert.throws(() => join([smuggled("x")], sql`,`), TypeError);
  assert.throws(() => join([sql`x`], smuggled(",")), TypeError);
});

Deno.test("sql is a template tag: an array made at run time is refused", () => {
  const strings = Object.assign(["DROP TABLE x"], { raw: ["DROP TABLE x"] });
  assert.throws(() => sql(strings), TypeError);
  assert.throws(() => sql(Object.freeze(["DROP TABLE x"]) as unknown as TemplateStringsArray), TypeError);
});

Deno.test("no fragment is made from a string but by ident, and nameText takes names only", () => {
  assert.throws(() => new Sql(smuggled(Symbol("sql fragment")) as never, "DROP TABLE x"), TypeError);
  for (const text of ["it's", "a b", "", "1a", "é", "a\u0000"]) {
    assert.throws(() => nameText(text), TypeError, text);
  }
  assert.throws(() => ident(""), TypeError);
  assert.throws(() => ident("a\u0000b"), TypeError);
  for (const n of [1.5, Number.NaN, 2 ** 60]) assert.throws(() => int(n), TypeError, String(n));
  assert.throws(() => placeholder(0), TypeError);
});
