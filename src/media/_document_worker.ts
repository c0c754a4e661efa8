/**
 * The child process of documents.ts: reads one PDF or DOCX from standard input and prints one
 * JSON line (a ChildAnswer). Started by runSandboxed with no permissions, a heap limit and a
 * deadline; it trusts nothing in the file and stops reading once it has `maxChars` characters.
 *
 * Usage: _document_worker.ts <pdf|docx> <maxChars> <maxInflatedBytes>
 */
import { Buffer } from "node:buffer";
import {
  type ChildAnswer,
  type ChildFailure,
  normalizeDocumentText,
  truncateText,
} from "./_document_text.ts";

const fail = (failure: ChildFailure, detail?: string): ChildAnswer => ({ ok: false, failure, detail });
const errorName = (e: unknown) => (e as { name?: unknown })?.name;
const errorText = (e: unknown) => String((e as { message?: unknown })?.message ?? e).slice(0, 200);

/** PDF with unpdf (pdf.js), page by page until `maxChars` characters of text are gathered. */
async function pdfText(bytes: Uint8Array, maxChars: number): Promise<ChildAnswer> {
  const { getDocumentProxy } = await import("unpdf");
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(bytes, {
      verbosity: 0, // pdf.js warnings about damaged files would only fill stderr
      disableFontFace: true,
      stopAtErrors: false,
    });
  } catch (e) {
    if (errorName(e) === "PasswordException") return fail("encrypted");
    if (errorName(e) === "InvalidPDFException") return fail("damaged_pdf");
    return fail("damaged_pdf", errorText(e));
  }
  let text = "";
  let pageErrors = 0;
  let truncated = false;
  for (let n = 1; n <= pdf.numPages; n++) {
    let raw = "";
    try {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      for (const item of content.items) {
        if ("str" in item) raw += item.str + (item.hasEOL ? "\n" : "");
      }
      page.cleanup();
    } catch {
      pageErrors++; // a damaged page: keep the text of the others
      continue;
    }
    const pageText = normalizeDocumentText(raw);
    if (!pageText) continue;
    if (text.length >= maxChars) {
      truncated = true; // there is text beyond the limit
      break;
    }
    text = text ? `${text}\n\n${pageText}` : pageText;
    if (text.length > maxChars) {
      truncated = true;
      break;
    }
  }
  if (!text) return fail(pageErrors ? "damaged_pdf" : "no_text");
  const cut = truncateText(text, maxChars);
  return { ok: true, text: cut.text, truncated: truncated || cut.truncated };
}

/** JSZip's StreamHelper: the part of it used here. */
interface JSZipStream {
  on(event: "data", listener: (chunk: Uint8Array) => void): JSZipStream;
  on(event: "error", listener: (error: Error) => void): JSZipStream;
  on(event: "end", listener: () => void): JSZipStream;
  resume(): JSZipStream;
  pause(): JSZipStream;
}

/**
 * How many bytes the zip's entries inflate to, reading each entry as a stream with the same zip
 * reader mammoth uses (JSZip, central directory) and stopping past `limit`. The sizes the zip
 * declares are checked first (fflate, without inflating anything); the streamed count catches a
 * zip that lies about them.
 */
async function inflatesWithin(bytes: Uint8Array, limit: number): Promise<"ok" | "too_large" | "damaged"> {
  const { unzipSync } = await import("fflate");
  let declared = 0;
  try {
    unzipSync(bytes, {
      filter: (file) => {
        declared += file.originalSize;
        return false; // inflate nothing
      },
    });
  } catch {
    return "damaged";
  }
  if (declared > limit) return "too_large";

  const { default: JSZip } = await import("jszip");
  let zip: InstanceType<typeof JSZip>;
  try {
    zip = await JSZip.loadAsync(bytes);
  } catch {
    return "damaged";
  }
  let inflated = 0;
  for (const entry of Object.values(zip.files)) {
    if (entry.dir) continue;
    // `internalStream` is what JSZip's own `async` and `nodeStream` are built on (its `nodeStream`
    // needs the readable-stream package, which JSZip does not find under Deno): chunks as they
    // are inflated, and `pause` to stop inflating.
    const stream = (entry as unknown as { internalStream(type: "uint8array"): JSZipStream }).internalStream(
      "uint8array",
    );
    const result = await new Promise<"ok" | "too_large" | "damaged">((resolve) => {
      stream
        .on("data", (chunk) => {
          inflated += chunk.length;
          if (inflated > limit) {
            stream.pause();
            resolve("too_large");
          }
        })
        .on("error", () => resolve("damaged"))
        .on("end", () => resolve("ok"))
        .resume();
    });
    if (result !== "ok") return result;
  }
  return "ok";
}

/** DOCX with mammoth's extractRawText, after the zip has been shown to inflate to at most `maxInflated` bytes. */
async function docxText(bytes: Uint8Array, maxChars: number, maxInflated: number): Promise<ChildAnswer> {
  const size = await inflatesWithin(bytes, maxInflated);
  if (size === "too_large") return fail("zip_bomb");
  if (size === "damaged") return fail("damaged_docx");
  const { default: mammoth } = await import("mammoth");
  let raw: string;
  try {
    raw =
      (await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length) }))
        .value;
  } catch (e) {
    if (/main document part|could not find file/i.test(errorText(e))) return fail("not_word");
    return fail("bad_word_xml", errorText(e)); // the zip was read above: its content is the problem
  }
  const text = normalizeDocumentText(raw);
  if (!text) return fail("no_text");
  return { ok: true, ...truncateText(text, maxChars) };
}

async function main(): Promise<ChildAnswer> {
  const [kind, maxCharsArg, maxInflatedArg] = Deno.args;
  const maxChars = Number(maxCharsArg);
  const bytes = await new Response(Deno.stdin.readable).bytes();
  try {
    if (kind === "pdf") return await pdfText(bytes, maxChars);
    if (kind === "docx") return await docxText(bytes, maxChars, Number(maxInflatedArg));
    return fail("failed", `unknown kind ${kind}`);
  } catch (e) {
    return fail("failed", errorText(e));
  }
}

const answer = await main();
await new Blob([JSON.stringify(answer) + "\n"]).stream().pipeTo(Deno.stdout.writable);
Deno.exit(0);
