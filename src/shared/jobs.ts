/**
 * The job queue as domains see it (the outbox side of pg-boss): jobs are enqueued inside the
 * caller's transaction, so none is lost between commit and enqueue and none runs for a rolled-back
 * change. src/jobs/boss.ts implements it.
 */
import type { Tx } from "../db/client.ts";

export interface EnqueueOptions {
  /** Run no earlier than this many milliseconds from now. */
  startAfterMs?: number;
}

export interface JobQueue {
  /** Enqueues one job per item of `data` on `queue`, inside `tx`. */
  enqueue(tx: Tx, queue: string, data: object[], options?: EnqueueOptions): Promise<void>;
  /** As enqueue, each job with its own delay (one statement for all). */
  enqueueEach(tx: Tx, queue: string, items: Array<{ data: object; startAfterMs?: number }>): Promise<void>;
  /**
   * After the transaction that enqueued a job of `queue` committed: one of this process' workers
   * fetches it now. For queues without NOTIFY (which wakes every worker of every process).
   */
  wake(queue: string): void;
  /** After a transaction that enqueued deferred jobs committed: those due and untaken are fetched now. */
  committed(): void;
  /** Enqueues at once, outside any transaction, each job with its own delay (a job put back for later). */
  enqueueLater(queue: string, items: Array<{ data: object; afterMs: number }>): Promise<void>;
}
