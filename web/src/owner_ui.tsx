/// <reference lib="dom" />
/**
 * Pieces of the owner's screens: a delete that asks first (in the page, not a browser dialog, so
 * it reads the same everywhere and the keyboard lands on "Cancel"), and a value to copy once.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";

/**
 * A danger button that asks `question` before `onConfirm`; the question's "Cancel" has the focus,
 * so Enter pressed by habit does not delete.
 */
export function ConfirmButton(
  { label, question, confirm, onConfirm, busy }: {
    label: string;
    question: string;
    /** The confirming button's text ("Delete agent"). */
    confirm: string;
    onConfirm: () => Promise<unknown> | void;
    busy?: boolean;
  },
) {
  const [asking, setAsking] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  // Before the question is painted, so no key pressed meanwhile reaches anything else.
  useLayoutEffect(() => {
    if (asking) cancel.current?.focus();
  }, [asking]);
  if (!asking) {
    return <button type="button" class="danger" onClick={() => setAsking(true)}>{label}</button>;
  }
  return (
    <div class="confirm" role="alertdialog" aria-label={question}>
      <p>{question}</p>
      <div class="buttons">
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={async () => {
            await onConfirm();
            setAsking(false);
          }}
        >
          {confirm}
        </button>
        <button type="button" class="secondary" ref={cancel} onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/**
 * A value to paste elsewhere (a URL, a token, a secret shown once): a read-only field that
 * selects itself when focused, and "Copy" beside it.
 */
export function CopyField({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      // No clipboard (an older browser, permission refused): the field stays there to select.
      setCopied(false);
    }
  };
  return (
    <div class="copy">
      <label>
        {label}
        <input
          readOnly
          value={value}
          spellcheck={false}
          onFocus={(e) => (e.target as HTMLInputElement).select()}
        />
      </label>
      <button type="button" class="secondary" aria-label={`Copy ${label}`} onClick={copy}>
        {copied ? "Copied" : "Copy"}
      </button>
    </div>
  );
}

/** Empty text is null, as the API's optional fields are. */
export const textOrNull = (v: FormDataEntryValue | null) => {
  const s = String(v ?? "").trim();
  return s === "" ? null : s;
};

/** The HTTP methods a URL can be called with, POST (the default) first. */
export function methodsOffered(offered: string[]): string[] {
  return [...["POST", "PUT", "PATCH"].filter((m) => offered.includes(m)), ...offered]
    .filter((m, i, all) => all.indexOf(m) === i);
}
