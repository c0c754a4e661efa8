/**
 * Builders of real PDF and DOCX files for the document-text tests: small valid files with known
 * text, and hostile ones (an encrypted PDF, a zip-bomb DOCX). Only the tests write these formats;
 * the application reads them with libraries (src/media/documents.ts).
 */
import { createHash } from "node:crypto";
import { zipSync } from "fflate";

const latin1 = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.length;
  return out;
};

// ---------------------------------------------------------------------------------------------
// PDF: Helvetica text, one content stream per page, a classic xref table.

/** A PDF string literal of Latin-1 text (WinAnsiEncoding agrees with Latin-1 on letters like á, ç). */
const pdfString = (s: string) => `(${s.replace(/[\\()]/g, (c) => "\\" + c)})`;

function md5(...parts: Uint8Array[]): Uint8Array {
  const h = createHash("md5");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = Uint8Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = new Uint8Array(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 0xff];
  }
  return out;
}

/** The padding string of the PDF standard security handler. */
const PAD = Uint8Array.from(
  "28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a".match(/../g)!,
  (h) => parseInt(h, 16),
);
const padded = (password: string) => concat([latin1(password), PAD]).slice(0, 32);
const hex = (b: Uint8Array) => `<${Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("")}>`;

/**
 * A PDF whose pages show the given lines (one `Tj` per line, each on its own baseline).
 * `userPassword` encrypts it with the standard security handler (revision 2, RC4 40-bit), so
 * that nothing can be read without the password.
 */
