/** Waiting on a promise that cannot itself be cancelled, up to an AbortSignal. */

/**
 * Rejects with the signal's reason when it aborts before `promise` settles (the outbound client's
 * `text()` cannot be cancelled, so a timeout must stop the wait); always removes its listener.
 */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}
