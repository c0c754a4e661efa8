/**
 * pg-boss on the application database, in its own schema `pgboss`. Jobs are sent inside the
 * caller's transaction (outbox pattern: pg-boss `insert(..., { db })`, or for keyed jobs its insert
 * statement with the bring-forward beside it, keyedInsertSql, or for an event listener its insert as
 * CTEs of the event batch's statement, insertShare). A queue whose worker says `runHere` has the
 * jobs this process sends run by it once committed (no fetch), their rows kept as the backstop, and
 * an insertShare's jobs run by it without a row at all when its caller claims the work itself
 * (runAfterCommit); the others' workers are woken by LISTEN/NOTIFY or this process' wake-ups, not
 * by polling, so a new job starts without waiting for a poll interval. What this relies on of pg-boss' private
 * parts is listed in pgboss_internals.ts.
 */
import { fromPrisma, type Job, PgBoss, type Queue, type Warning, type WorkOptions } from "pg-boss";
import { Prisma } from "../generated/prisma/client.ts";
import { POOL_IDLE_MS, type SqlTx } from "../db/client.ts";
import { afterCommit, runsAfterCommit } from "../db/transaction.ts";
import type { InsertShareOptions, JobItem, JobQueue, LocalRun } from "../shared/jobs.ts";
import { fastPathOf } from "../db/fast_path.ts";
import type { StatementShare } from "../shared/events.ts";
import type { Logger } from "../shared/logger.ts";
import { NamedStatementsDb } from "./named_statements_db.ts";
import { insertJobs, type InsertParts, insertParts, markStartedSql } from "./pgboss_internals.ts";
import { GuardedClient } from "../db/pool.ts";
import { setImmediate } from "node:timers";

export const BOSS_SCHEMA = "pgboss";

/** Deferred jobs due within this many ms wake this process' workers by a timer; later ones are polled. */
const WAKE_TIMER_MAX_MS = 60_000;

/**
 * A job run here is inserted due this much later, or its queue's expiry when shorter (a run here is
 * held as long as a fetched job would be): beyond the run itself, so a worker fetches it only when
 * the run never completed it (the process died).
 */
const RUN_HERE_BACKSTOP_MS = 30_000;

/**
 * Runs under way here, per queue, unless its worker says otherwise (WorkerOptions.runHereLimit):
 * beyond it new jobs are left to the workers, and a deferred job whose time comes waits here for a
 * run to end.
 */
const RUN_HERE_LIMIT = 16;

/**
 * A queue with more jobs than this due and not taken is a backlog worth a warning (pg-boss'
 * `warningQueueSize`, its own default, unless a queue sets one).
 */
const BACKLOG_WARNING_SIZE = 10_000;

/** The start of pg-boss' backlog warning (its `queue_backlog` warning type; boss.js WARNINGS). */
const BACKLOG_WARNING = "Warning: large queue backlog";

/**
 * pg-boss' worker options, and the queue's rule for running here: with `runHere`, a job sent by
 * this process (JobQueue.send) and due within a minute is run by it once committed, rather than
 * fetched by a worker (no fetch, no wake-up), its row kept as the backstop, and so are the jobs of
 * an insertShare whose caller claims them (runAfterCommit), with no row; at most `runHereLimit` of
 * them at once (RUN_HERE_LIMIT). With `runHereBatches`, at most that many runs (handler calls) are
 * under way at once, each of up to `batchSize` jobs, as the workers fetch them, and `runHereLimit`
 * counts the jobs waiting for them too: in a burst a run takes every job that came meanwhile
 * (fewer, fuller batches) rather than starting one per commit.
 */
export type WorkerOptions = WorkOptions & {
  runHere?: boolean;
  runHereLimit?: number;
  runHereBatches?: number;
};

/** A queue and its options, created (or brought up to date) when the boss starts. */
export type QueueSpec = Queue & { name: string };

