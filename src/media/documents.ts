/**
 * Text of PDF and DOCX documents. A stub with the agreed interface, so the media pipeline compiles
 * before the real extraction lands: every document answers "unavailable".
 */

export interface DocumentLimits {
  maxChars: number;
  timeoutMs: number;
  maxHeapMb: number;
}

export type DocumentText = { ok: true; text: string; truncated: boolean } | { ok: false; error: string };

const PDF = "application/pdf";
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/** Whether the document is a PDF or DOCX (by its mime type, or its file name's extension). */
export function isExtractable(mimeType: string, fileName?: string | null): boolean {
  const type = mimeType.split(";")[0].trim().toLowerCase();
  if (type === PDF || type === DOCX) return true;
  return /\.(pdf|docx)$/i.test(fileName ?? "");
}

/** The document's text, at most `limits.maxChars` characters. */
export function extractDocumentText(
  _input: { bytes: Uint8Array; mimeType: string; fileName?: string | null },
  _limits: DocumentLimits,
): Promise<DocumentText> {
  return Promise.resolve({ ok: false, error: "document text extraction unavailable" });
}
