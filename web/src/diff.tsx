/// <reference lib="dom" />
/**
 * Before/after shown line by line (jsdiff's `diffLines`): a prompt's edit reads as the lines it
 * removes and adds. Values that are not text are shown as indented JSON, diffed the same way.
 */
import { diffLines } from "diff";

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

/**
 * The fields an approval changes: each field whose value differs, as a line diff of its before
 * and after (a create has no before, a delete no after).
 */
export function ChangeDiff(
  { before, after }: { before: Record<string, unknown> | null; after: Record<string, unknown> | null },
) {
  const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  const changed = keys.filter((k) => textOf(before?.[k]) !== textOf(after?.[k]));
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
          <LineDiff before={textOf(before?.[k])} after={textOf(after?.[k])} label={`Changes of ${k}`} />
        </div>
      ))}
    </div>
  );
}
