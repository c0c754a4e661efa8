/**
 * `deno task bench documents`: what one extractDocumentText() call costs, child process included:
 * a one-page PDF, a one-page DOCX, and a 2 000-page PDF cut at 20 000 characters, one call at a
 * time, against the floor of starting `deno run` on an empty module. Writes
 * bench/results/documents.md. Not part of the tests.
 */
import { extractDocumentText } from "../src/media/documents.ts";
import { buildDocx, buildPdf } from "../tests/_helpers/documents.ts";

const ROUNDS = 15;
const LIMITS = { maxChars: 20_000, timeoutMs: 30_000, maxHeapMb: 256 };
const PDF = "application/pdf";
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

function summary(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))].toFixed(0);
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, min ${s[0].toFixed(0)} ms`;
}

async function time(f: () => Promise<unknown>): Promise<number[]> {
  await f(); // warm: the first run fills Deno's transpile and code caches
  const out: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    await f();
    out.push(performance.now() - t);
  }
  return out;
}

export async function runDocumentsBench(): Promise<void> {
  const empty = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(empty, "");
  const pdf = buildPdf([["Invoice 42", "Total: R$ 10,00"]]);
  const docx = buildDocx(["Invoice 42", "Total: R$ 10,00"]);
  const big = buildPdf(
    Array.from({ length: 2000 }, (_, i) => [`Page ${i + 1}: lorem ipsum dolor sit amet.`]),
  );
  const check = async (bytes: Uint8Array, mimeType: string) => {
    const r = await extractDocumentText({ bytes, mimeType }, LIMITS);
    if (!r.ok) throw new Error(r.error);
  };
  const rows: [string, number[]][] = [
    [
      "`deno run` of an empty module (floor)",
      await time(() => new Deno.Command(Deno.execPath(), { args: ["run", "--quiet", empty] }).output()),
    ],
    ["1-page PDF", await time(() => check(pdf, PDF))],
    ["1-page DOCX", await time(() => check(docx, DOCX))],
    ["2 000-page PDF, first 20 000 characters", await time(() => check(big, PDF))],
  ];
  await Deno.remove(empty);
  const load = (await Deno.readTextFile("/proc/loadavg").catch(() => "?")).split(" ").slice(0, 3).join(" ");
  const report = [
    "# Document text extraction",
    "",
    `${
      new Date().toISOString()
    }, Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores, load ${load}.`,
    `One call at a time, ${ROUNDS} rounds after one warm-up; each call starts its own child process.`,
    "",
    ...rows.map(([name, ms]) => `- ${name}: ${summary(ms)}`),
    "",
  ].join("\n");
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(new URL("./results/documents.md", import.meta.url), report);
  console.log(report);
}

if (import.meta.main) await runDocumentsBench();
