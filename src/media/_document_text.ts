/**
 * What the document reader and its child process share: text normalisation, truncation, and the
 * child's answer on standard output.
 */

/** Why the child could not give text (documents.ts turns each into a readable message). */
export type ChildFailure =
  | "encrypted"
  | "damaged_pdf"
  | "damaged_docx"
  | "bad_word_xml"
  | "not_word"
  | "zip_bomb"
  | "no_text"
  | "failed";

/** The one JSON line the child prints. */
export type ChildAnswer =
  | { ok: true; text: string; truncated: boolean }
  | { ok: false; failure: ChildFailure; detail?: string };

// Horizontal white space (tab, no-break and the other Unicode spaces) collapses to one space.
const SPACES = /[\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+/g;
// Line breaks of every kind become "\n" (NEL U+0085, vertical tab, form feed, U+2028/2029).
// deno-lint-ignore no-control-regex
const BREAKS = /\r\n?|[\u000b\u000c\u0085\u2028\u2029]/g;
// Control characters (NUL included, which PostgreSQL text cannot hold) and the byte order mark go.
// deno-lint-ignore no-control-regex
const CONTROLS = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f\ufeff]/g;

/**
 * Text as the model should read it: well-formed UTF-16 (a lone surrogate becomes U+FFFD), no
 * control characters, runs of spaces collapsed, no spaces at line ends, paragraph breaks kept as
 * one blank line (three or more line breaks become two), trimmed.
 */
export function normalizeDocumentText(raw: string): string {
  return raw
    .toWellFormed()
    .replace(BREAKS, "\n")
    .replace(CONTROLS, "")
    .replace(SPACES, " ")
    .replace(/ ?\n ?/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** The first `maxChars` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair. */
export function truncateText(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  let cut = Math.max(0, maxChars);
  const last = text.charCodeAt(cut - 1);
  if (cut > 0 && last >= 0xd800 && last <= 0xdbff) cut--;
  return { text: text.slice(0, cut), truncated: true };
}
