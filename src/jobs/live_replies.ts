/**
 * The live work under way in this process (replies, and customers' WhatsApp posts being stored), so
 * that work that can wait gives way to it: each step of a replay (src/replay/run.ts: a model call,
 * the writing of a case) waits until nothing live is under way here, or until `yieldTo` live runs
 * have ended since it began to wait. Without live traffic it never waits; under a steady load it
 * goes at a pace the live work sets, behind it, and never stops altogether.
 */
export class LiveReplies {
  #running = 0;
  readonly #waiting: Array<{ left: number; resolve: () => void }> = [];

  constructor(readonly yieldTo: number) {}

  /** Runs one piece of live work (a reply, a post being stored), counted while it runs. */
  async run<T>(reply: () => Promise<T>): Promise<T> {
    this.#running++;
    try {
      return await reply();
    } finally {
      this.#running--;
      for (let i = this.#waiting.length - 1; i >= 0; i--) {
        const w = this.#waiting[i];
        if (this.#running === 0 || --w.left <= 0) {
          this.#waiting.splice(i, 1);
          w.resolve();
        }
      }
    }
  }

  /** Resolves once no live reply is under way, or `yieldTo` have ended since this call. */
  room(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push({ left: this.yieldTo, resolve }));
  }

  get running(): number {
    return this.#running;
  }
}
