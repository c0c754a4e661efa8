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
  /**
   * The job's id (a uuid), for a job that stands for one piece of work whatever sends it: a second
   * job with the same id is not inserted while the first is in the queue's table.
   */
  id?: string;
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

/**
 * Jobs of a queue that this process runs once the transaction of an insertShare commits, with no
 * job row: the caller's own rows, written in that transaction, must say that this process is
 * making them (a claim naming its instance), so that they are handed to jobs if it dies. A run
 * that fails inserts its jobs (with their ids), to be retried after the queue's delay as a failed
 * fetched job would be; one that never starts (the process stops first) leaves them to the claim.
 */
export interface LocalRun {
  /** Inside the transaction, once the rows are written: run these jobs (ids are uuids) after its commit. */
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
   * Whether jobs of `queue` that `tx` would insert by an insertShare run in this process once `tx`
   * commits instead, without a row (the queue's rule, room for them, and `tx` a transaction of the
   * app's client; see LocalRun): how, or null, and they are inserted as usual for the workers.
   */
  runAfterCommit(tx: SqlTx, queue: string): LocalRun | null;
}
