/// <reference lib="dom" />
/**
 * Before/after of an approval, field by field: each field under its label, with its value before
 * and after, read as a person reads it (lists, headers, required fields), never as JSON. Long texts
 * (a prompt, a training context, a description) are shown line by line (jsdiff's `diffLines`, a
 * missing final newline not counted as a change). Two answers are compared word by word (jsdiff's
 * `diffWordsWithSpace`), each shown whole.
 */
import type { ComponentChildren } from "preact";
import { diffLines, diffWordsWithSpace } from "diff";

/** A line diff of two texts. A line differing only by its final newline is the same line. */
export function LineDiff({ before, after, label }: { before: string; after: string; label?: string }) {
  const parts = diffLines(before, after, { ignoreNewlineAtEof: true });
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

/** What the fields of the API's snapshots are called on screen; others by their name, spaced. */
const FIELD_LABELS: Record<string, string> = {
  systemPrompt: "Prompt",
  trainingContext: "Training context",
  status: "Status",
  name: "Name",
  description: "Description",
  triggerOnTypes: "Triggered by",
  requiredFields: "Required fields",
  webhookUrl: "Webhook URL",
  webhookMethod: "Webhook method",
  event: "Event",
  url: "URL",
  method: "Method",
  headers: "Headers",
};

export const fieldLabel = (key: string): string =>
  FIELD_LABELS[key] ?? key.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/^./, (c) => c.toUpperCase());

/** Fields of free text, shown line by line when they change. */
const TEXT_FIELDS = new Set(["systemPrompt", "trainingContext", "description"]);

/** The fields of a snapshot (a JSON object); none for null. */
const fieldsOf = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};

const isEmpty = (v: unknown) =>
  v === undefined || v === null || v === "" || (Array.isArray(v) && !v.length) ||
  (typeof v === "object" && v !== null && !Object.keys(v).length);

/** A comparable form of a value, to find the fields that changed. */
const keyOf = (v: unknown): string => isEmpty(v) ? "" : typeof v === "string" ? v : JSON.stringify(v);

/** A required field of an intent (`{ name, type, description }`), or any named object, in words. */
function namedItem(item: Record<string, unknown>): string {
  const { name, type, description, ...rest } = item;
  const head = [name, type ? `(${type})` : ""].filter(Boolean).join(" ");
  const tail = [description, ...Object.entries(rest).map(([k, v]) => `${fieldLabel(k)}: ${plain(v)}`)]
    .filter((x) => !isEmpty(x));
  return tail.length ? `${head}: ${tail.join("; ")}` : String(head);
}

/** A value in words, on one line (a nested part of a value). */
function plain(v: unknown): string {
  if (isEmpty(v)) return "none";
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (Array.isArray(v)) return v.map(plain).join(", ");
  if (typeof v === "object") {
    return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${plain(x)}`).join("; ");
  }
  return String(v);
}

/** A field's value as a person reads it: text, yes/no, a list, header lines; "none" when empty. */
export function FieldValue({ value }: { value: unknown }): preact.JSX.Element {
  if (isEmpty(value)) return <span class="none">none</span>;
  if (typeof value === "string") return <span class="text">{value}</span>;
  if (Array.isArray(value)) {
    return (
      <ul class="values">
        {value.map((item, i) => (
          <li key={i}>
            {item !== null && typeof item === "object" && !Array.isArray(item)
              ? namedItem(item as Record<string, unknown>)
              : plain(item)}
          </li>
        ))}
      </ul>
    );
  }
  if (typeof value === "object") {
    return (
      <ul class="values">
        {Object.entries(value as Record<string, unknown>).map(([k, v]) => <li key={k}>{k}: {plain(v)}</li>)}
      </ul>
    );
  }
  return <span>{plain(value)}</span>;
}

/** One labelled field: its values under "Before" and "After" (one of them alone for a create or delete). */
function Field({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="change-field" role="group" aria-label={label}>
      <dt>{label}</dt>
      {children}
    </div>
  );
}

const Side = ({ which, value }: { which: "Before" | "After"; value: unknown }) => (
  <dd class={which === "Before" ? "was" : "is"}>
    <span class="side">{which}</span> <FieldValue value={value} />
  </dd>
);

/**
 * The fields an approval changes, from the API's snapshots: for a change, each field whose value
 * differs (free text as a line diff, anything else before and after), with an unchanged name or
 * event first to say which record it is; for a create every field it writes, for a delete every
 * field it removes.
 */
export function ChangeDiff({ before, after }: { before: unknown; after: unknown }) {
  const [was, is] = [fieldsOf(before), fieldsOf(after)];
  const creates = before === null || before === undefined;
  const deletes = after === null || after === undefined;
  if (creates || deletes) {
    const shown = deletes ? was : is;
    const keys = Object.keys(shown).filter((k) => !isEmpty(shown[k]));
    return (
      <div class="change">
        <p class="diff-field">{deletes ? "Deletes:" : "Creates:"}</p>
        <dl class="change-fields">
          {keys.map((k) => (
            <Field key={k} label={fieldLabel(k)}>
              <dd class={deletes ? "was" : "is"}>
                <FieldValue value={shown[k]} />
              </dd>
            </Field>
          ))}
        </dl>
      </div>
    );
  }
  const keys = [...new Set([...Object.keys(was), ...Object.keys(is)])];
  const changed = keys.filter((k) => keyOf(was[k]) !== keyOf(is[k]));
  const which = ["name", "event"].filter((k) => !changed.includes(k) && !isEmpty(was[k]));
  return (
    <dl class="change-fields">
      {which.map((k) => (
        <Field key={k} label={fieldLabel(k)}>
          <dd class="same">
            <FieldValue value={was[k]} /> <span class="muted">(unchanged)</span>
          </dd>
        </Field>
      ))}
      {changed.map((k) => {
        const label = fieldLabel(k);
        const text = TEXT_FIELDS.has(k) && (typeof was[k] === "string" || typeof is[k] === "string");
        return (
          <Field key={k} label={label}>
            {text
              ? (
                <dd class="lines">
                  <LineDiff
                    before={typeof was[k] === "string" ? was[k] as string : ""}
                    after={typeof is[k] === "string" ? is[k] as string : ""}
                    label={`Changes of ${label}`}
                  />
                </dd>
              )
              : (
                <>
                  <Side which="Before" value={was[k]} />
                  <Side which="After" value={is[k]} />
                </>
              )}
          </Field>
        );
      })}
    </dl>
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
