/** A clock the test moves by hand (invite expiry, approval expiry, ...): startTestApp({}, { clock }). */
import type { Clock } from "../../src/shared/clock.ts";

export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date = new Date()) {
    this.#ms = start.getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
  set(to: Date): void {
    this.#ms = to.getTime();
  }
}