/**
 * Moves the waiting jobs of queue $1 under the keys $2 to the due times $3 (ISO text) where those
 * are earlier. Its WHERE matches the queue's unique index for the 'short' policy, and the keys are
 * matched with `= ANY` as well so that the index finds the rows: joined to the unnest alone,
 * PostgreSQL read every waiting job of the queue (one per open conversation for the timers).
 * Unchanged rows are not rewritten.
 */
export const BRING_FORWARD_SQL = `UPDATE ${BOSS_SCHEMA}.job j
    SET start_after = v.at::timestamptz
   FROM unnest($2::text[], $3::text[]) AS v(key, at)
  WHERE j.name = $1 AND COALESCE(j.singleton_key, '') = ANY($2::text[])
    AND COALESCE(j.singleton_key, '') = v.key AND j.state = 'created' AND j.policy = 'short'
    AND v.at::timestamptz < j.start_after`;

/**
 * A keyed insert in one statement: BRING_FORWARD_SQL (its parameters from $2 on) as a CTE of
 * pg-boss' own insert of the queue (its jobs as JSON in $1). Both read the rows as they were before
 * the statement: a key with a job waiting is skipped by the insert and that job brought forward; a
 * key without one is inserted, and the CTE finds nothing of it to move.
 */
export function keyedInsertSql(queue: string, table: string, notify: boolean): string {
  const forward = BRING_FORWARD_SQL.replace(/\$(\d)/g, (_, n) => `$${Number(n) + 1}`);
  const insert = insertJobs(BOSS_SCHEMA, { table, name: queue, returnId: false, notify }).trim();
  // With NOTIFY, pg-boss' insert is a WITH of its own: the CTE joins its list.
  return insert.startsWith("WITH ")
    ? `WITH forward AS (${forward}), ${insert.slice("WITH ".length)}`
    : `WITH forward AS (${forward}) ${insert}`;
}

export interface BossOptions {
  /** Connections of pg-boss' own pool (fetch, complete, maintenance), besides the LISTEN one. */
  max?: number;
  /**
   * Seconds between supervision passes, which is also how late an expired job (a worker that
   * crashed mid-job) is noticed and retried.
   */
  superviseIntervalSeconds?: number;
}

/** pg-boss set up for this app; implements the JobQueue the domains enqueue on. */
export class Jobs implements JobQueue {
  readonly boss: PgBoss;
  readonly #logger: Logger;
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #drains: Array<(timeoutMs: number) => Promise<void>> = [];
  /** Per queue, the last idle worker woken (wake() takes them in turn). */
  readonly #turns = new Map<string, number>();
  /** Per queue started here, its insert cut for insertShare, made when the boss starts. */
  readonly #insertParts = new Map<string, InsertParts>();
  /** Per queue, its keyed insert (keyedInsertSql), made once its table and NOTIFY are known. */
  readonly #keyedInserts = new Map<string, Promise<string>>();
  /** Per queue, jobs announced by wake() and not yet taken by this process' workers (a hint). */
  readonly #due = new Map<string, number>();
  /** Per queue, the handler its workers run (the runs here use it too). */
  readonly #handlers = new Map<string, (jobs: Job<object>[]) => Promise<void>>();
  /** Runs started here under way, awaited on stop, and their count per queue. */
  readonly #runs = new Set<Promise<void>>();
  readonly #runsPerQueue = new Map<string, number>();
  /** Per queue, how many runs here may be under way (RUN_HERE_LIMIT unless its worker says). */
  readonly #runHereLimits = new Map<string, number>();
  /** Per queue with WorkerOptions.runHereBatches: that, and its runs under way. */
  readonly #runHereBatches = new Map<string, number>();
  readonly #batchesPerQueue = new Map<string, number>();
  /** The queues whose jobs sent here run here (WorkerOptions.runHere). */
  readonly #runsHere = new Set<string>();
  /** The queues started here whose inserts send pg-boss' NOTIFY (the others are woken by wake()). */
  readonly #notifies = new Set<string>();
  /** Per queue started here, how long a job run here waits before a worker may take it (ms). */
  readonly #backstops = new Map<string, number>();
  /** Per queue started here, its retry delay (s): when a failed run without a row is tried again. */
  readonly #retryDelays = new Map<string, number>();
  /** Jobs run here that have no row (runAfterCommit): nothing to complete, their retries inserted. */
  readonly #rowless = new WeakSet<Job<object>>();
  /** Pauses under way (#pause), ended at once on stop. */
  readonly #pauses = new Set<() => void>();
  /** Per queue, the batch size of its workers: jobs run here together are handed over so many at a time. */
  readonly #batchSizes = new Map<string, number>();
  /** Jobs due to run here, not started yet (this turn's, or the limit of runs under way), oldest first. */
  readonly #waitingRuns = new Map<string, Job<object>[]>();
  #stopped = false;

