/** Time comes from here so expiry, debounce and auto-close can be tested without sleeping. */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };
