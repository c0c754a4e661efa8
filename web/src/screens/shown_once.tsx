/// <reference lib="dom" />
/**
 * A secret the API gives out once (an invite link, an API token's value): shown read-only with
 * "Copy", and a sentence saying it will not be shown again. The page keeps it only while this
 * screen is open.
 */
import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";

export function ShownOnce(
  { label, value, children }: { label: string; value: string; children: ComponentChildren },
) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("Copied.");
    } catch {
      // No clipboard for this page (an http origin other than localhost, or refused): select it instead.
      input.current?.select();
      setCopied("Selected: copy it with Ctrl+C (⌘C on a Mac).");
    }
  };
  return (
    <div class="shown-once" role="region" aria-label={`${label} (shown once)`}>
      <label>
        {label}
        <input ref={input} readOnly value={value} onFocus={(e) => (e.target as HTMLInputElement).select()} />
      </label>
      <div class="buttons">
        <button type="button" class="secondary" onClick={copy}>Copy</button>
        {copied && <span class="muted" role="status">{copied}</span>}
      </div>
      <p class="muted">{children}</p>
    </div>
  );
}
