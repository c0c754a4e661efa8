/**
 * extractDocumentText() on real PDF and DOCX files built here (tests/_helpers/documents.ts): exact
 * text, truncation, and hostile files (zip bombs, a 2 000-page PDF, files that are not what they
 * claim, truncated and encrypted ones), each with its exact outcome and within its deadline. Then
 * the sandbox itself (src/media/_sandbox.ts) against children that loop, eat memory or print
 * without end. No database: the module is pure.
 */
import assert from "node:assert/strict";
import {
  DOCUMENT_ERRORS,
  documentExtractionLoad,
  type DocumentLimits,
  type DocumentText,
  extractDocumentText,
  isExtractable,
  MAX_CONCURRENT_EXTRACTIONS,
} from "../src/media/documents.ts";
import { normalizeDocumentText, truncateText } from "../src/media/_document_text.ts";
import { runSandboxed } from "../src/media/_sandbox.ts";
import { buildDocx, buildPdf, buildZipBombDocx, docxParagraph } from "./_helpers/documents.ts";

const PDF = "application/pdf";
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
const LIMITS: DocumentLimits = { maxChars: 20_000, timeoutMs: 15_000, maxHeapMb: 256 };
/** Slack over a deadline for killing a child and collecting it: a bound against hangs, not a timing claim. */
const SLACK_MS = 5_000;

