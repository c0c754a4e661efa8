/**
 * The live replies under way in this process, so that work that can wait gives way to them: a
 * replay's model call (src/replay/run.ts) waits while `busyAt` or more replies are being made here,
 * and goes on as soon as one ends below that. Under a light load it never waits; under a load near
 * what the reply workers take at once, the customers' replies have the process to themselves.
 */
export class LiveReplies {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly busyAt: number) {}

  /** Runs one live reply, counted while it runs. */
  async run<T>(reply: () => Promise<T>): Promise<T> {
    this.#running++;
    try {
      return await reply();
    } finally {
      this.#running--;
      while (this.#running < this.busyAt && this.#waiting.length) this.#waiting.shift()!();
    }
  }

  /** Resolves once fewer than `busyAt` live replies are under way. */
  room(): Promise<void> {
    if (this.#running < this.busyAt) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  get running(): number {
    return this.#running;
  }
}
