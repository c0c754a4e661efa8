/**
 * Stand-ins for the media tests, on 127.0.0.1: the WhatsApp Graph API's media endpoints (the real
 * retrieve-media answer `{ url, mime_type, sha256, file_size, id, messaging_product }`, then the
 * file at `url` with the bearer token) beside its send endpoint, and an OpenAI-compatible server with
 * the transcription endpoint (which, like the real one, refuses a `.oga` file name with 400) and
 * chat completions (recording image parts). Also small real PDF and DOCX files.
 */
import { createHash } from "node:crypto";
import { chatCompletion } from "./conversations.ts";

export interface StoredFile {
  bytes: Uint8Array;
  mimeType: string;
  /** Answers of `GET /{mediaId}` to give first (then the description), e.g. [500, 500]. */
  failFirst?: number[];
  /** The size the description claims (default: the real one). */
  claimedSize?: number;
  /** The sha256 the description claims (default: the real one, hex). */
  sha256?: string;
  /** The description gives no `mime_type`. */
  noMimeType?: boolean;
}

export interface GraphCall {
  method: string;
  path: string;
  authorization: string | null;
  body: string;
}

export interface MediaGraph {
  url: string;
  files: Map<string, StoredFile>;
  calls: GraphCall[];
  /** The text sends (`POST /{phoneNumberId}/messages`), their bodies parsed. */
  // deno-lint-ignore no-explicit-any
  sends: any[];
  waitForSends(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Waits until `check()` holds, woken by `wake` (each call of the stand-in), at most `timeoutMs`. */
function waiters() {
  const list: Array<() => void> = [];
  return {
    wake: () => list.splice(0).forEach((w) => w()),
    async until(check: () => boolean, timeoutMs: number, what: string) {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((r) => {
          list.push(r);
          timer = setTimeout(r, 200);
        });
        clearTimeout(timer);
      }
    },
  };
}

export function startMediaGraph(): MediaGraph {
  const files = new Map<string, StoredFile>();
  const calls: GraphCall[] = [];
  // deno-lint-ignore no-explicit-any
  const sends: any[] = [];
  const w = waiters();
  let base = "";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const body = await req.text();
    calls.push({ method: req.method, path, authorization: req.headers.get("authorization"), body });
    w.wake();
    if (req.method === "POST" && path.endsWith("/messages")) {
      sends.push(JSON.parse(body));
      w.wake();
      return Response.json({ messaging_product: "whatsapp", messages: [{ id: `wamid.OUT${sends.length}` }] });
    }
    const download = /^\/download\/(.+)$/.exec(path);
    const id = decodeURIComponent(download ? download[1] : path.slice(1));
    const file = files.get(id);
    if (!file) {
      return Response.json({
        error: {
          message: "Unsupported get request.",
          type: "GraphMethodException",
          code: 100,
          error_subcode: 33,
        },
      }, { status: 404 });
    }
    if (!download) {
      const fail = file.failFirst?.shift();
      if (fail) {
        return Response.json({ error: { message: "Service temporarily unavailable", code: 2 } }, {
          status: fail,
        });
      }
      return Response.json({
        url: `${base}/download/${encodeURIComponent(id)}`,
        mime_type: file.noMimeType ? undefined : file.mimeType,
        sha256: file.sha256 ?? hex(file.bytes),
        file_size: file.claimedSize ?? file.bytes.length,
        id,
        messaging_product: "whatsapp",
      });
    }
    if (req.headers.get("authorization") !== "Bearer test-access-token") {
      return new Response("no", { status: 401 });
    }
    // The file's own answer keeps a type that is a valid header value (its description may not).
    const type = /[\r\n]/.test(file.mimeType) ? "application/octet-stream" : file.mimeType;
    return new Response(file.bytes as BodyInit, { headers: { "content-type": type } });
  });
  base = `http://127.0.0.1:${server.addr.port}`;
  return {
    url: base,
    files,
    calls,
    sends,
    waitForSends: (n, timeoutMs = 20_000) => w.until(() => sends.length >= n, timeoutMs, `${n} sends`),
    close: () => server.shutdown(),
  };
}

export interface Transcribed {
  fileName: string;
  model: string;
  mimeType: string;
  size: number;
}

