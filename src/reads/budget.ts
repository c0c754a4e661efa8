/**
 * The budgeted fetch: what answers may cost in bytes, and the read statement's row fetched within
 * it. PostgreSQL stops a read once the rows it read pass the request's allowance (./row_bytes.ts,
 * SQLSTATE 54SB1), then builds the answer's JSON and measures it; the text is sent only within the
 * budget, so the driver never receives more than this process allows:
 *
 * - per request: `maxResponseBytes` across all of a request's read statements (a GraphQL document
 *   whose root fields are read one statement each adds them up);
 * - per process: `maxBytesInFlight` of large answers held at once. An answer over INLINE_BYTES is
 *   first only measured, then fetched once its bytes are reserved here (waiting for others to
 *   finish), so parallel large reads queue instead of growing the heap without bound.
 */
import type { ActorContext } from "../context.ts";
import { AppError } from "../shared/errors.ts";
import { ClientGoneError, currentScope, type RequestScope } from "../shared/request_scope.ts";
import { stoppedWhenClientGone, TEXT_AS_BYTES } from "../db/pool.ts";
import { fastPathOf } from "../db/fast_path.ts";
import type { AnswerRow } from "./answer.ts";

/** Answers up to this size are sent in the first round trip, unreserved (at most one per connection). */
const INLINE_BYTES = 1 << 20;

interface ReadLimits {
  maxResponseBytes: number;
  maxBytesInFlight: number;
}

/** `bytes`: the answer's size when PostgreSQL built it; undefined when the cut-off stopped it first. */
function responseTooLarge(bytes: number | undefined, limit: number): AppError {
  const size = bytes === undefined ? `more than ${limit}` : String(bytes);
  return new AppError(
    "RESPONSE_TOO_LARGE",
    400,
    `The answer would be ${size} bytes of JSON; at most ${limit} per request. Ask for fewer rows or fields.`,
  );
}

/** The SQLSTATE a read statement stops with once its rows count past its cut-off (see the migration read_budget). */
const CUT_OFF_SQLSTATE = "54SB1";

/** A read statement stopped by its cut-off: pg's error, or Prisma's (raw queries inside a transaction). */
function isCutOff(error: unknown): boolean {
  const e = error as { code?: unknown; meta?: { code?: unknown }; message?: unknown } | null;
  return e?.code === CUT_OFF_SQLSTATE || e?.meta?.code === CUT_OFF_SQLSTATE ||
    (typeof e?.message === "string" && e.message.includes(CUT_OFF_SQLSTATE));
}

/** Bytes already answered in the current request. */
const spent = new WeakMap<RequestScope, number>();

/** What the current request may still receive (the whole limit outside requests). */
function allowance(limit: number): number {
  const scope = currentScope();
  return scope ? Math.max(0, limit - (spent.get(scope) ?? 0)) : limit;
}

/** Counts `bytes` against the current request. */
function charge(bytes: number): void {
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
function reserve(limits: ReadLimits, bytes: number): Promise<() => void> {
  let semaphore = inFlight.get(limits);
  if (!semaphore) inFlight.set(limits, semaphore = new Bytes(limits.maxBytesInFlight));
  return semaphore.acquire(bytes, currentScope()?.signal);
}

/** `data` is bytes on the pool's fast path (TEXT_AS_BYTES), text through Prisma (in a transaction). */
type Row =
  & { data: Uint8Array | string | null; bytes: number }
  & Record<string, number | null | string | Uint8Array>;

const encoder = new TextEncoder();

/**
 * The statement's one row within the request's byte allowance: a small answer in one round trip,
 * a large one measured first, then fetched once its bytes are reserved in the process's budget.
 * The statement's last two parameters are the cut-off and this round trip's budget (./compile.ts).
 * `use` turns the text into what is kept, while the bytes are still reserved.
 */
export async function fetchBounded<T>(
  ctx: ActorContext,
  statement: { sql: string; values: unknown[] },
  use: (row: AnswerRow) => T,
): Promise<T> {
  const { sql, values } = statement;
  const limits = ctx.config.reads;
  const allowed = allowance(limits.maxResponseBytes);
  let budget = Math.min(allowed, INLINE_BYTES);
  for (let attempt = 0; attempt < 3; attempt++) {
    const release = budget > INLINE_BYTES ? await reserve(limits, budget) : undefined;
    try {
      const fast = fastPathOf(ctx.db);
      const [row] = await stoppedWhenClientGone(() =>
        fast
          ? fast.rows<Row>({ text: sql, values: [...values, allowed, budget], types: TEXT_AS_BYTES })
          : ctx.db.$queryRawUnsafe<Row[]>(sql, ...values, allowed, budget)
      ).catch((error) => {
        throw isCutOff(error) ? responseTooLarge(undefined, limits.maxResponseBytes) : error;
      });
      if (row.data !== null) {
        charge(row.bytes);
        return use({ ...row, data: typeof row.data === "string" ? encoder.encode(row.data) : row.data });
      }
      if (row.bytes > allowed) throw responseTooLarge(row.bytes, limits.maxResponseBytes);
      // Room for some growth before the second run (rows may change in between).
      budget = Math.min(allowed, row.bytes + (row.bytes >> 3));
    } finally {
      release?.();
    }
  }
  throw responseTooLarge(budget, limits.maxResponseBytes);
}
