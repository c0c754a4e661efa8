/**
 * Signed Meta-shaped WhatsApp webhook posts for the benches (bench/load_rate.ts sends them): a text
 * message or a voice note of one NEW sender, carrying a token (`tok:<token>:`) the stand-ins read
 * back. A voice note's media id names its token (`mediaIdOf`), and its file (`voiceNoteBytes`) says
 * it, so the Graph and transcription stand-ins can tie each call to its note.
 */
import { createHash } from "node:crypto";
import { hubSignature } from "../src/channels/whatsapp/signature.ts";

/** What a message is: a text, or a voice note (audio, voice true, `audio/ogg; codecs=opus`). */
export type MessageKind = "text" | "voice";

export const VOICE_MIME_TYPE = "audio/ogg; codecs=opus";

/** The media id of the voice note of `token`. */
export const mediaIdOf = (token: string) => `bench-media.${token}`;
/** The token of a media id made by mediaIdOf (null for anything else). */
export const tokenOfMediaId = (id: string) => id.startsWith("bench-media.") ? id.slice(12) : null;

/**
 * The file of the voice note of `token`: about 4 KB that begin as an Ogg Opus stream does ("OggS",
 * then "OpusHead") and say `tok:<token>:` (the transcription stand-in echoes it).
 */
export function voiceNoteBytes(token: string): Uint8Array<ArrayBuffer> {
  const head = "OggS\u0000\u0002" + "\u0000".repeat(22) + "OpusHead\u0001\u0001\u0038\u0001\u0080\u00bb";
  const body = `${head}tok:${token}: `;
  return new TextEncoder().encode(body.padEnd(4096, "bench voice note audio frames "));
}

/** The hex SHA-256 of `bytes`, as Meta gives it. */
export const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The webhook body of message `i` (token `token`) from sender `from` to `phoneNumberId`. */
export function metaMessageBody(
  opts: { phoneNumberId: string; from: string; i: number; token: string; kind?: MessageKind },
): string {
  const { from, i, token } = opts;
  const part = opts.kind === "voice"
    ? {
      type: "audio",
      audio: {
        mime_type: VOICE_MIME_TYPE,
        sha256: sha256Hex(voiceNoteBytes(token)),
        id: mediaIdOf(token),
        voice: true,
      },
    }
    : { type: "text", text: { body: `tok:${token}: does it come in another color?` } };
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [{
      id: "102290129340398",
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: { display_phone_number: "15550783881", phone_number_id: opts.phoneNumberId },
          contacts: [{ profile: { name: `Customer ${i}` }, wa_id: from }],
          messages: [{ from, id: `wamid.${token}`, timestamp: "1749416383", ...part }],
        },
      }],
    }],
  });
}

/** The headers of a post of `body`: JSON, signed with `appSecret` as Meta signs (none: unsigned). */
export function postHeaders(body: string, appSecret?: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (appSecret) headers["x-hub-signature-256"] = hubSignature(body, appSecret);
  return headers;
}
