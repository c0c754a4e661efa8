/**
 * The job queue as domains see it (the outbox side of pg-boss): jobs are enqueued inside the
 * caller's transaction, so none is lost between commit and enqueue and none runs for a rolled-back
 * change. src/jobs/boss.ts implements it.
 */
import type { SqlTx } from "../db/client.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import type { StatementShare } from "./events.ts";

/** One job to send. */
export interface JobItem {
  data: object;
  /** Due no earlier than this many milliseconds from now. */
  startAfterMs?: number;
  /**
   * On a queue with the 'short' policy, one waiting job per key: a second is not added, and the
   * waiting one is brought forward when the new one is due earlier.
   */
  key?: string;
}

export interface InsertShareOptions {
  /** The name of the insert's CTE (and the prefix of any other it adds): the listener's prefix. */
  name: string;
  /**
   * A SQL expression of type json over the listener's own CTEs: an array of `{ data }` objects
   * (with `id` and `startAfter` when the listener sets them, as pg-boss' insert reads them), one
   * job each (null or empty: none). Its text must not depend on the values, so that the statement
   * is prepared once.
   */
  jobs: Prisma.Sql;
}

/** Jobs of a queue to be run by this process once the transaction inserting them commits. */
export interface LocalRun {
  /**
   * Insert them due this many seconds from now: a worker fetches one only when its run here never
   * completed it (this process died first).
   */
  readonly backstopSeconds: number;
  /** Inside the transaction, once they are inserted: run these jobs (by their ids) after its commit. */
  start(jobs: ReadonlyArray<{ id: string; data: object }>): void;
}

export interface JobQueue {
  /**
   * Inserts one job per item on `queue`, in one statement: inside `tx`, committed or rolled back
   * with it, or, given the client itself, on its own. Its queue's rule (src/jobs/boss.ts
   * WorkerOptions.runHere) says whether this process runs it once committed and due, its row kept
   * as the backstop, or a worker fetches it; NOTIFY or this process' wake-ups start the workers.
   */
  send(tx: SqlTx, queue: string, items: readonly JobItem[]): Promise<void>;
  /**
   * Sends jobs due at once on `queue` as part of an event listener's share of the batch's one
   * statement (src/shared/events.ts), so that they cost no statement of their own and commit or
   * roll back with it: CTEs that insert one job per element of `jobs` and, when the queue has it,
   * send the workers' NOTIFY. The share's `result` is the number of jobs inserted.
   */
  insertShare(queue: string, options: InsertShareOptions): StatementShare;
  /**
   * Whether jobs of `queue` inserted in `tx` by an insertShare run in this process once `tx`
   * commits (the queue's rule, room for them, and `tx` a transaction of the app's client): how,
   * or null, and they are inserted due as usual for the workers.
   */
  runAfterCommit(tx: SqlTx, queue: string): LocalRun | null;
}