export interface AiStandin {
  baseUrl: string;
  transcriptions: Transcribed[];
  /** Chat completion bodies, as sent. */
  // deno-lint-ignore no-explicit-any
  chats: any[];
  /** Transcripts by the audio's text content (tests make audio files of text). */
  transcripts: Map<string, string>;
  /** When set, transcriptions are answered only once it resolves (a late transcription). */
  gate: Promise<void> | null;
  /** When set, transcriptions answer this status with an error. */
  failWith: number | null;
  waitForChats(n: number, timeoutMs?: number): Promise<void>;
  waitForTranscriptions(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The OpenAI-compatible stand-in; `answer` writes each chat completion's text from its body. */
// deno-lint-ignore no-explicit-any
export function startAi(answer: (body: any) => string): AiStandin {
  const w = waiters();
  const ai: AiStandin = {
    baseUrl: "",
    transcriptions: [],
    chats: [],
    transcripts: new Map(),
    gate: null,
    failWith: null,
    waitForChats: (n, timeoutMs = 20_000) => w.until(() => ai.chats.length >= n, timeoutMs, `${n} chats`),
    waitForTranscriptions: (n, timeoutMs = 20_000) =>
      w.until(() => ai.transcriptions.length >= n, timeoutMs, `${n} transcriptions`),
    close: () => server.shutdown(),
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/v1/audio/transcriptions") {
      const form = await req.formData();
      const file = form.get("file") as File;
      const bytes = new Uint8Array(await file.arrayBuffer());
      ai.transcriptions.push({
        fileName: file.name,
        model: String(form.get("model")),
        mimeType: file.type,
        size: bytes.length,
      });
      w.wake();
      // As the newer transcription models do.
      if (/\.oga$/i.test(file.name)) {
        return Response.json({
          error: { message: "Unsupported file format oga", type: "invalid_request_error" },
        }, { status: 400 });
      }
      if (ai.gate) await ai.gate;
      if (ai.failWith) {
        return Response.json({ error: { message: "transcription backend down" } }, { status: ai.failWith });
      }
      const heard = ai.transcripts.get(new TextDecoder().decode(bytes)) ?? "(inaudible)";
      return Response.json({ text: heard });
    }
    if (path === "/v1/chat/completions") {
      const body = await req.json();
      ai.chats.push(body);
      w.wake();
      return chatCompletion(body, ai.chats.length, {
        content: answer(body),
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      });
    }
    return new Response("not found", { status: 404 });
  });
  ai.baseUrl = `http://127.0.0.1:${server.addr.port}/v1`;
  return ai;
}

/** The text the model was given in the last user message of a chat (its text parts when it has images). */
// deno-lint-ignore no-explicit-any
export function userText(chat: any): string {
  const content = chat.messages.at(-1).content;
  if (typeof content === "string") return content;
  // deno-lint-ignore no-explicit-any
  return content.filter((p: any) => p.type === "text").map((p: any) => p.text).join("\n");
}

/** The image parts of the last user message of a chat. */
// deno-lint-ignore no-explicit-any
export function imageParts(chat: any): string[] {
  const content = chat.messages.at(-1).content;
  if (typeof content === "string") return [];
  // deno-lint-ignore no-explicit-any
  return content.filter((p: any) => p.type === "image_url").map((p: any) => p.image_url.url);
}

const latin1 = (s: string) => new TextEncoder().encode(s);

/** A small valid PDF (one page, Helvetica) whose text is `text` (ASCII, no parentheses). */
export function makePdf(text: string): Uint8Array {
  const stream = `BT /F1 18 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const at of offsets) out += `${String(at).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return latin1(out);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A zip of `entries` stored without compression. */
function zip(entries: Array<[string, string]>): Uint8Array {
  const parts: number[] = [];
  const central: number[] = [];
  const u16 = (a: number[], v: number) => a.push(v & 0xff, (v >>> 8) & 0xff);
  const u32 = (a: number[], v: number) =>
    a.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
  for (const [name, content] of entries) {
    const data = new TextEncoder().encode(content);
    const nameBytes = new TextEncoder().encode(name);
    const crc = crc32(data);
    const offset = parts.length;
    u32(parts, 0x04034b50), u16(parts, 20), u16(parts, 0), u16(parts, 0), u16(parts, 0), u16(parts, 0);
    u32(parts, crc),
      u32(parts, data.length),
      u32(parts, data.length),
      u16(parts, nameBytes.length),
      u16(parts, 0);
    parts.push(...nameBytes, ...data);
    u32(central, 0x02014b50), u16(central, 20), u16(central, 20), u16(central, 0), u16(central, 0);
    u16(central, 0), u16(central, 0), u32(central, crc), u32(central, data.length), u32(central, data.length);
    u16(central, nameBytes.length), u16(central, 0), u16(central, 0), u16(central, 0), u16(central, 0);
    u32(central, 0), u32(central, offset);
    central.push(...nameBytes);
  }
  const end: number[] = [];
  u32(end, 0x06054b50), u16(end, 0), u16(end, 0), u16(end, entries.length), u16(end, entries.length);
  u32(end, central.length), u32(end, parts.length), u16(end, 0);
  return new Uint8Array([...parts, ...central, ...end]);
}

/** A small valid DOCX whose one paragraph is `text`. */
export function makeDocx(text: string): Uint8Array {
  const W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
  return zip([
    [
      "[Content_Types].xml",
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
      "</Types>",
    ],
    [
      "_rels/.rels",
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
      "</Relationships>",
    ],
    [
      "word/document.xml",
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}"><w:body>` +
      `<w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`,
    ],
  ]);
}
