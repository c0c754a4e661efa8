/**
 * The job queue as domains see it (the outbox side of pg-boss): jobs are enqueued inside the
 * caller's transaction, so none is lost between commit and enqueue and none runs for a rolled-back
 * change. src/jobs/boss.ts implements it.
 */
import type { SqlTx } from "../db/client.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import type { StatementShare } from "./events.ts";

export interface EnqueueOptions {
  /** Run no earlier than this many milliseconds from now. */
  startAfterMs?: number;
  /**
   * Run by this process once `tx` committed and the job is due, rather than fetched by a worker,
   * when `tx` was opened by db/transaction.ts `transaction()` or `sqlTransaction()` and the job is due within a minute;
   * the job stays as the backstop (see `enqueueAndRun`). Otherwise enqueued as usual.
   */
  runHere?: boolean;
}

export interface KeyedJob {
  data: object;
  startAfterMs?: number;
  singletonKey?: string;
}

export interface InsertShareOptions {
  /** The name of the insert's CTE (and the prefix of any other it adds): the listener's prefix. */
  name: string;
  /**
   * A SQL expression of type json over the listener's own CTEs: an array of `{ data }` objects, one
   * job each (null or empty: none). Its text must not depend on the values, so that the statement
   * is prepared once.
   */
  jobs: Prisma.Sql;
}

/** Jobs of a queue to be run by this process once the transaction inserting them commits. */
export interface LocalRun {
  /**
   * Insert them due this many seconds from now: a worker fetches one only when its run here never
   * completed it (this process died first, or the run and its retry both failed).
   */
  readonly backstopSeconds: number;
  /** Inside the transaction, once they are inserted: run these jobs (by their ids) after its commit. */
  start(jobs: ReadonlyArray<{ id: string; data: object }>): void;
}

export interface JobQueue {
  /** Enqueues one job per item of `data` on `queue`, inside `tx`. */
  enqueue(tx: SqlTx, queue: string, data: object[], options?: EnqueueOptions): Promise<void>;
  /**
   * As enqueue, each job with its own delay (one statement for all). On a queue with the 'short'
   * policy, `singletonKey` keeps one waiting job per key: a second is not added, and the waiting one
   * is brought forward when the new one is due earlier.
   */
  enqueueEach(tx: SqlTx, queue: string, items: Array<KeyedJob>): Promise<void>;
  /**
   * After the transaction that enqueued a job of `queue` committed: one of this process' workers
   * fetches it now. For queues without NOTIFY (which wakes every worker of every process).
   */
  wake(queue: string): void;
  /**
   * Enqueues jobs due at once on `queue` as part of an event listener's share of the batch's one
   * statement (src/shared/events.ts), so that they cost no statement of their own and commit or
   * roll back with it: CTEs that insert one job per element of `jobs` and, when the queue has it,
   * send the workers' NOTIFY. The share's `result` is the number of jobs inserted. A queue without
   * NOTIFY needs `wake(queue)` after the commit, as with `enqueue`.
   */
  insertShare(queue: string, options: InsertShareOptions): StatementShare;
  /**
   * Whether jobs of `queue` inserted in `tx` can run in this process once `tx` commits (a worker of
   * the queue here, free runs under its limit, and `tx` a transaction of the app's client): how, or
   * null, and they are inserted due as usual for the workers.
   */
  runAfterCommit(tx: SqlTx, queue: string): LocalRun | null;
  /** After a transaction that enqueued deferred jobs committed: those due and untaken are fetched now. */
  committed(): void;
  /**
   * Enqueues one job in its own (implicit) transaction and, once that committed, runs it in this
   * process with the queue's own handler instead of waiting for a worker to fetch it (one hop and
   * one fetch less). The job stays in the queue as the backstop until the run completes it: a worker
   * takes it only if this process died first; a failed run is a failed attempt of the job (retried by a worker after the queue's delay). Resolves
   * when the job is durable, not when the run ends. When this process has no worker of the queue,
   * or too many runs under way, the job is simply enqueued and woken as usual.
   */
  enqueueAndRun(queue: string, data: object): Promise<void>;
  /** Enqueues at once, outside any transaction, each job with its own delay (a job put back for later). */
  enqueueLater(queue: string, items: Array<{ data: object; afterMs: number }>): Promise<void>;
  /**
   * Runs `data` through the queue's handler in this process at once, with no job row of its own:
   * for work a durable job already stands behind (lost with this process, that job does it later).
   * A failed run is queued for a worker a second later. When this process has no worker of the
   * queue, or too many runs under way, it is enqueued as a job instead.
   */
  runBacked(queue: string, data: object): Promise<void>;
}
