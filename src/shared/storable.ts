/**
 * Text from outside that PostgreSQL must store: `text` cannot hold NUL, `jsonb` no unpaired
 * surrogate. Both become U+FFFD, so what was replaced stays visible.
 */

export function storableText(text: string): string {
  return text.toWellFormed().replaceAll("\0", "\uFFFD");
}

/** A parsed JSON value with every string and object key made storable (depth bounded by the caller). */
export function storableJson(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storableJson(v)]));
  }
  return value;
}

/** The deepest nesting of arrays and objects in JSON text, found without parsing it. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}
