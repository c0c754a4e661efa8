/**
 * The "Error codes" table of docs/api.md lists exactly the codes of ERROR_CODES (src/shared/error_codes.ts),
 * with the same status and meaning, so the documentation cannot drift from the code. Every code is
 * UPPER_SNAKE and used somewhere in src/ (a declared code nobody answers is stale).
 */
import assert from "node:assert/strict";
import { ERROR_CODES } from "../src/shared/error_codes.ts";

interface Row {
  status: number;
  meaning: string;
}

/** The rows of the first table under `## Error codes`: `| \`CODE\` | status | meaning |`. */
function readmeTable(markdown: string): Map<string, Row> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith("Error codes\n"));
  assert.ok(section, "docs/api.md has a section `## Error codes`");
  const lines = section.split("\n").filter((l) => l.startsWith("|"));
  assert.match(lines[0] ?? "", /^\|\s*code\s*\|\s*status\s*\|\s*meaning\s*\|$/, "the table's header");
  assert.match(lines[1] ?? "", /^\|(\s*:?-+:?\s*\|){3}$/, "the header's separator row");
  const rows = new Map<string, Row>();
  for (const line of lines.slice(2)) {
    const match = /^\|\s*`([^`]+)`\s*\|\s*(\d{3})\s*\|\s*(.+?)\s*\|$/.exec(line);
    assert.ok(match, `a table row reads | \`CODE\` | status | meaning |: ${line}`);
    const [, code, status, meaning] = match;
    assert.ok(!rows.has(code), `${code} is listed once`);
    rows.set(code, { status: Number(status), meaning });
  }
  return rows;
}

const readme = await Deno.readTextFile(new URL("../docs/api.md", import.meta.url));
const declared = Object.entries(ERROR_CODES);

Deno.test("the docs/api.md table lists exactly the declared error codes, with their statuses and meanings", () => {
  const table = readmeTable(readme);
  const codes = declared.map(([code]) => code);
  assert.deepEqual(
    [...table.keys()].filter((code) => !(code in ERROR_CODES)),
    [],
    "codes in docs/api.md that src/shared/error_codes.ts does not declare",
  );
  assert.deepEqual(
    codes.filter((code) => !table.has(code)),
    [],
    "declared codes missing from docs/api.md",
  );
  for (const [code, { status, meaning }] of declared) {
    assert.deepEqual(table.get(code), { status, meaning }, `${code}: docs/api.md row`);
  }
  assert.equal(table.size, codes.length);
});

Deno.test("every error code is UPPER_SNAKE with a real HTTP status and a meaning", () => {
  assert.ok(declared.length > 0);
  for (const [code, { status, meaning }] of declared) {
    assert.match(code, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, `${code} is UPPER_SNAKE`);
    assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: status ${status}`);
    assert.ok(meaning.trim().length > 0 && !meaning.includes("|"), `${code}: a one-line meaning`);
  }
});

Deno.test("every declared error code is used in src/", async () => {
  const sources: string[] = [];
  const walk = async (dir: URL) => {
    for await (const entry of Deno.readDir(dir)) {
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
      if (entry.isDirectory && entry.name !== "generated") await walk(url);
      else if (entry.isFile && entry.name.endsWith(".ts") && entry.name !== "error_codes.ts") {
        sources.push(await Deno.readTextFile(url));
      }
    }
  };
  await walk(new URL("../src/", import.meta.url));
  const text = sources.join("\n");
  assert.ok(sources.length > 10, "read the sources");
  const unused = declared.map(([code]) => code).filter((code) => !text.includes(`"${code}"`));
  assert.deepEqual(unused, [], "declared codes no source file names");
});