export function buildPdf(pages: string[][], options: { userPassword?: string } = {}): Uint8Array {
  const pageCount = pages.length;
  // Objects: 1 catalog, 2 page tree, 3 font, then per page a page object and its content stream.
  const pageId = (i: number) => 4 + 2 * i;
  const fileId = md5(latin1(`switchboard test pdf ${pageCount} ${pages[0]?.[0] ?? ""}`));
  let objectKey: ((num: number) => Uint8Array) | null = null;
  let encryptDict = "";
  if (options.userPassword !== undefined) {
    const permissions = -4;
    const owner = rc4(md5(padded("owner-" + options.userPassword)).slice(0, 5), padded(options.userPassword));
    const p = new Uint8Array(4);
    new DataView(p.buffer).setInt32(0, permissions, true);
    const key = md5(padded(options.userPassword), owner, p, fileId).slice(0, 5);
    const user = rc4(key, PAD);
    objectKey = (num) => md5(key, Uint8Array.of(num & 0xff, (num >> 8) & 0xff, num >> 16, 0, 0)).slice(0, 10);
    encryptDict = `<< /Filter /Standard /V 1 /R 2 /O ${hex(owner)} /U ${hex(user)} /P ${permissions} >>`;
  }
  const objects: Uint8Array[] = [];
  objects[1] = latin1("<< /Type /Catalog /Pages 2 0 R >>");
  const kids = pages.map((_, i) => `${pageId(i)} 0 R`).join(" ");
  objects[2] = latin1(`<< /Type /Pages /Kids [${kids}] /Count ${pageCount} >>`);
  objects[3] = latin1("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
  pages.forEach((lines, i) => {
    const id = pageId(i);
    objects[id] = latin1(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${
        id + 1
      } 0 R >>`,
    );
    const ops = lines.map((line) => `${pdfString(line)} Tj T*`).join("\n");
    let content = latin1(`BT /F1 12 Tf 16 TL 72 720 Td\n${ops}\nET`);
    if (objectKey) content = rc4(objectKey(id + 1), content);
    objects[id + 1] = concat([
      latin1(`<< /Length ${content.length} >>\nstream\n`),
      content,
      latin1("\nendstream"),
    ]);
  });
  const encryptId = objects.length;
  if (encryptDict) objects[encryptId] = latin1(encryptDict);

  const parts: Uint8Array[] = [latin1("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")];
  let offset = parts[0].length;
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = offset;
    const body = concat([latin1(`${id} 0 obj\n`), objects[id], latin1("\nendobj\n")]);
    parts.push(body);
    offset += body.length;
  }
  const xref = ["xref", `0 ${objects.length}`, "0000000000 65535 f "];
  for (let id = 1; id < objects.length; id++) xref.push(`${String(offsets[id]).padStart(10, "0")} 00000 n `);
  const encrypt = encryptDict ? ` /Encrypt ${encryptId} 0 R` : "";
  const trailer = `trailer\n<< /Size ${objects.length} /Root 1 0 R${encrypt} /ID [${hex(fileId)} ${
    hex(fileId)
  }] >>\nstartxref\n${offset}\n%%EOF\n`;
  parts.push(latin1(xref.join("\n") + "\n" + trailer));
  return concat(parts);
}

// ---------------------------------------------------------------------------------------------
// DOCX: the three parts Word needs, zipped with fflate.

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
const RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;
const DOC_OPEN =
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`;
const DOC_CLOSE = `</w:body></w:document>`;
const xmlText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The XML of one paragraph; each run is a `<w:r><w:t>` (a "\t" in a run becomes `<w:tab/>`). */
export function docxParagraph(...runs: string[]): string {
  const body = runs.map((run) =>
    `<w:r>${
      run.split("\t").map((t) => `<w:t xml:space="preserve">${xmlText(t)}</w:t>`).join("<w:tab/>")
    }</w:r>`
  ).join("");
  return `<w:p>${body}</w:p>`;
}

/** A DOCX whose body is the given paragraphs (strings, or XML from docxParagraph). */
export function buildDocx(paragraphs: string[]): Uint8Array {
  const body = paragraphs.map((p) => p.startsWith("<w:p>") ? p : docxParagraph(p)).join("");
  const enc = new TextEncoder();
  return zipSync({
    "[Content_Types].xml": enc.encode(CONTENT_TYPES),
    "_rels/.rels": enc.encode(RELS),
    "word/document.xml": enc.encode(DOC_OPEN + body + DOC_CLOSE),
  });
}

// ---------------------------------------------------------------------------------------------
// Zip bomb: a DOCX whose word/document.xml inflates to `inflatedBytes` (GBs) from about
// inflatedBytes / 1032 bytes of deflate data, written by hand so the test never holds the
// inflated text. The deflate stream: a stored block with the XML prefix, a dynamic-Huffman block
// of one literal "a" followed by copies of 258 bytes at distance 1 (2 bits each), and a final
// stored block with the XML suffix.

class BitWriter {
  bytes: number[] = [];
  #bit = 0;
  #cur = 0;
  /** `n` bits of `value`, least significant first (deflate's order for header fields). */
  bits(value: number, n: number) {
    for (let i = 0; i < n; i++) {
      this.#cur |= ((value >> i) & 1) << this.#bit;
      if (++this.#bit === 8) this.bytes.push(this.#cur), this.#cur = 0, this.#bit = 0;
    }
  }
  /** A Huffman code of `n` bits, most significant first. */
  code(code: number, n: number) {
    for (let i = n - 1; i >= 0; i--) this.bits((code >> i) & 1, 1);
  }
  align() {
    if (this.#bit) this.bytes.push(this.#cur), this.#cur = 0, this.#bit = 0;
  }
  get aligned() {
    return this.#bit === 0;
  }
}

function storedBlock(w: BitWriter, data: Uint8Array, final: boolean) {
  w.bits(final ? 1 : 0, 1);
  w.bits(0, 2);
  w.align();
  w.bits(data.length, 16);
  w.bits(~data.length & 0xffff, 16);
  for (const b of data) w.bits(b, 8);
}

function bombDeflate(prefix: Uint8Array, copies: number, suffix: Uint8Array): Uint8Array {
  const w = new BitWriter();
  storedBlock(w, prefix, false);
  // Dynamic block: literal/length codes 285 -> "0", "a" (97) -> "10", end (256) -> "11";
  // one distance code (0, distance 1) -> "0". Code-length codes: 18 -> "0", 1 -> "10", 2 -> "11".
  w.bits(0, 1);
  w.bits(2, 2);
  w.bits(286 - 257, 5);
  w.bits(0, 5);
  w.bits(19 - 4, 4);
  const order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
  const clLen: Record<number, number> = { 18: 1, 1: 2, 2: 2 };
  for (const sym of order) w.bits(clLen[sym] ?? 0, 3);
  const zeros = (n: number) => (w.code(0, 1), w.bits(n - 11, 7)); // symbol 18: 11..138 zeros
  zeros(97); // 0..96
  w.code(0b11, 2); // 97: length 2
  zeros(138), zeros(20); // 98..255
  w.code(0b11, 2); // 256: length 2
  zeros(28); // 257..284
  w.code(0b10, 2); // 285: length 1
  w.code(0b10, 2); // distance 0: length 1
  w.code(0b10, 2); // literal "a"
  // Each copy is two zero bits: write whole zero bytes once aligned.
  let left = copies;
  while (left > 0 && !w.aligned) w.code(0, 2), left--;
  const zeroBytes = Math.floor(left / 4);
  const head = w.bytes;
  w.bytes = [];
  for (let i = 0; i < left % 4; i++) w.code(0, 2);
  w.code(0b11, 2); // end of block
  storedBlock(w, suffix, true);
  w.align();
  return concat([Uint8Array.from(head), new Uint8Array(zeroBytes), Uint8Array.from(w.bytes)]);
}

const crcTable = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

type ZipEntry = { name: string; data: Uint8Array; method: 0 | 8; crc: number; size: number };

/** A zip of entries whose compressed data, CRC and declared uncompressed size are given as is. */
function rawZip(entries: ZipEntry[]): Uint8Array {
  const enc = new TextEncoder();
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = enc.encode(e.name);
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true);
    local.setUint16(8, e.method, true);
    local.setUint32(14, e.crc, true);
    local.setUint32(18, e.data.length, true);
    local.setUint32(22, e.size, true);
    local.setUint16(26, name.length, true);
    const central = new DataView(new ArrayBuffer(46));
    central.setUint32(0, 0x02014b50, true);
    central.setUint16(4, 20, true);
    central.setUint16(6, 20, true);
    central.setUint16(10, e.method, true);
    central.setUint32(16, e.crc, true);
    central.setUint32(20, e.data.length, true);
    central.setUint32(24, e.size, true);
    central.setUint16(28, name.length, true);
    central.setUint32(42, offset, true);
    locals.push(new Uint8Array(local.buffer), name, e.data);
    centrals.push(new Uint8Array(central.buffer), name);
    offset += 30 + name.length + e.data.length;
  }
  const cd = concat(centrals);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, cd.length, true);
  end.setUint32(16, offset, true);
  return concat([...locals, cd, new Uint8Array(end.buffer)]);
}

/**
 * A DOCX whose word/document.xml inflates to about `inflatedBytes` (up to 4 GB). `declared`:
 * "honest" writes the real size in the zip headers, "small" claims 1 KB (a lying bomb).
 */
export function buildZipBombDocx(inflatedBytes: number, declared: "honest" | "small"): Uint8Array {
  const enc = new TextEncoder();
  const prefix = enc.encode(DOC_OPEN + "<w:p><w:r><w:t>");
  const suffix = enc.encode("</w:t></w:r></w:p>" + DOC_CLOSE);
  const copies = Math.ceil((inflatedBytes - prefix.length - suffix.length - 1) / 258);
  const size = prefix.length + 1 + copies * 258 + suffix.length;
  if (size > 0xffffffff) throw new Error("a zip bomb above 4 GB needs zip64");
  const stored = (name: string, text: string): ZipEntry => {
    const data = enc.encode(text);
    return { name, data, method: 0, crc: crc32(data), size: data.length };
  };
  return rawZip([
    stored("[Content_Types].xml", CONTENT_TYPES),
    stored("_rels/.rels", RELS),
    {
      name: "word/document.xml",
      data: bombDeflate(prefix, copies, suffix),
      method: 8,
      crc: 0, // never checked: nothing gets that far
      size: declared === "honest" ? size : 1024,
    },
  ]);
}
