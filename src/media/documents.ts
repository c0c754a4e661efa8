/**
 * The text of a PDF or DOCX file a customer sent, for the model: at most `maxChars` characters,
 * normalised, or a readable reason why there is none.
 *
 * Libraries: PDF with `unpdf` (pdf.js packaged to run without a DOM or a worker; text page by page,
 * so a 2 000-page file stops being read once enough text is gathered), DOCX with `mammoth`
 * (`extractRawText`, paragraphs as blank lines). Before mammoth inflates anything, the zip is
 * checked with `fflate` (declared sizes) and `jszip` (the reader mammoth uses, streamed and
 * counted), so a zip bomb is refused after inflating at most the limit.
 *
 * Bounds: every extraction runs in its own Deno process (_sandbox.ts) without permissions or the
 * app's environment, with a V8 heap limit (`maxHeapMb`), a resident-memory watchdog, and a kill at
 * `timeoutMs`, so a hostile file costs at most one child's limits and never this process. A Web
 * Worker would not do: a worker that exhausts the heap aborts the whole process. mammoth also needs
 * `--unsafe-proto` (it sets `__proto__`), given to the child only. At most
 * MAX_CONCURRENT_EXTRACTIONS children run at once; the others wait for a slot, within their own
 * deadline.
 */
import { runSandboxed } from "./_sandbox.ts";
import type { ChildAnswer, ChildFailure } from "./_document_text.ts";

export interface DocumentLimits {
  /** Characters of text kept (DOCUMENT_MAX_CHARS). */
  maxChars: number;
  /** The whole call, waiting for a slot included, resolves within this (plus the time to kill a child). */
  timeoutMs: number;
  /** V8 heap of the child process; its resident memory may reach this plus DOCUMENT_RSS_ALLOWANCE_MB. */
  maxHeapMb: number;
}

export type DocumentText = { ok: true; text: string; truncated: boolean } | { ok: false; error: string };

/** Children reading documents at the same time in this process. */
export const MAX_CONCURRENT_EXTRACTIONS = 2;
/** Resident memory a child may use beyond its heap: the runtime, pdf.js' code, array buffers. */
export const DOCUMENT_RSS_ALLOWANCE_MB = 160;

/** The readable reasons extractDocumentText gives (the tests compare them whole). */
export const DOCUMENT_ERRORS = {
  unsupported: "unsupported document type: only PDF and DOCX files are read",
  empty: "the file is empty",
  notPdf: "not a PDF file: it has no PDF header",
  damagedPdf: "the PDF is damaged or truncated and could not be read",
  encrypted: "the PDF is password-protected",
  notDocx: "not a DOCX file: it is not a zip archive",
  damagedDocx: "the DOCX is damaged or truncated: its zip archive could not be read",
  notWord: "not a DOCX file: the archive holds no Word document",
  badWordXml: "the DOCX is damaged: its Word XML could not be read",
  zipBomb: (mb: number) => `the DOCX expands to more than ${mb} MB (a zip bomb?) and was not read`,
  noText: "the document has no text to read (a scanned image?)",
  timeout: (ms: number) => `reading the document took longer than ${ms} ms and was stopped`,
  memory: (mb: number) => `reading the document needed more than ${mb} MB of memory and was stopped`,
  busy: (ms: number) => `too many documents were being read: no free slot within ${ms} ms`,
  failed: (detail: string) => `the document could not be read: ${detail}`,
} as const;

type Kind = "pdf" | "docx";

const PDF_TYPES = new Set(["application/pdf", "application/x-pdf", "application/acrobat"]);
const DOCX_TYPES = new Set(["application/vnd.openxmlformats-officedocument.wordprocessingml.document"]);
/** Types that say nothing about the content: then the file name's extension decides. */
const GENERIC_TYPES = new Set([
  "",
  "application/octet-stream",
  "binary/octet-stream",
  "application/binary",
  "application/unknown",
  "application/download",
  "application/force-download",
  "application/x-download",
  "application/zip",
  "application/x-zip-compressed",
]);

function kindOf(mimeType: string, fileName?: string | null): Kind | null {
  const type = mimeType.split(";")[0].trim().toLowerCase();
  if (PDF_TYPES.has(type)) return "pdf";
  if (DOCX_TYPES.has(type)) return "docx";
  if (!GENERIC_TYPES.has(type)) return null;
  const ext = /\.([a-z0-9]+)\s*$/i.exec(fileName ?? "")?.[1]?.toLowerCase();
  if (ext === "pdf") return "pdf";
  if (ext === "docx") return "docx";
  return null;
}

/**
 * Whether extractDocumentText reads this file: a PDF or DOCX mime type, or a generic one
 * (application/octet-stream, ...) with a `.pdf` / `.docx` file name.
 */
export function isExtractable(mimeType: string, fileName?: string | null): boolean {
  return kindOf(mimeType, fileName) !== null;
}

// ---------------------------------------------------------------------------------------------
// The slots: a counting semaphore whose waiters give up at their deadline.

let running = 0;
let peakRunning = 0;
const waiting: Array<{ grant: () => void }> = [];

