/** The inputs of saved replies (docs/behaviour.md "Saved replies"). */
import { z } from "zod";

/**
 * A shortcut as typed after `/` in "Reply": a leading `/` and surrounding spaces are dropped and
 * letters lowercased (so `/Thanks` and `thanks` are one shortcut), then 1 to 32 letters, digits,
 * `-` or `_`.
 */
const shortcut = z.string().trim().transform((s) => s.replace(/^\//, "").toLowerCase()).pipe(
  z.string().regex(/^[a-z0-9_-]{1,32}$/, "1 to 32 letters, digits, - or _ (after an optional /)"),
).describe('What follows `/` in "Reply": 1 to 32 letters, digits, `-` or `_`; stored lowercased.');

/** The text inserted, as a person's reply takes it (trimmed, 1 to 4096 characters). */
const content = z.string().trim().min(1, "must not be empty").max(4096).describe(
  'The text inserted in "Reply" (1 to 4096 characters, as a reply takes).',
);

export const createSavedReplySchema = z.strictObject({ shortcut, content });

export const updateSavedReplySchema = z.strictObject({
  shortcut: shortcut.optional(),
  content: content.optional(),
});
