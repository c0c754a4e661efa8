/**
 * Work to start once a transaction has committed (a job run in this process right after it is
 * committed): every client's transactions run it (withAfterCommit), sqlTransaction's too.
 */
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { SqlTx } from "./fast_path.ts";

type Db = PrismaClient;

/** Callbacks to run once a transaction has committed, by its tx. */
export const afterCommits = new WeakMap<object, Array<() => void>>();

/**
 * `db` whose every interactive `$transaction(fn)` runs the callbacks registered on its tx with
 * `afterCommit` once it has committed (in order; none when it rolls back). createPrisma gives every
 * client this, so whether work may start after a commit (a job run in this process) never depends
 * on which helper opened the transaction. Everything else is the client's own.
 */
export function withAfterCommit(db: Db): Db {
  const $transaction = async (arg: unknown, options?: unknown) => {
    if (typeof arg !== "function") {
      return await (db.$transaction as (a: unknown, o?: unknown) => unknown)(arg, options);
    }
    const callbacks: Array<() => void> = [];
    const result = await db.$transaction((tx) => {
      afterCommits.set(tx, callbacks);
      return (arg as (tx: unknown) => Promise<unknown>)(tx);
    }, options as Parameters<Db["$transaction"]>[1]);
    for (const callback of callbacks) callback();
    return result;
  };
  return new Proxy(db, {
    get: (target, prop) => prop === "$transaction" ? $transaction : Reflect.get(target, prop),
  });
}

/**
 * Registers `callback` to run once `tx` has committed. Returns false, registering nothing, when `tx`
 * is not a transaction of a client made by createPrisma (a bare client: its statements commit on
 * their own, and nobody would call it): the caller takes its other way.
 */
export function afterCommit(tx: SqlTx, callback: () => void): boolean {
  const callbacks = afterCommits.get(tx);
  callbacks?.push(callback);
  return callbacks !== undefined;
}

/** Whether `afterCommit(tx, ...)` would register (tx is a transaction that runs them). */
export const runsAfterCommit = (tx: SqlTx): boolean => afterCommits.has(tx);
