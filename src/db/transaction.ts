/**
 * Running a service on a caller's transaction: services write through `ctx.db` and open their own
 * transactions with `ctx.db.$transaction(fn)`. `joinTransaction(tx)` is a `Db` whose statements
 * run on `tx` and whose `$transaction(fn)` runs `fn` on that same `tx` (it joins the caller's
 * transaction instead of opening another), so a service called with `{ ...ctx, db:
 * joinTransaction(tx) }` commits or rolls back with the caller's work (approvals execute a change
 * in the transaction that records the decision).
 */
import type { Db, SqlTx, Tx } from "./client.ts";
import { fastPathOf } from "./fast_path.ts";
import { afterCommits } from "./after_commit.ts";

export { afterCommit, runsAfterCommit } from "./after_commit.ts";

export function joinTransaction(tx: Tx): Db {
  const join = (arg: unknown) =>
    typeof arg === "function" ? (arg as (tx: Tx) => Promise<unknown>)(tx) : Promise.all(arg as unknown[]);
  return new Proxy(tx, {
    get: (target, prop, receiver) => prop === "$transaction" ? join : Reflect.get(target, prop, receiver),
  }) as unknown as Db;
}

/**
 * Options of a transaction that a burst of requests may queue for (approving many approvals at
 * once): Prisma gives up waiting for a pooled connection after 2 s by default and the request
 * would answer 500; these wait longer for their turn.
 */
export const QUEUED_TRANSACTION = { maxWait: 15_000, timeout: 15_000 } as const;

let savepoints = 0;

/**
 * Runs `fn` inside a savepoint of `tx`. When `fn` throws, its writes are undone and the
 * transaction stays usable (a failed statement no longer aborts it); the error is rethrown.
 */
export async function withSavepoint<T>(tx: Tx, fn: () => Promise<T>): Promise<T> {
  const name = `sp_${++savepoints}`;
  await tx.$executeRawUnsafe(`SAVEPOINT ${name}`);
  try {
    const result = await fn();
    await tx.$executeRawUnsafe(`RELEASE SAVEPOINT ${name}`);
    return result;
  } catch (error) {
    await tx.$executeRawUnsafe(`ROLLBACK TO SAVEPOINT ${name}`);
    throw error;
  }
}

const DRY_RUN = Symbol("dry run");

/** Runs `fn` inside a savepoint of `tx` and undoes its writes whatever happens (a trial run). */
export async function dryRun(tx: Tx, fn: () => Promise<unknown>): Promise<void> {
  try {
    await withSavepoint(tx, async () => {
      await fn();
      throw DRY_RUN;
    });
  } catch (error) {
    if (error !== DRY_RUN) throw error;
  }
}

/**
 * `db.$transaction(fn)` for work of raw statements only (a SqlTx: declared statements, job
 * inserts): on the client's pool directly (db/fast_path.ts), a few times cheaper per statement than
 * Prisma's interactive transaction, with `afterCommit` as there. A `db` without that path (a joined
 * transaction) runs it through Prisma.
 */
export async function sqlTransaction<T>(db: Db, fn: (tx: SqlTx) => Promise<T>): Promise<T> {
  const fast = fastPathOf(db);
  if (!fast) return await db.$transaction(fn);
  const callbacks: Array<() => void> = [];
  const result = await fast.transaction((tx) => {
    afterCommits.set(tx, callbacks);
    return fn(tx);
  });
  for (const callback of callbacks) callback();
  return result;
}
