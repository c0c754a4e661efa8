/**
 * Request bodies, for REST and GraphQL alike: 413 PAYLOAD_TOO_LARGE over 1 MiB,
 * 400 INVALID_UTF8 for text that is not UTF-8 (never stored with U+FFFD in place of the bytes),
 * 400 MALFORMED_BODY for a body the transport cannot deliver (a broken chunked encoding).
 */
import { AppError } from "./errors.ts";
import { concatBytes } from "./bytes.ts";
import { ClientGoneError, currentScope } from "./request_scope.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

const tooLarge = () => new AppError("PAYLOAD_TOO_LARGE", 413, `The body is over ${MAX_BODY_BYTES} bytes.`);

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text: 400 INVALID_UTF8 unless it is valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new AppError("INVALID_UTF8", 400, "The body is not valid UTF-8.");
  }
}

/** The whole body, at most MAX_BODY_BYTES; empty when there is none. */
export async function readBody(req: Request): Promise<Uint8Array<ArrayBuffer>> {
  if (!req.body) return new Uint8Array();
  try {
    return await readWhole(req);
  } catch (e) {
    if (e instanceof AppError) throw e;
    // The runtime could not deliver the body: the client went away, or sent a broken encoding.
    if (currentScope()?.signal.aborted || req.signal.aborted) throw new ClientGoneError();
    throw new AppError(
      "MALFORMED_BODY",
      400,
      "The body could not be read (broken transfer encoding or cut short).",
    );
  }
}

async function readWhole(req: Request): Promise<Uint8Array<ArrayBuffer>> {
  if (!req.body) return new Uint8Array();
  const length = req.headers.get("content-length");
  if (length === null) return await readCapped(req.body);
  if (Number(length) > MAX_BODY_BYTES) throw tooLarge();
  // A declared length within the limit: the runtime reads it in one go, much cheaper than a
  // reader loop. The size is checked again, for a Request built in-process with a wrong header.
  const body = new Uint8Array(await req.arrayBuffer());
  if (body.length > MAX_BODY_BYTES) throw tooLarge();
  return body;
}

/** Without a declared length (chunked): stops at the limit, so a huge upload is never buffered whole. */
async function readCapped(stream: ReadableStream<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return concatBytes(chunks, size);
}
