/// <reference lib="dom" />
/**
 * WhatsApp's customer service window as the console shows it: the time left until `closesAt`,
 * counted down on this page's clock between reads (the server's `open` says whether it was open
 * when read, `closesAt` when it closes unless the customer writes again). API channels have no
 * window (`closesAt` null and always open).
 */
import { useEffect, useState } from "preact/hooks";

export interface ConversationWindow {
  open: boolean;
  closesAt: string | null;
}

/** NONE: no window (an API channel); OPEN with the time left; CLOSED. */
export type WindowState = { kind: "NONE" } | { kind: "OPEN"; leftMs: number } | { kind: "CLOSED" };

/** The window at `now` (ms): closed when the server said so or once `closesAt` has passed. */
export function windowAt(w: ConversationWindow, now: number): WindowState {
  if (!w.open) return { kind: "CLOSED" };
  if (w.closesAt === null) return { kind: "NONE" };
  const leftMs = Date.parse(w.closesAt) - now;
  return leftMs > 0 ? { kind: "OPEN", leftMs } : { kind: "CLOSED" };
}

/** "3 h 12 min", "12 min", or "less than a minute" (whole minutes, rounded down). */
export function timeLeft(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "less than a minute";
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h > 0 ? `${h} h ${m} min` : `${m} min`;
}

/**
 * The window now, rendered again each time the minutes shown change (and when it closes): one
 * timer at a time, set for the next change, so the count needs no new read.
 */
export function useWindow(w: ConversationWindow): WindowState {
  const [now, setNow] = useState(() => Date.now());
  const state = windowAt(w, now);
  const leftMs = state.kind === "OPEN" ? state.leftMs : null;
  useEffect(() => {
    if (leftMs === null || w.closesAt === null) return;
    const tick = () => setNow(Date.now());
    // Measured again here: the effect may run a while after its render (a busy or sleeping page).
    const left = Date.parse(w.closesAt) - Date.now();
    if (Math.floor(left / 60_000) !== Math.floor(leftMs / 60_000)) {
      tick();
      return;
    }
    const timer = setTimeout(tick, (left % 60_000) + 1);
    return () => clearTimeout(timer);
  }, [leftMs]);
  // A new read (the customer wrote again) is measured against the time of that render.
  useEffect(() => setNow(Date.now()), [w.open, w.closesAt]);
  return state;
}
