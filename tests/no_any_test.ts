/**
 * No `any` in the typed layers: src/graphql/ (the schema) and src/reads/ (the read planner). An
 * explicit `any` (`x: any`, `as any`, `<any>`, `Foo<any, any>`) turns the compiler off exactly where
 * a field's type and its resolver's value must agree; `deno lint` reports it, but a
 * `deno-lint-ignore no-explicit-any` silences the linter, so this test reads the code itself: it
 * fails on the word `any` outside comments and string literals, and on any directive that turns the
 * rule off.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = fromFileUrl(new URL("../", import.meta.url));
const TYPED = ["src/graphql", "src/reads"];

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sourceFiles(path);
    else if (entry.isFile && /\.tsx?$/.test(entry.name)) yield path;
  }
}

/** Where a `/` starts a regular expression rather than a division (after these, or at the start). */
const BEFORE_REGEX = new Set([
  "",
  "(",
  ",",
  "=",
  ":",
  "[",
  "!",
  "&",
  "|",
  "?",
  "{",
  "}",
  ";",
  "+",
  "-",
  "*",
  "%",
  "<",
  ">",
  "~",
  "^",
]);

/**
 * The code of a TypeScript source with comments, strings and regular expressions blanked (each
 * replaced by spaces, newlines kept, so line numbers stay); a template's `${...}` stays code.
 */
export function codeOnly(source: string): string {
  const out = source.split("");
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  // Template literals being read, by the brace depth at which each `${` opened.
  const templates: number[] = [];
  let depth = 0;
  let last = "";
  let i = 0;
  const readTemplate = (start: number): number => {
    // From just after "`" or "}" of a substitution: to the closing "`" or to "${".
    let j = start;
    while (j < source.length) {
      if (source[j] === "\\") j += 2;
      else if (source[j] === "`") {
        blank(start, j);
        return j + 1;
      } else if (source[j] === "$" && source[j + 1] === "{") {
        blank(start, j);
        templates.push(depth);
        depth++;
        return j + 2;
      } else j++;
    }
    blank(start, j);
    return j;
  };
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      const end = source.indexOf("\n", i);
      const stop = end < 0 ? source.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== "\n") j += source[j] === "\\" ? 2 : 1;
      blank(i + 1, j);
      i = j + 1;
      last = "x";
    } else if (c === "`") {
      i = readTemplate(i + 1);
      last = "x";
    } else if (
      c === "/" &&
      (BEFORE_REGEX.has(last) || /\b(return|typeof|case|of|in)$/.test(source.slice(0, i).trimEnd()))
    ) {
      let j = i + 1;
      let inClass = false;
      while (j < source.length && source[j] !== "\n") {
        if (source[j] === "\\") j += 2;
        else if (source[j] === "[") (inClass = true, j++);
        else if (source[j] === "]") (inClass = false, j++);
        else if (source[j] === "/" && !inClass) break;
        else j++;
      }
      blank(i + 1, j);
      i = j + 1;
      last = "x";
    } else {
      if (c === "{") depth++;
      else if (c === "}") {
        depth--;
        if (templates.length && templates[templates.length - 1] === depth) {
          templates.pop();
          i = readTemplate(i + 1);
          last = "x";
          continue;
        }
      }
      if (!/\s/.test(c)) last = /[\w$)\]]/.test(c) ? "x" : c;
      i++;
    }
  }
  return out.join("");
}

Deno.test("codeOnly() keeps code and blanks comments, strings, templates' text and regular expressions", () => {
  const source = [
    "const a: any = 1; // any",
    "/* any */ const b = \"any\" + 'any';",
    "const c = `any ${d as any} any`;",
    "const e = /any/.test(x) ? 1 / 2 : 0;",
  ].join("\n");
  const code = codeOnly(source);
  assert.equal(code.split("\n").length, 4);
  assert.deepEqual(
    code.split("\n").map((line) => [...line.matchAll(/\bany\b/g)].length),
    [1, 0, 1, 0],
  );
});

Deno.test("src/graphql/ and src/reads/ have no explicit any, and nothing turns the rule off", () => {
  const found: string[] = [];
  for (const dir of TYPED) {
    for (const path of sourceFiles(join(ROOT, dir))) {
      const source = Deno.readTextFileSync(path);
      const name = relative(ROOT, path);
      codeOnly(source).split("\n").forEach((line, n) => {
        if (/\bany\b/.test(line)) found.push(`${name}:${n + 1}: ${source.split("\n")[n].trim()}`);
      });
      source.split("\n").forEach((line, n) => {
        if (/deno-lint-ignore(-file)?\b.*no-explicit-any|deno-lint-ignore-file\s*$/.test(line)) {
          found.push(`${name}:${n + 1}: ${line.trim()}`);
        }
      });
    }
  }
  assert.deepEqual(found, []);
});

Deno.test("deno.json keeps the no-explicit-any lint rule on", () => {
  const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));
  assert.ok(!JSON.stringify(config.lint ?? {}).includes("no-explicit-any"));
});
