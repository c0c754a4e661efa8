/**
 * No `any` in the typed layers: src/graphql/ (the schema) and src/reads/ (the read planner), where a
 * field's type and its resolver's value must agree. `deno lint`'s no-explicit-any finds every
 * explicit `any` (deno.json names it among the rules, with ban-ts-comment and the ignore rules);
 * this test runs the linter there, since CI runs the tests, and checks the one thing the linter
 * cannot: that no directive in those folders turns the rule off (`deno-lint-ignore no-explicit-any`,
 * or a bare `deno-lint-ignore-file`, which silences every rule).
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

Deno.test("deno lint finds nothing in src/graphql/ and src/reads/, with no-explicit-any on", async () => {
  const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).lint;
  assert.ok(config.rules.include.includes("no-explicit-any"));
  assert.ok(!JSON.stringify(config.rules.exclude ?? []).includes("no-explicit-any"));
  const lint = await new Deno.Command(Deno.execPath(), { args: ["lint", ...TYPED], cwd: ROOT }).output();
  const text = new TextDecoder().decode(lint.stdout) + new TextDecoder().decode(lint.stderr);
  assert.equal(lint.code, 0, text);
});

Deno.test("nothing in src/graphql/ or src/reads/ turns no-explicit-any off", () => {
  const found: string[] = [];
  for (const dir of TYPED) {
    for (const path of sourceFiles(join(ROOT, dir))) {
      Deno.readTextFileSync(path).split("\n").forEach((line, n) => {
        if (/deno-lint-ignore(-file)?\b.*no-explicit-any|deno-lint-ignore-file\s*(\*\/)?\s*$/.test(line)) {
          found.push(`${relative(ROOT, path)}:${n + 1}: ${line.trim()}`);
        }
      });
    }
  }
  assert.deepEqual(found, []);
});
