/// <reference lib="dom" />
/**
 * Screens live behind the hash (`#/conversations/...`), so the server serves one page at `/` and
 * the browser's back button and links work without more routes.
 */
import { useEffect, useState } from "preact/hooks";

/** The current hash path split into its parts: `#/agents/a1` → ["agents", "a1"]. */
export function useRoute(): string[] {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
}

/** The href of a screen: href("agents", id) → "#/agents/id". */
export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join("/")}`;

export const navigate = (...parts: string[]) => {
  location.hash = href(...parts);
};