/** extractDocumentText, failing the test (instead of hanging it) if the call outlives its deadline. */
async function extract(
  bytes: Uint8Array,
  mimeType: string,
  limits: DocumentLimits = LIMITS,
  fileName?: string,
): Promise<DocumentText> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${limits.timeoutMs} + ${SLACK_MS} ms`)),
      limits.timeoutMs + SLACK_MS,
    );
  });
  try {
    return await Promise.race([extractDocumentText({ bytes, mimeType, fileName }, limits), guard]);
  } finally {
    clearTimeout(timer);
  }
}

// --- What is read --------------------------------------------------------------------------------

Deno.test("isExtractable() takes PDF and DOCX by mime type, or by extension when the type is generic", () => {
  assert.equal(isExtractable("application/pdf"), true);
  assert.equal(isExtractable("Application/PDF; charset=binary"), true);
  assert.equal(isExtractable(DOCX, null), true);
  assert.equal(isExtractable("application/octet-stream", "Contrato.PDF"), true);
  assert.equal(isExtractable("application/octet-stream", "notes.docx"), true);
  assert.equal(isExtractable("", "notes.docx"), true);
  assert.equal(isExtractable("application/octet-stream", "notes.doc"), false);
  assert.equal(isExtractable("application/octet-stream", null), false);
  assert.equal(isExtractable("application/msword", "notes.doc"), false);
  assert.equal(isExtractable("text/html", "invoice.pdf"), false);
  assert.equal(isExtractable("image/jpeg", "scan.pdf"), false);
  assert.equal(isExtractable("text/plain"), false);
});

Deno.test("normalizeDocumentText() strips NUL and control characters, collapses spaces and keeps paragraphs", () => {
  assert.equal(
    normalizeDocumentText(
      "  Title\u0000 \t\u00a0 one\r\n\r\n\r\n\f  two\u0007 \u000b three \n\n\n\nend\ud800 \ufeff",
    ),
    "Title one\n\ntwo\nthree\n\nend\ufffd",
  );
  assert.equal(normalizeDocumentText("a\u2028b\u2029c\u0085d"), "a\nb\nc\nd");
  assert.equal(normalizeDocumentText(" \n\t\n "), "");
});

Deno.test("truncateText() cuts at maxChars and never splits a surrogate pair", () => {
  assert.deepEqual(truncateText("abcdef", 4), { text: "abcd", truncated: true });
  assert.deepEqual(truncateText("abcd", 4), { text: "abcd", truncated: false });
  assert.deepEqual(truncateText("ab😀cd", 3), { text: "ab", truncated: true });
  assert.deepEqual(truncateText("ab😀cd", 4), { text: "ab😀", truncated: true });
});

// --- Real documents ------------------------------------------------------------------------------

Deno.test("extractDocumentText() reads a one-page PDF's exact text", async () => {
  const pdf = buildPdf([["Olá (mundo) ação", "Invoice   #42:  total   R$ 10,00"]]);
  assert.deepEqual(await extract(pdf, PDF), {
    ok: true,
    text: "Olá (mundo) ação\nInvoice #42: total R$ 10,00",
    truncated: false,
  });
});

Deno.test("extractDocumentText() reads a multi-page PDF, a blank line between pages, empty pages skipped", async () => {
  const pdf = buildPdf([["Page one"], ["Page two", "second line"], [], ["Page four"]]);
  assert.deepEqual(await extract(pdf, "application/octet-stream", LIMITS, "scan.pdf"), {
    ok: true,
    text: "Page one\n\nPage two\nsecond line\n\nPage four",
    truncated: false,
  });
});

Deno.test("extractDocumentText() reads a DOCX's exact text, one blank line between paragraphs", async () => {
  const docx = buildDocx([
    "Olá, João & <Maria>",
    docxParagraph("Run one, ", "run two"),
    "",
    "Tab\there",
    "  lots   of    spaces  ",
  ]);
  assert.deepEqual(await extract(docx, DOCX), {
    ok: true,
    text: "Olá, João & <Maria>\n\nRun one, run two\n\nTab here\n\nlots of spaces",
    truncated: false,
  });
});

Deno.test("extractDocumentText() truncates a PDF at maxChars, across pages, and says so", async () => {
  const pages = [["abcdefghij abcdefghij"], ["klmnopqrst klmnopqrst"], ["uvwxyz"]];
  const full = "abcdefghij abcdefghij\n\nklmnopqrst klmnopqrst\n\nuvwxyz";
  const pdf = buildPdf(pages);
  const cut = await extract(pdf, PDF, { ...LIMITS, maxChars: 30 });
  assert.deepEqual(cut, { ok: true, text: full.slice(0, 30), truncated: true });
  assert.equal(cut.ok && cut.text.length, 30);
  assert.deepEqual(await extract(pdf, PDF, { ...LIMITS, maxChars: full.length }), {
    ok: true,
    text: full,
    truncated: false,
  });
});

Deno.test("extractDocumentText() truncates a DOCX at maxChars and says so", async () => {
  const paragraphs = Array.from({ length: 100 }, (_, i) => `Paragraph ${i + 1} of the contract.`);
  const full = paragraphs.join("\n\n");
  const result = await extract(buildDocx(paragraphs), DOCX, { ...LIMITS, maxChars: 100 });
  assert.deepEqual(result, { ok: true, text: full.slice(0, 100), truncated: true });
  assert.equal(result.ok && result.text.length, 100);
});

// --- Hostile files -------------------------------------------------------------------------------

Deno.test("a 2 000-page PDF gives its first maxChars characters, exactly, within the deadline", async () => {
  const line = (n: number) => `Page ${n}: lorem ipsum dolor sit amet, consectetur adipiscing elit.`;
  const pdf = buildPdf(Array.from({ length: 2000 }, (_, i) => [line(i + 1)]));
  const full = Array.from({ length: 2000 }, (_, i) => line(i + 1)).join("\n\n");
  const result = await extract(pdf, PDF, { ...LIMITS, maxChars: 20_000 });
  assert.deepEqual(result, { ok: true, text: full.slice(0, 20_000), truncated: true });
  assert.equal(result.ok && result.text.length, 20_000);
});

Deno.test("a zip-bomb DOCX (2 GB from about 2 MB, sizes declared) is refused without inflating it", async () => {
  const bomb = buildZipBombDocx(2_000_000_000, "honest");
  assert.ok(bomb.length < 2_500_000, `bomb of ${bomb.length} bytes`);
  const rssBefore = Deno.memoryUsage().rss;
  assert.deepEqual(await extract(bomb, DOCX), { ok: false, error: DOCUMENT_ERRORS.zipBomb(64) });
  assert.ok(Deno.memoryUsage().rss - rssBefore < 64 * 1024 * 1024, "this process did not grow");
});

Deno.test("a zip-bomb DOCX that declares 1 KB is stopped once it has inflated past the limit", async () => {
  const bomb = buildZipBombDocx(2_000_000_000, "small");
  const rssBefore = Deno.memoryUsage().rss;
  assert.deepEqual(await extract(bomb, DOCX, { ...LIMITS, maxHeapMb: 128 }), {
    ok: false,
    error: DOCUMENT_ERRORS.zipBomb(32),
  });
  assert.ok(Deno.memoryUsage().rss - rssBefore < 64 * 1024 * 1024, "this process did not grow");
});

Deno.test("random bytes or HTML named .pdf are not a PDF (refused before any child starts)", async () => {
  const random = crypto.getRandomValues(new Uint8Array(4096));
  random.set([0x25, 0x50], 0); // "%P", never a whole header
  const html = new TextEncoder().encode("<!doctype html><html><body>Fatura</body></html>");
  for (
    const [bytes, mime] of [[random, "application/octet-stream"], [html, PDF], [
      html,
      "binary/octet-stream",
    ]] as const
  ) {
    assert.deepEqual(await extract(bytes, mime, LIMITS, "fatura.pdf"), {
      ok: false,
      error: DOCUMENT_ERRORS.notPdf,
    });
  }
  assert.equal(documentExtractionLoad().running, 0);
});

Deno.test("random bytes after a PDF header, and a PDF cut in half, are damaged PDFs", async () => {
  const junk = new Uint8Array(64 * 1024);
  crypto.getRandomValues(junk.subarray(0, 65536));
  junk.set(new TextEncoder().encode("%PDF-1.7\n"), 0);
  assert.deepEqual(await extract(junk, PDF), { ok: false, error: DOCUMENT_ERRORS.damagedPdf });
  const pdf = buildPdf([["Hello world"], ["Second page"]]);
  assert.deepEqual(await extract(pdf.slice(0, Math.floor(pdf.length / 2)), PDF), {
    ok: false,
    error: DOCUMENT_ERRORS.damagedPdf,
  });
});

Deno.test("a truncated DOCX, a zip without a Word document and a file that is no zip are refused", async () => {
  const docx = buildDocx(["Hello"]);
  assert.deepEqual(await extract(docx.slice(0, Math.floor(docx.length / 2)), DOCX), {
    ok: false,
    error: DOCUMENT_ERRORS.damagedDocx,
  });
  const { zipSync } = await import("fflate");
  const notWord = zipSync({ "notes.txt": new TextEncoder().encode("just text") });
  assert.deepEqual(await extract(notWord, DOCX), { ok: false, error: DOCUMENT_ERRORS.notWord });
  assert.deepEqual(
    await extract(new TextEncoder().encode("plain text"), "application/octet-stream", LIMITS, "a.docx"),
    {
      ok: false,
      error: DOCUMENT_ERRORS.notDocx,
    },
  );
});

Deno.test("a DOCX with nested XML entities (billion laughs) is refused, not expanded", async () => {
  let dtd = '<!DOCTYPE w:document [<!ENTITY l0 "lollollollollollollollollollol">';
  for (let i = 1; i <= 9; i++) dtd += `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`;
  const xml = `<?xml version="1.0" encoding="UTF-8"?>${dtd}]><w:document xmlns:w="${W_NS}"><w:body>` +
    `<w:p><w:r><w:t>&l9;</w:t></w:r></w:p></w:body></w:document>`;
  const { unzipSync, zipSync } = await import("fflate");
  const docx = zipSync({
    ...unzipSync(buildDocx(["x"])),
    "word/document.xml": new TextEncoder().encode(xml),
  });
  assert.deepEqual(await extract(docx, DOCX, { ...LIMITS, maxHeapMb: 128 }), {
    ok: false,
    error: DOCUMENT_ERRORS.badWordXml,
  });
});

Deno.test("an encrypted PDF (user password, RC4) is reported as password-protected", async () => {
  const pdf = buildPdf([["Confidential"]], { userPassword: "s3cret" });
  assert.deepEqual(await extract(pdf, PDF), { ok: false, error: DOCUMENT_ERRORS.encrypted });
});

Deno.test("a PDF without text, an empty file and an unsupported type are told apart", async () => {
  assert.deepEqual(await extract(buildPdf([[], []]), PDF), { ok: false, error: DOCUMENT_ERRORS.noText });
  assert.deepEqual(await extract(new Uint8Array(), PDF), { ok: false, error: DOCUMENT_ERRORS.empty });
  assert.deepEqual(await extract(buildPdf([["x"]]), "image/png"), {
    ok: false,
    error: DOCUMENT_ERRORS.unsupported,
  });
});

Deno.test("a child slower than timeoutMs is killed and the call answers with a timeout", async () => {
  // Starting Deno and loading pdf.js alone takes far longer than 30 ms.
  const result = await extract(buildPdf([["Hello"]]), PDF, { ...LIMITS, timeoutMs: 30 });
  assert.deepEqual(result, { ok: false, error: DOCUMENT_ERRORS.timeout(30) });
  assert.equal(documentExtractionLoad().running, 0);
});

Deno.test("at most MAX_CONCURRENT_EXTRACTIONS children run at once; the others wait for a slot", async () => {
  const pdf = buildPdf([["Hello"]]);
  const calls = Array.from({ length: 5 }, () => extract(pdf, PDF));
  assert.deepEqual(documentExtractionLoad(), {
    running: MAX_CONCURRENT_EXTRACTIONS,
    waiting: 5 - MAX_CONCURRENT_EXTRACTIONS,
    peakRunning: MAX_CONCURRENT_EXTRACTIONS,
  });
  for (const result of await Promise.all(calls)) {
    assert.deepEqual(result, { ok: true, text: "Hello", truncated: false });
  }
  assert.deepEqual(documentExtractionLoad(), {
    running: 0,
    waiting: 0,
    peakRunning: MAX_CONCURRENT_EXTRACTIONS,
  });
});

Deno.test("a call that finds no free slot before its deadline gives up with 'busy'", async () => {
  const pdf = buildPdf([["Hello"]]);
  const busy = Array.from({ length: MAX_CONCURRENT_EXTRACTIONS }, () => extract(pdf, PDF));
  assert.deepEqual(await extract(pdf, PDF, { ...LIMITS, timeoutMs: 100 }), {
    ok: false,
    error: DOCUMENT_ERRORS.busy(100),
  });
  for (const result of await Promise.all(busy)) assert.equal(result.ok, true);
  assert.equal(documentExtractionLoad().waiting, 0);
});

// --- The sandbox ---------------------------------------------------------------------------------

const HOSTILE = new URL("./_helpers/hostile_child.ts", import.meta.url);
const SANDBOX = {
  stdin: new Uint8Array(),
  timeoutMs: 10_000,
  maxHeapMb: 64,
  maxRssMb: 400,
  maxStdoutBytes: 1024,
};

Deno.test("runSandboxed() kills a child that never ends at its deadline", async () => {
  const outcome = await runSandboxed(HOSTILE, { ...SANDBOX, args: ["loop"], timeoutMs: 1_500 });
  assert.equal(outcome.kind, "timeout");
});

Deno.test("runSandboxed() stops a child that fills its V8 heap, and this process goes on", async () => {
  const outcome = await runSandboxed(HOSTILE, { ...SANDBOX, args: ["heap"] });
  assert.equal(outcome.kind, "memory");
  assert.equal(outcome.kind === "memory" && outcome.via, "heap");
});

Deno.test("runSandboxed() kills a child whose array buffers pass maxRssMb (memory the heap limit does not see)", async () => {
  const outcome = await runSandboxed(HOSTILE, { ...SANDBOX, args: ["buffers"], maxRssMb: 300 });
  assert.equal(outcome.kind, "memory");
  assert.equal(outcome.kind === "memory" && outcome.via, "rss");
});

Deno.test("runSandboxed() kills a child that prints more than maxStdoutBytes", async () => {
  const outcome = await runSandboxed(HOSTILE, { ...SANDBOX, args: ["print"] });
  assert.equal(outcome.kind, "output");
});

Deno.test("runSandboxed() gives the child no permission: files, environment, network and processes are refused", async () => {
  const outcome = await runSandboxed(HOSTILE, { ...SANDBOX, args: ["escape"] });
  assert.equal(outcome.kind, "exited");
  assert.deepEqual(
    outcome.kind === "exited" && JSON.parse(new TextDecoder().decode(outcome.stdout)),
    ["read", "env", "net", "run"],
  );
});

Deno.test("without the zip check, the sandbox's memory limits alone stop mammoth on a lying zip bomb", async () => {
  const outcome = await runSandboxed(HOSTILE, {
    ...SANDBOX,
    args: ["mammoth"],
    stdin: buildZipBombDocx(2_000_000_000, "small"),
    denoFlags: ["--unsafe-proto"],
    maxHeapMb: 128,
    maxRssMb: 128 + 160,
    timeoutMs: 30_000,
  });
  assert.equal(outcome.kind, "memory", JSON.stringify(outcome).slice(0, 300));
});
