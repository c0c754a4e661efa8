/**
 * Voice notes to text through the OpenAI-compatible `POST /audio/transcriptions` (the `openai`
 * client's transcription call, llm/openai.ts), with TRANSCRIPTION_MODEL. The upload's file name
 * tells the endpoint the format, and newer models refuse names they do not list: WhatsApp's voice
 * notes are `audio/ogg` (Opus), whose usual `.oga` name is refused, while `.ogg` is accepted for the
 * same bytes. So the name is chosen here from the mime type, never taken from the sender.
 */
import type { LanguageModel } from "../llm/client.ts";

/**
 * The extension sent for each audio mime type WhatsApp delivers (audio/aac, audio/amr, audio/mpeg,
 * audio/mp4, audio/ogg) and the common others, among the names the endpoint lists (flac, m4a, mp3,
 * mp4, mpeg, mpga, ogg, wav, webm). AAC goes as m4a: the endpoint reads the content, the name only
 * has to be one it lists. AMR has no listed name: it keeps its own and the endpoint decides.
 */
const EXTENSIONS: Record<string, string> = {
  "audio/ogg": "ogg",
  "audio/opus": "ogg",
  "application/ogg": "ogg",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/mpga": "mpga",
  "audio/mp4": "m4a",
  "audio/m4a": "m4a",
  "audio/x-m4a": "m4a",
  "audio/aac": "m4a",
  "audio/wav": "wav",
  "audio/wave": "wav",
  "audio/x-wav": "wav",
  "audio/webm": "webm",
  "audio/flac": "flac",
  "audio/x-flac": "flac",
  "video/mp4": "mp4",
  "video/webm": "webm",
  "audio/amr": "amr",
};

/** The bare mime type, lowercased: `audio/ogg; codecs=opus` → `audio/ogg`. */
export function bareMimeType(mimeType: string | null | undefined): string {
  return (mimeType ?? "").split(";")[0].trim().toLowerCase();
}

/** The upload's file name for audio of `mimeType` (`voice-note.ogg`); unknown types go as ogg, WhatsApp's own. */
export function transcriptionFileName(mimeType: string | null | undefined): string {
  return `voice-note.${EXTENSIONS[bareMimeType(mimeType)] ?? "ogg"}`;
}

export type TranscriptOutcome = { ok: true; transcript: string } | { ok: false; error: string };

/** The transcript of one audio file, or why there is none (a line to keep as `media.error`). */
export async function transcribe(
  llm: LanguageModel,
  input: { bytes: Uint8Array; mimeType: string | null },
  options: { model: string; timeoutMs: number },
): Promise<TranscriptOutcome> {
  const mimeType = bareMimeType(input.mimeType) || "audio/ogg";
  const result = await llm.transcribe({
    model: options.model,
    bytes: input.bytes,
    fileName: transcriptionFileName(mimeType),
    mimeType,
  }, { timeoutMs: options.timeoutMs });
  if (!result.ok) return { ok: false, error: `not transcribed: ${result.message}` };
  return { ok: true, transcript: result.text.trim() };
}
