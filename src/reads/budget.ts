/**
 * What answers may cost in bytes. PostgreSQL stops a read once the rows it read pass the request's
 * allowance (plan.ts Compiler.spend, SQLSTATE 54SB1), then builds the answer's JSON and measures it;
 * the text is sent only within the budget, so the driver never receives more than this process allows:
 *
 * - per request: `maxResponseBytes` across all of a request's read statements (a GraphQL document
 *   whose root fields are read one statement each adds them up);
 * - per process: `maxBytesInFlight` of large answers held at once. An answer over INLINE_BYTES is
 *   first only measured, then fetched once its bytes are reserved here (waiting for others to
 *   finish), so parallel large reads queue instead of growing the heap without bound.
 */
import { AppError } from "../shared/errors.ts";
import { ClientGoneError, currentScope, type RequestScope } from "../shared/request_scope.ts";

/** Answers up to this size are sent in the first round trip, unreserved (at most one per connection). */
export const INLINE_BYTES = 1 << 20;

export interface ReadLimits {
  maxResponseBytes: number;
  maxBytesInFlight: number;
}

/** `bytes`: the answer's size when PostgreSQL built it; undefined when the cut-off stopped it first. */
export function responseTooLarge(bytes: number | undefined, limit: number): AppError {
  const size = bytes === undefined ? `more than ${limit}` : String(bytes);
  return new AppError(
    "RESPONSE_TOO_LARGE",
    400,
    `The answer would be ${size} bytes of JSON; at most ${limit} per request. Ask for fewer rows or fields.`,
  );
}

/** The SQLSTATE a read statement stops with once its rows count past its cut-off (see the migration read_budget). */
export const CUT_OFF_SQLSTATE = "54SB1";

/** A read statement stopped by its cut-off: pg's error, or Prisma's (raw queries inside a transaction). */
export function isCutOff(error: unknown): boolean {
  const e = error as { code?: unknown; meta?: { code?: unknown }; message?: unknown } | null;
  return e?.code === CUT_OFF_SQLSTATE || e?.meta?.code === CUT_OFF_SQLSTATE ||
    (typeof e?.message === "string" && e.message.includes(CUT_OFF_SQLSTATE));
}

/** Bytes already answered in the current request. */
const spent = new WeakMap<RequestScope, number>();

/** What the current request may still receive (the whole limit outside requests). */
export function allowance(limit: number): number {
  const scope = currentScope();
  return scope ? Math.max(0, limit - (spent.get(scope) ?? 0)) : limit;
}

/** Counts `bytes` against the current request. */
export function charge(bytes: number): void {
  const scope = currentScope();
  if (scope) spent.set(scope, (spent.get(scope) ?? 0) + bytes);
}

interface Waiter {
  bytes: number;
  grant: () => void;
}

/** A counting semaphore of bytes, first come first served. */
class Bytes {
  #used = 0;
  readonly #queue: Waiter[] = [];
  constructor(readonly capacity: number) {}

  /** Reserves `bytes` (at most the capacity), waiting while others hold too much; `release` frees it. */
  async acquire(wanted: number, signal?: AbortSignal): Promise<() => void> {
    const bytes = Math.min(wanted, this.capacity);
    if (this.#queue.length === 0 && this.#used + bytes <= this.capacity) {
      this.#used += bytes;
    } else {
      const granted = Promise.withResolvers<void>();
      const waiter: Waiter = { bytes, grant: granted.resolve };
      this.#queue.push(waiter);
      const onAbort = () => {
        const at = this.#queue.indexOf(waiter);
        if (at < 0) return;
        this.#queue.splice(at, 1);
        this.#drain();
        granted.reject(new ClientGoneError());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        await granted.promise;
      } finally {
        signal?.removeEventListener("abort", onAbort);
      }
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#used -= bytes;
      this.#drain();
    };
  }

  #drain() {
    while (this.#queue.length && this.#used + this.#queue[0].bytes <= this.capacity) {
      const next = this.#queue.shift()!;
      this.#used += next.bytes;
      next.grant();
    }
  }
}

/** One semaphore per app (its limits object), as the presenters' caches are kept. */
const inFlight = new WeakMap<ReadLimits, Bytes>();

/** Reserves `bytes` of the process's answers in flight; the current request's abort stops waiting. */
export function reserve(limits: ReadLimits, bytes: number): Promise<() => void> {
  let semaphore = inFlight.get(limits);
  if (!semaphore) inFlight.set(limits, semaphore = new Bytes(limits.maxBytesInFlight));
  return semaphore.acquire(bytes, currentScope()?.signal);
}
