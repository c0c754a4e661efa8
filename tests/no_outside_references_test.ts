/**
 * Comments, test names and docs speak for themselves: none cites something a reader of this
 * repository cannot open (notes kept outside it, an issue tracker's numbers, sections of a
 * specification that is not here). A longer explanation belongs in docs/ (behaviour.md, api.md,
 * operations.md) and is pointed at by name. A relative path that resolves to a file of the
 * repository (an import of src/shared/..., say) is fine.
 *
 * The patterns are assembled from pieces so that this file does not match them itself.
 */
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = fromFileUrl(new URL("../", import.meta.url));

/** Directories read whole, and the parts of them left out (generated code, third-party bench code, bench output). */
const DIRS = ["src", "tests", "bench", "examples", "tools", "docs", "web"];
const SKIP = [
  "src/generated",
  "web/src/generated",
  "bench/postgraphile",
  "bench/results",
  "node_modules",
  "web/dist",
];
const FILES = ["README.md", "Dockerfile", "deno.json"];

const word = (...parts: string[]) => parts.join("");

/** What may not be cited, each with why it is refused. */
const PATTERNS: { re: RegExp; what: string }[] = [
  { re: new RegExp(word("decisions", "\\.md")), what: "a notes file outside the repository" },
  {
    re: new RegExp(word("shared/", "(spec|toolchain|architecture)\\b")),
    what: "a shared notes folder outside the repository",
  },
  { re: new RegExp(word("/work", "/shared")), what: "a path outside the repository" },
  { re: new RegExp(word("platform", "-api")), what: "a document outside the repository" },
  { re: new RegExp(word("\\b[Ii]ssues? ", "#?[0-9]")), what: "an issue number" },
  { re: new RegExp(word("\\b[Ss]pec ", "sections? [0-9]")), what: "a section of a specification" },
  { re: new RegExp(word("\\b[Ss]pec ", '"')), what: "a section of a specification" },
];

/** A relative path up into a `shared` folder (any depth): refused unless it resolves to a file or folder inside the repository. */
const RELATIVE_SHARED = new RegExp(word("((?:\\.\\./)+)", "shared(/[\\w.-]+)*"), "g");

const SELF = fromFileUrl(import.meta.url);

function* walk(dir: string): Generator<string> {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const rel = relative(ROOT, path);
    if (SKIP.some((s) => rel === s || rel.startsWith(`${s}/`) || entry.name === s)) continue;
    if (entry.isDirectory) yield* walk(path);
    else if (entry.isFile) yield path;
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function problemsOf(path: string): string[] {
  const bytes = Deno.readFileSync(path);
  if (bytes.includes(0)) return []; // binary
  const text = new TextDecoder().decode(bytes);
  const rel = relative(ROOT, path);
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    const where = `${rel}:${i + 1}`;
    for (const { re, what } of PATTERNS) {
      if (re.test(line)) found.push(`${where}: ${what}: ${line.trim()}`);
    }
    for (const m of line.matchAll(RELATIVE_SHARED)) {
      const target = resolve(dirname(path), m[0]);
      const inside = !relative(ROOT, target).startsWith("..");
      if (!inside || !exists(target)) found.push(`${where}: a path outside the repository: ${line.trim()}`);
    }
  });
  return found;
}

Deno.test("no comment, test name or doc cites files outside the repository, issue numbers or spec sections", () => {
  const paths = [
    ...DIRS.flatMap((d) => [...walk(join(ROOT, d))]),
    ...FILES.map((f) => join(ROOT, f)).filter(exists),
  ].filter((p) => p !== SELF);
  assert.ok(paths.length > 100, `only ${paths.length} files found under ${ROOT}`);
  const problems = paths.flatMap(problemsOf);
  assert.deepEqual(problems, [], `\n${problems.join("\n")}\n`);
});

Deno.test("the check itself catches each kind of reference", () => {
  const samples = [
    word("see decisions", ".md"),
    word("../../sha", "red/spec/x.md"),
    word("/work/shared/", "toolchain.md"),
    word("platform", "-api.md"),
    word("(iss", "ue 9)"),
    word("Issue", " 10 section 4"),
    word("issue", " #3"),
    word("spec section", " 8"),
    word("spec", ' "Intent execution"'),
  ];
  for (const sample of samples) {
    const caught = PATTERNS.some(({ re }) => re.test(sample)) ||
      [...sample.matchAll(RELATIVE_SHARED)].some((m) => !exists(resolve(join(ROOT, "src/x"), m[0])));
    assert.ok(caught, `not caught: ${sample}`);
  }
  // Imports of the repository's own src/shared are not references outside it.
  const own = [...'import { x } from "../shared/errors.ts";'.matchAll(RELATIVE_SHARED)];
  assert.ok(own.every((m) => exists(resolve(join(ROOT, "src/agents"), m[0]))));
  // A zod issue is not an issue number.
  assert.ok(!PATTERNS.some(({ re }) => re.test(word("flatMap((iss", "ue) => issue.code)"))));
});
