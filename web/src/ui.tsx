/// <reference lib="dom" />
/**
 * Small pieces shared by the screens. Every text from customers, models and receivers is rendered
 * as a text node by Preact (never as HTML): nothing here sets innerHTML.
 */
import { createContext } from "preact";
import { useContext, useEffect, useRef } from "preact/hooks";
import type { CombinedError } from "@urql/core";
import { type Api, errorText } from "./graphql.ts";

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

/** A status as a small badge (OPEN, HUMAN, CLOSED, PENDING...). */
export const Badge = ({ value }: { value: string }) => (
  <span class={`badge badge-${value.toLowerCase()}`}>{value}</span>
);

/** Credits with as many decimals as they carry (0.675), at most four. */
export const formatCredits = (n: number) => String(Math.round(n * 10_000) / 10_000);
