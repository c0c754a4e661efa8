/**
 * Work shared by the subscribers one live event reaches in this process: the same credential
 * checked, or the same row read with the same role and selection, once per event rather than once
 * per subscriber. Kept as long as the event object is (until every subscriber has handled it).
 */
import type { LiveEvent } from "./hub.ts";

const memo = new WeakMap<LiveEvent, Map<string, Promise<unknown>>>();

/** `compute()` once per event and key; every caller with that key gets the same promise. */
export function oncePerEvent<T>(event: LiveEvent, key: string, compute: () => Promise<T>): Promise<T> {
  let byKey = memo.get(event);
  if (!byKey) memo.set(event, byKey = new Map());
  let value = byKey.get(key) as Promise<T> | undefined;
  if (!value) byKey.set(key, value = compute());
  return value;
}
