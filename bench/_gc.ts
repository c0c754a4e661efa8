/**
 * The bench process' own garbage collection, kept out of the rounds. The stand-ins answer from this
 * process, so a pause of its collector delays their answers, and the delay is counted as the
 * platform's time. The bench task runs with `--no-memory-reducer` (as the server does: V8's memory
 * reducer started a full collection with a 20-57 ms pause when a round began after a quiet spell)
 * and `--expose-gc`, so that a full collection is made here between rounds instead.
 */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
