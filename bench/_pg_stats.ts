/**
 * What the inbound and media benches read of their throwaway PostgreSQL: the cluster started with
 * pg_stat_statements (statements per message, noise-free), the CPU of its processes, and pg-boss'
 * own timings of each queue's jobs (wait for a worker, run).
 */
import pg_ from "pg";
import { startEmbeddedPostgres } from "../src/db/embedded.ts";
import { basename, dirname, resolve } from "node:path";
import { cpuTimeMs } from "./_cpu.ts";

/**
 * A throwaway cluster in `dataDir` with pg_stat_statements preloaded (tracking nested statements);
 * with `logTo`, PostgreSQL's log (checkpoints, autovacuum, statements over 30 ms) goes there.
 */
export function startStatsPostgres(dataDir: string, logTo?: string) {
  return startEmbeddedPostgres({
    dir: dataDir,
    database: "postgres",
    persistent: false,
    settings: [
      "shared_preload_libraries=pg_stat_statements",
      "pg_stat_statements.track=all",
      "pg_stat_statements.track_planning=on",
      ...(logTo
        ? [
          "log_checkpoints=on",
          "log_autovacuum_min_duration=0",
          "log_min_duration_statement=30",
          "log_line_prefix=%m ",
          // The server's own log file (the embedded cluster's usual one is removed with it).
          "logging_collector=on",
          `log_directory=${dirname(resolve(logTo))}`,
          `log_filename=${basename(logTo)}`,
          "log_file_mode=0644",
        ]
        : []),
    ],
  });
}

/** A connection to `databaseUrl` for the readings, with the pg_stat_statements extension created. */
export async function openStats(databaseUrl: string): Promise<pg_.Client> {
  const stats = new pg_.Client({ connectionString: databaseUrl });
  await stats.connect();
  await stats.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  return stats;
}

/** CPU ms of the postmaster's children (backends, WAL writer, ...) of the cluster in `dataDir`. */
export function postgresCpuMs(dataDir: string): number {
  const postmaster = Number(Deno.readTextFileSync(`${dataDir}/postmaster.pid`).split("\n")[0]);
  let total = cpuTimeMs(postmaster);
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === postmaster) total += cpuTimeMs(Number(entry.name));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Clears pg_stat_statements; the database's time now (the jobs created from then on are the run's). */
export async function resetStatements(stats: pg_.Client): Promise<Date> {
  await stats.query("SELECT pg_stat_statements_reset()");
  const { rows: [{ since }] } = await stats.query<{ since: Date }>("SELECT now() AS since");
  return since;
}

export interface StatementRow {
  calls: string;
  /** Time spent running the statement (planning excluded). */
  ms: number;
  /** Time spent planning it (a statement sent unnamed is planned on every call). */
  planMs: number;
  query: string;
}

/** The statements run since the last reset, most called first (the readings' own left out). */
export async function statementsRun(stats: pg_.Client): Promise<StatementRow[]> {
  const { rows } = await stats.query<StatementRow>(
    `SELECT calls::text, total_exec_time AS ms, total_plan_time AS "planMs", query FROM pg_stat_statements
      WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC`,
  );
  return rows;
}

/** All the calls of `rows`. */
export const statementCount = (rows: StatementRow[]) => rows.reduce((n, s) => n + Number(s.calls), 0);

/** BENCH_STATEMENTS=1: the 40 most called statements, per `unit` (of `per` units), on stderr. */
export function printStatements(rows: StatementRow[], per: number, unit: string): void {
  if (!Deno.env.get("BENCH_STATEMENTS")) return;
  for (const s of rows.slice(0, 40)) {
    console.error(
      `${(Number(s.calls) / per).toFixed(2)}/${unit} ${(s.ms / per).toFixed(3)} ms/${unit} run, ${
        (s.planMs / per).toFixed(3)
      } planning  ${s.query.replace(/\s+/g, " ").slice(0, 160)}`,
    );
  }
  const sum = (f: (s: StatementRow) => number) => (rows.reduce((t, s) => t + f(s), 0) / per).toFixed(3);
  console.error(
    `all statements: ${sum((s) => s.ms)} ms/${unit} run, ${sum((s) => s.planMs)} ms/${unit} planning`,
  );
}

/** One queue's jobs of a run, by the database's clock. */
export interface Hop {
  /** Share of the jobs run by the process that enqueued them (never fetched: a queue whose worker runs here, Jobs.send). */
  here: number;
  /** Fetched jobs only (null: none). */
  waitP50: number | null;
  waitP99: number | null;
  runP50: number;
  runP99: number;
  /** Completed jobs. */
  count: number;
}

/**
 * Per queue of `queues`, for the jobs created since `since` and completed: each one's wait for a
 * worker (due → fetched) and its run (fetched → completed; for a job run where it was enqueued,
 * never fetched: enqueued → completed), p50 / p99 in ms.
 */
export async function hopTimings(
  stats: pg_.Client,
  since: Date,
  queues: string[],
): Promise<Record<string, Hop>> {
  const { rows } = await stats.query<Hop & { queue: string }>(
    `SELECT name AS queue, avg((started_on IS NULL)::int)::float8 AS here,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_on - start_after)) * 1000
              AS "waitP50",
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM started_on - start_after)) * 1000
              AS "waitP99",
            percentile_cont(0.5) WITHIN GROUP (
              ORDER BY extract(epoch FROM completed_on - COALESCE(started_on, created_on))) * 1000 AS "runP50",
            percentile_cont(0.99) WITHIN GROUP (
              ORDER BY extract(epoch FROM completed_on - COALESCE(started_on, created_on))) * 1000 AS "runP99",
            count(*)::int AS count
       FROM pgboss.job
      WHERE created_on >= $1 AND state = 'completed' AND name = ANY($2)
      GROUP BY name`,
    [since, queues],
  );
  return Object.fromEntries(rows.map(({ queue, ...h }) => [queue, h]));
}