  constructor(databaseUrl: string, logger: Logger, options: BossOptions = {}) {
    this.#logger = logger;
    const supervise = options.superviseIntervalSeconds ?? 2;
    // pg-boss hands its whole configuration to pg's Pool, so the pool's idle timeout goes along,
    // though its types do not list it.
    const connection = {
      idleTimeoutMillis: POOL_IDLE_MS,
      connectionString: databaseUrl,
      application_name: "switchboard-jobs",
      max: options.max ?? 6,
      // pg-boss's statements find jobs by indexed columns whatever their values: a generic plan,
      // made once per connection, serves every call (with custom plans PostgreSQL planned the fetch
      // again on each call, which cost several times its run).
      options: "-c plan_cache_mode=force_generic_plan",
      // The app's client: a fault inside the driver fails one statement, and corked writes are joined.
      Client: GuardedClient,
    };
    this.boss = new PgBoss({
      ...connection,
      db: new NamedStatementsDb(connection),
      schema: BOSS_SCHEMA,
      useListenNotify: true,
      // Expiry is only checked on a supervision pass that also claims the monitor slot, so both
      // intervals are short: a crashed attempt is retried seconds after it expires, not minutes.
      superviseIntervalSeconds: supervise,
      monitorIntervalSeconds: supervise,
      // Cron schedules (jobs/workers/maintenance.ts): every instance may send a due occurrence,
      // pg-boss files it under a singleton slot so one job is made per slot.
      schedule: true,
      // The cron pass (one per interval across every instance) sends a minute's occurrence at most
      // this late: the approval expiry sweep is due every minute.
      cronMonitorIntervalSeconds: 10,
      warningQueueSize: BACKLOG_WARNING_SIZE,
    });
    this.boss.on("error", (error) => logger.error("pg-boss error", { error }));
    this.boss.on("warning", (warning) => void this.#warned(warning));
  }

  /**
   * pg-boss counts a queue's deferred jobs in its backlog (its `queuedCount`, compared with
   * `warningQueueSize`): a conversation timer per open conversation, due in an hour, made it warn on
   * every pass. A backlog is jobs due and not taken, the queue's `readyCount`: the warning is logged
   * when those are over the threshold, and at debug when the deferred ones made it.
   */
  async #warned(warning: Warning): Promise<void> {
    const data = warning.data as { name?: unknown; warningQueueSize?: unknown };
    if (!warning.message.startsWith(BACKLOG_WARNING) || typeof data.name !== "string") {
      this.#logger.warn("pg-boss warning", { warning });
      return;
    }
    const threshold = Number(data.warningQueueSize) || BACKLOG_WARNING_SIZE;
    // The counts the monitor pass that warned has just stored (a read of the queue's row).
    const queue = await this.boss.getQueue(data.name).catch(() => null);
    if (queue && queue.readyCount <= threshold) {
      this.#logger.debug("pg-boss backlog of deferred jobs", {
        queue: data.name,
        due: queue.readyCount,
        deferred: queue.deferredCount,
        threshold,
      });
      return;
    }
    this.#logger.warn("pg-boss warning", {
      warning,
      ...(queue ? { due: queue.readyCount, deferred: queue.deferredCount } : {}),
    });
  }

  /** Installs or migrates the pg-boss schema and creates (or updates) the queues. */
  async start(queues: QueueSpec[]): Promise<void> {
    await this.boss.start();
    for (const { name, ...options } of queues) {
      await this.boss.createQueue(name, options);
      if (options.policy) await this.#adoptPolicy(name, options.policy);
      // createQueue leaves an existing queue as it was: bring its options up to date (the dead
      // letter too, so a queue created before it had one gets it).
      const { policy: _policy, partition: _partition, heartbeatSeconds: _hb, ...updatable } = options;
      await this.boss.updateQueue(name, updatable);
    }
    // Made here, so that an event listener's synchronous share can use it (insertShare).
    for (const queue of await this.boss.getQueues(queues.map((q) => q.name))) {
      if (queue.notify) this.#notifies.add(queue.name);
      this.#backstops.set(
        queue.name,
        Math.min(RUN_HERE_BACKSTOP_MS, (queue.expireInSeconds ?? Infinity) * 1000),
      );
      this.#retryDelays.set(queue.name, queue.retryDelay ?? 0);
      this.#insertParts.set(
        queue.name,
        insertParts(BOSS_SCHEMA, { name: queue.name, table: queue.table, notify: queue.notify === true }),
      );
    }
  }

  /**
   * See JobQueue.insertShare. pg-boss's own insert of the queue with its jobs taken from `jobs`
   * rather than from its parameter, and its NOTIFY as a CTE of its own (a data-modifying statement
   * must be a top-level CTE). The text is the same on every call: prepared once per connection.
   */
  insertShare(queue: string, { name, jobs }: InsertShareOptions): StatementShare {
    const parts = this.#insertParts.get(queue);
    if (!parts) throw new Error(`queue ${queue} was not started by this job queue`);
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`not a CTE name: ${name}`);
    const insert = Prisma.sql`${Prisma.raw(`${name} AS (${parts.before}`)}(${jobs})${
      Prisma.raw(`${parts.after})`)
    }`;
    if (!parts.notified) return { ctes: insert, result: Prisma.raw(`(SELECT count(*) FROM ${name})`) };
    return {
      ctes: Prisma.sql`${insert}, ${Prisma.raw(`${name}_notified AS (${parts.notified(name)})`)}`,
      // Reads the NOTIFY's query whole, so that it runs.
      result: Prisma.raw(`(SELECT count(*) FROM ${name} WHERE (SELECT count(*) FROM ${name}_notified) >= 0)`),
    };
  }

  /**
   * createQueue and updateQueue leave the policy of an existing queue as it was. A queue on the
   * shared job table (not partitioned) has every policy's unique index there already, so switching
   * it is one update; jobs stored before keep their own policy and run as before.
   */
  async #adoptPolicy(name: string, policy: string): Promise<void> {
    const queue = await this.boss.getQueue(name);
    if (!queue || queue.policy === policy) return;
    if (queue.partition) {
      this.#logger.warn("a partitioned queue keeps its policy", { queue: name, policy: queue.policy });
      return;
    }
    await this.boss.getDb().executeSql(`UPDATE ${BOSS_SCHEMA}.queue SET policy = $2 WHERE name = $1`, [
      name,
      policy,
    ]);
  }

  /** See JobQueue.send. */
  async send(tx: SqlTx, queue: string, items: readonly JobItem[]): Promise<void> {
    if (!items.length) return;
    // Once the jobs are committed: with `tx`'s commit, or right after the client's own statement.
    // A transaction this process cannot follow (a joined one) has none: polls find its jobs.
    const bare = !runsAfterCommit(tx) && fastPathOf(tx) !== undefined;
    const callbacks: Array<() => void> = [];
    const onCommit = runsAfterCommit(tx)
      ? (fn: () => void) => void afterCommit(tx, fn)
      : bare
      ? (fn: () => void) => void callbacks.push(fn)
      : null;
    const delays = items.map((i) => Math.max(0, i.startAfterMs ?? 0));
    const runHere = onCommit !== null && !items.some((i) => i.key) &&
      this.#canRunHere(queue, Math.max(...delays));
    if (runHere) await this.#insertToRunHere(tx, bare, queue, items, delays, onCommit);
    else await this.#insert(tx, bare, queue, items, delays, onCommit);
    for (const callback of callbacks) callback();
  }

  /**
   * Inserts the jobs due their backstop (#backstopMs) after their time, and once they are
   * committed runs each here when it is due (at once, or a ms late by a timer, as the wake-ups).
   */
  async #insertToRunHere(
    tx: SqlTx,
    bare: boolean,
    queue: string,
    items: readonly JobItem[],
    delays: number[],
    onCommit: (fn: () => void) => void,
  ): Promise<void> {
    const jobs = items.map((i, k) => ({ id: i.id ?? crypto.randomUUID(), data: i.data, delayMs: delays[k] }));
    const sentAt = performance.now();
    const rows = jobs.map((j) => ({
      id: j.id,
      data: j.data,
      startAfter: (j.delayMs + this.#backstopMs(queue)) / 1000,
    }));
    // A job given an id that is taken is not inserted, and not run here either: the job of that id
    // stands for it. The ids inserted come back only when asked (another statement text).
    const returnId = items.some((i) => i.id !== undefined);
    // The client's own statement: on pg-boss' pool, whose insert is prepared once per connection.
    const inserted = bare
      ? await this.boss.insert(queue, rows, { returnId })
      : await this.boss.insert(queue, rows, { db: fromPrisma(tx), returnId });
    const taken = returnId ? new Set(inserted ?? []) : null;
    onCommit(() => {
      for (const job of jobs) {
        if (taken && !taken.has(job.id)) continue;
        if (job.delayMs === 0) {
          this.#startRun(queue, job.id, job.data);
          continue;
        }
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          this.#startRun(queue, job.id, job.data);
        }, Math.max(0, job.delayMs + 1 - (performance.now() - sentAt)));
        this.#timers.add(timer);
      }
    });
  }

  /** Inserts the jobs for the workers (in one statement), and wakes them when they come due. */
  async #insert(
    tx: SqlTx,
    bare: boolean,
    queue: string,
    items: readonly JobItem[],
    delays: number[],
    onCommit: ((fn: () => void) => void) | null,
  ): Promise<void> {
    // Due at an instant counted from now, not seconds after the database's now(), which in a
    // transaction is when it began: a job computed from a time read later in it (a timer due a
    // minute after the message just stored) would come due early by that much.
    const sentAt = Date.now();
    const dueAt = delays.map((ms) => new Date(sentAt + ms));
    const jobs = items.map((i, k) => ({
      id: i.id ?? crypto.randomUUID(),
      data: i.data,
      startAfter: delays[k] > 0 ? dueAt[k] : undefined,
      singletonKey: i.key,
    }));
    if (!items.some((i) => i.key)) {
      if (bare) await this.boss.insert(queue, jobs);
      else await this.boss.insert(queue, jobs, { db: fromPrisma(tx) });
    } else {
      // Per key, the earliest of its due times: a job already waiting under the key runs at the
      // earlier of the two times, so a due time moved forward is not missed. One round trip.
      const earliest = new Map<string, Date>();
      items.forEach((i, k) => {
        if (!i.key) return;
        const at = earliest.get(i.key);
        if (!at || dueAt[k] < at) earliest.set(i.key, dueAt[k]);
      });
      await tx.$executeRawUnsafe(
        await this.#keyedInsert(queue),
        JSON.stringify(jobs),
        queue,
        [...earliest.keys()],
        [...earliest.values()].map((at) => at.toISOString()),
      );
    }
    // A few ms late on purpose: the database's clock decides when the job is due. Jobs due much later
    // (conversation timers, an hour ahead) are left to the workers' polling rather than holding a
    // timer each in memory.
    let deferred = false;
    for (const delayMs of new Set(delays)) {
      if (delayMs > 0 && delayMs <= WAKE_TIMER_MAX_MS) {
        deferred = true;
        this.#wakeLater(queue, delayMs + 3);
        // In case the first came before the sending transaction committed (its fetch found nothing).
        this.#wakeLater(queue, delayMs + 50, false);
      }
    }
    onCommit?.(() => {
      // Jobs due now on a queue without NOTIFY: one of this process' workers fetches them at once.
      if (delays.some((ms) => ms === 0) && !this.#notifies.has(queue)) this.wake(queue);
      // A short deferral's wake-up may have fired before the commit (its fetch found nothing).
      if (deferred && (this.#due.get(queue) ?? 0) > 0) this.#notifyOne(queue);
    });
  }

  #keyedInsert(queue: string): Promise<string> {
    let sql = this.#keyedInserts.get(queue);
    if (!sql) {
      sql = this.boss.getQueue(queue).then((q) => {
        if (!q) throw new Error(`queue ${queue} does not exist`);
        return keyedInsertSql(queue, q.table, q.notify === true);
      });
      sql.catch(() => this.#keyedInserts.delete(queue));
      this.#keyedInserts.set(queue, sql);
    }
    return sql;
  }

  /**
   * Registers a handler: `localConcurrency` workers, each fetching up to `batchSize` jobs at a time.
   * The handler receives a batch; pg-boss completes its jobs when it resolves and fails them (to be
   * retried within the queue's retryLimit) when it throws.
   */
  async work<T extends object>(
    queue: string,
    { runHere, runHereLimit, runHereBatches, ...options }: WorkerOptions,
    handler: (jobs: Job<T>[]) => Promise<void>,
  ): Promise<void> {
    this.#handlers.set(queue, handler as (jobs: Job<object>[]) => Promise<void>);
    if (runHere) this.#runsHere.add(queue);
    if (runHereLimit !== undefined) this.#runHereLimits.set(queue, runHereLimit);
    if (runHereBatches !== undefined) this.#runHereBatches.set(queue, runHereBatches);
    this.#batchSizes.set(queue, options.batchSize ?? 1);
    await this.boss.work<T>(queue, options, async (jobs) => {
      const due = Math.max(0, (this.#due.get(queue) ?? 0) - jobs.length);
      this.#due.set(queue, due);
      try {
        await handler(jobs);
      } finally {
        // Jobs were announced to this process that no worker has taken yet (their wake-ups fell on
        // busy workers and collapsed): fetch again at once instead of after the polling interval.
        if ((this.#due.get(queue) ?? 0) > 0) this.#wakeBusy(queue);
      }
    });
  }

  /** See JobQueue.runAfterCommit. */
  runAfterCommit(tx: SqlTx, queue: string): LocalRun | null {
    if (!runsAfterCommit(tx) || !this.#canRunHere(queue, 0)) return null;
    return {
      start: (jobs) =>
        void afterCommit(tx, () => {
          for (const job of jobs) this.#startRun(queue, job.id, job.data, false);
        }),
    };
  }

  /** Whether a job of `queue` due in `delayMs` is run here (its queue's rule, room for it) rather than fetched. */
  #canRunHere(queue: string, delayMs: number): boolean {
    return !this.#stopped && this.#runsHere.has(queue) && this.#handlers.has(queue) &&
      delayMs <= WAKE_TIMER_MAX_MS && this.#heldHere(queue) < this.#runHereLimit(queue);
  }

  /** The jobs of `queue` that count against its runHereLimit: under way, and waiting with runHereBatches. */
  #heldHere(queue: string): number {
    const running = this.#runsPerQueue.get(queue) ?? 0;
    return this.#runHereBatches.has(queue) ? running + (this.#waitingRuns.get(queue)?.length ?? 0) : running;
  }

  #backstopMs(queue: string): number {
    return this.#backstops.get(queue) ?? RUN_HERE_BACKSTOP_MS;
  }

  #runHereLimit(queue: string): number {
    return this.#runHereLimits.get(queue) ?? RUN_HERE_LIMIT;
  }

  /**
   * Runs the job here, with the others of its queue started in the same turn of the event loop as
   * one batch of the queue's batch size (as a worker would fetch them: jobs committed together by
   * concurrent transactions share one handler call), or, with the limit of runs of its queue under
   * way (a burst of windows closing together), once one of them ends: the runs here never exceed
   * the limit.
   */
  #startRun(queue: string, id: string, data: object, hasRow = true): void {
    // The backstop runs it, or for a job without a row its caller's claim.
    if (this.#stopped || !this.#handlers.has(queue)) return;
    const waiting = this.#waitingRuns.get(queue) ?? [];
    const job = { id, name: queue, data } as Job<object>;
    if (!hasRow) this.#rowless.add(job);
    waiting.push(job);
    this.#waitingRuns.set(queue, waiting);
    // setImmediate: after this turn's I/O callbacks (microseconds; setTimeout's 0 is about 2 ms).
    if (waiting.length === 1) setImmediate(() => this.#startWaiting(queue));
  }

  #startWaiting(queue: string): void {
    const handler = this.#handlers.get(queue);
    const waiting = this.#waitingRuns.get(queue) ?? [];
    if (this.#stopped || !handler) return void waiting.splice(0);
    const batchSize = this.#batchSizes.get(queue) ?? 1;
    const maxBatches = this.#runHereBatches.get(queue);
    for (;;) {
      // With runHereBatches, the waiting jobs already count in the limit: a free batch takes them.
      const free = maxBatches === undefined
        ? this.#runHereLimit(queue) - (this.#runsPerQueue.get(queue) ?? 0)
        : maxBatches - (this.#batchesPerQueue.get(queue) ?? 0) > 0
        ? batchSize
        : 0;
      if (!waiting.length || free <= 0) return;
      const batch = waiting.splice(0, Math.min(batchSize, free));
      this.#runsPerQueue.set(queue, (this.#runsPerQueue.get(queue) ?? 0) + batch.length);
      this.#batchesPerQueue.set(queue, (this.#batchesPerQueue.get(queue) ?? 0) + 1);
      const run = this.#runHere(queue, handler, batch).finally(() => {
        this.#runs.delete(run);
        this.#runsPerQueue.set(queue, (this.#runsPerQueue.get(queue) ?? batch.length) - batch.length);
        this.#batchesPerQueue.set(queue, (this.#batchesPerQueue.get(queue) ?? 1) - 1);
        if (waiting.length) this.#startWaiting(queue);
      });
      this.#runs.add(run);
    }
  }

  async #runHere(queue: string, handler: (jobs: Job<object>[]) => Promise<void>, jobs: Job<object>[]) {
    const ids = jobs.filter((job) => !this.#rowless.has(job)).map((job) => job.id);
    try {
      await handler(jobs);
    } catch (error) {
      // The handler logs its own errors.
      this.#logger.debug("job run here failed", { queue, error: String(error) });
      const rowless = jobs.filter((job) => this.#rowless.has(job));
      if (rowless.length) await this.#insertRetries(queue, rowless);
      if (!ids.length) return;
      try {
        // A failed attempt of the job, as if a worker had fetched it: pg-boss retries it after the
        // queue's delay, by a worker, or (retries spent) sends it to the dead letter. Marked as
        // started first, so that the retry counts this run.
        await this.boss.getDb().executeSql(markStartedSql(BOSS_SCHEMA), [queue, ids]);
        await this.boss.fail(queue, ids, { message: String(error) });
      } catch {
        // The backstop stays.
      }
      return;
    }
    if (!ids.length) return;
    try {
      // The jobs were never fetched: completed from the created state.
      await this.boss.complete(queue, ids, undefined, { includeQueued: true });
    } catch (error) {
      // The backstop runs them again later; the handlers are idempotent.
      this.#logger.warn("job run here not completed", { queue, error: String(error) });
    }
  }

  /**
   * A failed run of jobs without a row: they are inserted (their ids kept), due after the queue's
   * retry delay, for a worker to retry. Until that insert succeeds (the database may be what
   * failed) it is tried again, every few seconds, as long as this process runs; once it stops, the
   * callers' claims hand the work on.
   */
  async #insertRetries(queue: string, jobs: Job<object>[]): Promise<void> {
    const delayS = this.#retryDelays.get(queue) ?? 0;
    const rows = jobs.map((job) => ({ id: job.id, data: job.data, startAfter: delayS }));
    for (let pauseMs = 1000; !this.#stopped; pauseMs = Math.min(pauseMs * 2, 30_000)) {
      try {
        await this.boss.insert(queue, rows);
        this.#wakeLater(queue, delayS * 1000 + 3);
        return;
      } catch (error) {
        this.#logger.warn("failed run's jobs not inserted yet", { queue, error: String(error) });
        await this.#pause(pauseMs);
      }
    }
  }

  /** Resolves after `ms`, or at once when the queue stops. */
  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pauses.delete(end);
        resolve();
      }, ms);
      const end = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#pauses.add(end);
    });
  }

  /** Registers work to wait for on stop, after the workers stopped (e.g. attempts still in flight). */
  onStop(drain: (timeoutMs: number) => Promise<void>): void {
    this.#drains.push(drain);
  }

  /**
   * One job of `queue` is due (committed): wakes one of this process' idle workers of it (in turn, so jobs due
   * together spread over them), or when none is idle one busy worker, which fetches again as soon
   * as its job is done. One at a time, since each woken worker runs a fetch query.
   */
  wake(queue: string): void {
    if (this.#stopped) return;
    // Counted only where a worker of the queue can take it; elsewhere the NOTIFY hands it on.
    if (this.#handlers.has(queue)) this.#due.set(queue, (this.#due.get(queue) ?? 0) + 1);
    this.#notifyOne(queue);
  }

  #notifyOne(queue: string): void {
    if (this.#stopped) return;
    const workers = this.boss.getWipData().filter((w) => w.name === queue);
    if (!workers.length) {
      // No worker of it here (a process that only serves HTTP): the processes that have one hear it
      // on pg-boss's own NOTIFY channel.
      this.boss.getDb().executeSql(
        `SELECT pg_notify('pgboss_' || left(encode(sha224($1::bytea), 'hex'), 24), $2)`,
        [BOSS_SCHEMA, queue],
      ).catch((error) => this.#logger.warn("job wake-up NOTIFY failed", { queue, error: String(error) }));
      return;
    }
    const idle = workers.filter((w) => w.count === 0);
    const pool = idle.length ? idle : workers;
    const turn = (this.#turns.get(queue) ?? 0) + 1;
    this.#turns.set(queue, turn);
    this.boss.notifyWorker(pool[turn % pool.length].id);
  }

  /** The workers of `queue` holding jobs fetch again right after them (a backlog is being worked). */
  #wakeBusy(queue: string): void {
    if (this.#stopped) return;
    for (const worker of this.boss.getWipData()) {
      if (worker.name === queue && worker.count > 0) this.boss.notifyWorker(worker.id);
    }
  }

  /** `counted` false: a second try for a job already announced (not one more job due). */
  #wakeLater(queue: string, ms: number, counted = true): void {
    if (this.#stopped) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (counted) this.wake(queue);
      else if ((this.#due.get(queue) ?? 0) > 0) this.#notifyOne(queue);
    }, ms);
    this.#timers.add(timer);
  }

  /** Stops the workers (letting the jobs in hand finish, up to `timeoutMs`) and closes the pool. */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const end of this.#pauses) end();
    this.#pauses.clear();
    // Waiting for the workers here rather than with stop({ graceful }) , which polls every 500 ms.
    const queues = new Set(this.boss.getWipData().map((w) => w.name));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...queues].map((q) => this.boss.offWork(q, { wait: true }))),
      new Promise((resolve) => timer = setTimeout(resolve, timeoutMs)),
    ]);
    clearTimeout(timer);
    // Runs started here finish too (their jobs stay as the backstop if they do not).
    await Promise.race([
      Promise.allSettled([...this.#runs]),
      new Promise((resolve) => timer = setTimeout(resolve, timeoutMs)),
    ]);
    clearTimeout(timer);
    await Promise.all(this.#drains.map((drain) => drain(timeoutMs)));
    // Jobs still in hand after the timeout are failed, so pg-boss retries them later.
    await this.boss.stop({ graceful: false });
    this.#logger.debug("pg-boss stopped");
  }
}
