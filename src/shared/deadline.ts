/**
 * An outbound call's own time limit beside its caller's signal: `signal` aborts at either. After
 * a failure, `timedOut` tells the call's own deadline from the caller's stop (which the callers
 * rethrow instead of reporting as the call's failure).
 */
export class Deadline {
  readonly signal: AbortSignal;
  #timedOut = false;
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(readonly timeoutMs: number, caller?: AbortSignal) {
    const controller = new AbortController();
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    this.signal = caller ? AbortSignal.any([controller.signal, caller]) : controller.signal;
  }

  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** Ends the timer (the call is over). */
  clear(): void {
    clearTimeout(this.#timer);
  }
}