function acquire(deadline: number): Promise<boolean> {
  if (running < MAX_CONCURRENT_EXTRACTIONS) {
    running++;
    peakRunning = Math.max(peakRunning, running);
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    const waiter = {
      grant: () => {
        clearTimeout(timer);
        resolve(true); // the slot passes from the releaser: `running` is unchanged
      },
    };
    const timer = setTimeout(() => {
      waiting.splice(waiting.indexOf(waiter), 1);
      resolve(false);
    }, Math.max(0, deadline - Date.now()));
    waiting.push(waiter);
  });
}

function release(): void {
  const next = waiting.shift();
  if (next) next.grant();
  else running--;
}

/** Children running now, calls waiting for a slot, and the most children ever running at once. */
export function documentExtractionLoad(): { running: number; waiting: number; peakRunning: number } {
  return { running, waiting: waiting.length, peakRunning };
}

// ---------------------------------------------------------------------------------------------

const WORKER = new URL("./_document_worker.ts", import.meta.url);
const FAILURES: Record<ChildFailure, (limits: DocumentLimits, detail?: string) => string> = {
  encrypted: () => DOCUMENT_ERRORS.encrypted,
  damaged_pdf: () => DOCUMENT_ERRORS.damagedPdf,
  damaged_docx: () => DOCUMENT_ERRORS.damagedDocx,
  bad_word_xml: () => DOCUMENT_ERRORS.badWordXml,
  not_word: () => DOCUMENT_ERRORS.notWord,
  zip_bomb: (limits) => DOCUMENT_ERRORS.zipBomb(maxInflatedMb(limits)),
  no_text: () => DOCUMENT_ERRORS.noText,
  failed: (_, detail) => DOCUMENT_ERRORS.failed(detail ?? "unknown error"),
};

/** What a DOCX may inflate to: a quarter of the heap, so mammoth's XML tree still fits in it. */
function maxInflatedMb(limits: DocumentLimits): number {
  return Math.max(4, Math.floor(limits.maxHeapMb / 4));
}

function startsWith(bytes: Uint8Array, prefix: number[], at = 0): boolean {
  return prefix.every((b, i) => bytes[at + i] === b);
}
const PDF_HEADER = [...new TextEncoder().encode("%PDF-")];

/** A header check before a child is started: pdf.js accepts the header anywhere in the first KB. */
function headerProblem(kind: Kind, bytes: Uint8Array): string | null {
  if (bytes.length === 0) return DOCUMENT_ERRORS.empty;
  if (kind === "pdf") {
    const end = Math.min(bytes.length - PDF_HEADER.length, 1024);
    for (let i = 0; i <= end; i++) if (startsWith(bytes, PDF_HEADER, i)) return null;
    return DOCUMENT_ERRORS.notPdf;
  }
  return startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) ? null : DOCUMENT_ERRORS.notDocx;
}

/**
 * The text of a PDF or DOCX: normalised, at most `limits.maxChars` characters (`truncated` when
 * there was more), or `{ ok: false, error }` with a readable reason (DOCUMENT_ERRORS). Never
 * throws, resolves within `limits.timeoutMs`, and runs the parsing in a bounded child process.
 */
export async function extractDocumentText(
  input: { bytes: Uint8Array; mimeType: string; fileName?: string | null },
  limits: DocumentLimits,
): Promise<DocumentText> {
  const deadline = Date.now() + limits.timeoutMs;
  const kind = kindOf(input.mimeType, input.fileName);
  if (!kind) return { ok: false, error: DOCUMENT_ERRORS.unsupported };
  const problem = headerProblem(kind, input.bytes);
  if (problem) return { ok: false, error: problem };

  if (!(await acquire(deadline))) return { ok: false, error: DOCUMENT_ERRORS.busy(limits.timeoutMs) };
  try {
    const maxChars = Math.max(0, Math.floor(limits.maxChars));
    const outcome = await runSandboxed(WORKER, {
      args: [kind, String(maxChars), String(maxInflatedMb(limits) * 1024 * 1024)],
      stdin: input.bytes,
      denoFlags: ["--unsafe-proto"],
      timeoutMs: deadline - Date.now(),
      maxHeapMb: limits.maxHeapMb,
      maxRssMb: limits.maxHeapMb + DOCUMENT_RSS_ALLOWANCE_MB,
      // JSON of maxChars characters: at most 6 bytes each (\uXXXX), plus the envelope
      maxStdoutBytes: maxChars * 6 + 4096,
    });
    switch (outcome.kind) {
      case "timeout":
        return { ok: false, error: DOCUMENT_ERRORS.timeout(limits.timeoutMs) };
      case "memory":
        return { ok: false, error: DOCUMENT_ERRORS.memory(limits.maxHeapMb) };
      case "output":
        return { ok: false, error: DOCUMENT_ERRORS.failed("the reader printed more than expected") };
    }
    let answer: ChildAnswer;
    try {
      answer = JSON.parse(new TextDecoder().decode(outcome.stdout));
    } catch {
      const last = outcome.stderr.trim().split("\n").at(-1)?.slice(0, 200) || `exit code ${outcome.code}`;
      return { ok: false, error: DOCUMENT_ERRORS.failed(last) };
    }
    if (answer.ok) return { ok: true, text: answer.text, truncated: answer.truncated };
    return { ok: false, error: FAILURES[answer.failure](limits, answer.detail) };
  } finally {
    release();
  }
}
