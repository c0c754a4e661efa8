/**
 * What the model and the intents read of a media message (docs/behaviour.md "Media"): a voice
 * note is its transcript, a PDF or DOCX its text with its name and caption, an image its caption
 * and, with the agent's `enabledVision`, the image itself; a failure is said as such
 * (`[audio: not transcribed]`) so the model can answer anyway. Pure: the reply loads the rows.
 */

/** A stored message as the reply reads it; the media fields are null for other messages. */
export interface UnderstoodMessage {
  type: string;
  content: string;
  media: {
    /** Still being fetched or understood (the reply's wait ran out). */
    pending: boolean;
    error: string | null;
    fileName: string | null;
    caption: string | null;
  } | null;
  transcript: string | null;
  text: string | null;
}

const line = (parts: Array<string | null | undefined>) => parts.filter((p) => p).join(" ");

/**
 * The message as text for the model. `inWindow`: one of the messages this reply answers (a
 * document's text is given then; later replies see its name and caption, so one document does
 * not crowd the history out). `imageShown`: its image goes along as an image part.
 */
export function modelText(
  m: UnderstoodMessage,
  options: { inWindow: boolean; imageShown?: boolean },
): string {
  const media = m.media;
  if (!media) return m.content;
  const failed = media.pending || media.error !== null;
  switch (m.type) {
    case "AUDIO":
      if (m.transcript !== null) return line(["[audio]", m.transcript]);
      return failed ? "[audio: not transcribed]" : m.content;
    case "IMAGE":
      if (options.imageShown) return line(["[image]", media.caption]);
      return line([failed ? "[image: not available]" : "[image]", media.caption]);
    case "DOCUMENT": {
      const label = line([failed ? "[document: not read]" : "[document]", media.fileName, media.caption]);
      if (!options.inWindow || m.text === null) return label;
      return `${label}\n${m.text}`;
    }
    default:
      return m.content;
  }
}

/**
 * The type an intent sees for the message, or null when it may trigger none: AUDIO once
 * transcribed, IMAGE when the model sees the image (vision on), DOCUMENT when it was read (its
 * text, or its name and caption for kinds without text); TEXT and the rest as they are.
 */
export function understoodType(m: UnderstoodMessage, options: { imageShown?: boolean }): string | null {
  const media = m.media;
  if (!media) return m.type;
  const failed = media.pending || media.error !== null;
  switch (m.type) {
    case "AUDIO":
      return m.transcript !== null ? "AUDIO" : null;
    case "IMAGE":
      return options.imageShown ? "IMAGE" : null;
    case "DOCUMENT":
      return failed ? null : "DOCUMENT";
    default:
      return m.type;
  }
}
