/// <reference lib="dom" />
/**
 * Small pieces shared by the screens. Every text from customers, models and receivers is rendered
 * as a text node by Preact (never as HTML): nothing here sets innerHTML.
 */
import { createContext } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";
import type { CombinedError } from "@urql/core";
import type { Session } from "./session.ts";
import { type Api, errorText } from "./graphql.ts";

/** The signed-in session, for what GraphQL does not carry (a media file's bytes). */
export const SessionContext = createContext<Session | null>(null);
export const useSession = () => useContext(SessionContext)!;

/** The console's API (for its live feed's connections). */
export const ApiContext = createContext<Api | null>(null);

/** Calls `reread` whenever the live feed (re)connects: events before that did not reach this screen. */
export function useRereadOnConnect(reread: () => void) {
  const api = useContext(ApiContext);
  // The latest `reread`: it reads with the screen's current variables (a filter chosen since).
  const latest = useRef(reread);
  latest.current = reread;
  useEffect(() => api?.onConnected(() => latest.current()), [api]);
}

/** A timestamp in the reader's locale, with the exact value on hover. */
export function Time({ value }: { value: string }) {
  const d = new Date(value);
  return <time dateTime={value} title={d.toISOString()}>{d.toLocaleString()}</time>;
}

export function ErrorNote({ error }: { error: CombinedError | string | null | undefined }) {
  const text = typeof error === "string" ? error : errorText(error ?? undefined);
  return text ? <p class="error" role="alert">{text}</p> : null;
}

/**
 * A file of the media endpoint as an object URL: the endpoint wants the bearer token, which an
 * `<img src>` cannot send, so the bytes are fetched and shown from memory.
 */
export function useMediaUrl(path: string | null): { url: string | null; error: string | null } {
  const session = useSession();
  const [state, setState] = useState<{ url: string | null; error: string | null }>({
    url: null,
    error: null,
  });
  useEffect(() => {
    if (!path) return;
    let url: string | null = null;
    let live = true;
    fetch(path, {
      headers: { authorization: `Bearer ${session.token}`, "x-workspace-id": session.workspaceId },
    })
      .then(async (res) => {
        if (!res.ok) {
          throw new Error(res.status === 404 ? "The file is no longer available." : `HTTP ${res.status}`);
        }
        url = URL.createObjectURL(await res.blob());
        if (live) setState({ url, error: null });
      })
      .catch((err) => live && setState({ url: null, error: String(err.message ?? err) }));
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [path, session.token, session.workspaceId]);
  return state;
}

/** A status as a small badge (OPEN, HUMAN, CLOSED, PENDING...). */
export const Badge = ({ value }: { value: string }) => (
  <span class={`badge badge-${value.toLowerCase()}`}>{value}</span>
);
