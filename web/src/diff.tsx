/// <reference lib="dom" />
/**
 * Before/after shown line by line (jsdiff's `diffLines`): a prompt's edit reads as the lines it
 * removes and adds. Values that are not text are shown as indented JSON, diffed the same way.
 * Two answers are compared word by word (jsdiff's `diffWordsWithSpace`), each shown whole.
 */
import { diffLines, diffWordsWithSpace } from "diff";

/** The text form of a field's value: text as it is, anything else as indented JSON. */
const textOf = (value: unknown): string =>
  value === undefined || value === null
    ? ""
    : typeof value === "string"
    ? value
    : JSON.stringify(value, null, 2);

/** A line diff of two texts. */
export function LineDiff({ before, after, label }: { before: string; after: string; label?: string }) {
  const parts = diffLines(before, after);
  return (
    <div class="diff" role="group" aria-label={label ?? "Changes"}>
      {parts.flatMap((part, i) => {
        const kind = part.added ? "added" : part.removed ? "removed" : "same";
        const lines = part.value.replace(/\n$/, "").split("\n");
        return lines.map((line, j) => <div key={`${i}-${j}`} class={kind}>{line || " "}</div>);
      })}
    </div>
  );
}

/** The fields of a snapshot (a JSON object); none for null. */
const fieldsOf = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" ? value as Record<string, unknown> : {};

/**
 * The fields an approval changes: each field whose value differs, as a line diff of its before
 * and after (a create has no before, a delete no after). Both are the API's JSON snapshots.
 */
export function ChangeDiff({ before, after }: { before: unknown; after: unknown }) {
  const [was, is] = [fieldsOf(before), fieldsOf(after)];
  const keys = [...new Set([...Object.keys(was), ...Object.keys(is)])];
  const changed = keys.filter((k) => textOf(was[k]) !== textOf(is[k]));
  if (!after) {
    return (
      <div>
        <p class="diff-field">Deletes:</p>
        <LineDiff before={textOf(before)} after="" label="Deleted" />
      </div>
    );
  }
  return (
    <div>
      {changed.map((k) => (
        <div key={k}>
          <p class="diff-field">{k}</p>
          <LineDiff before={textOf(was[k])} after={textOf(is[k])} label={`Changes of ${k}`} />
        </div>
      ))}
    </div>
  );
}

/** A run of an answer's text: the same in both, or only in this one. */
export interface WordPart {
  text: string;
  changed: boolean;
}

/**
 * Two texts word by word, each as its own runs: `before`'s runs joined are `before` exactly, and
 * `after`'s are `after` (jsdiff's `diffWordsWithSpace` keeps every space and line break, where
 * `diffWords` may give one text's spacing to the other). A change of spacing alone is not marked:
 * it cannot be seen.
 */
export function wordDiff(before: string, after: string): { before: WordPart[]; after: WordPart[] } {
  const out = { before: [] as WordPart[], after: [] as WordPart[] };
  for (const part of diffWordsWithSpace(before, after)) {
    const changed = (part.added || part.removed) && /\S/.test(part.value);
    const run = { text: part.value, changed };
    if (!part.added) out.before.push(run);
    if (!part.removed) out.after.push(run);
  }
  return out;
}

/** A text with its changed runs marked: removed words as <del>, added ones as <ins>. */
export function MarkedText({ parts, mark }: { parts: WordPart[]; mark: "del" | "ins" }) {
  const Mark = mark;
  return <>{parts.map((p, i) => p.changed ? <Mark key={i}>{p.text}</Mark> : p.text)}</>;
}
