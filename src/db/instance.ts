/**
 * This server process as the database knows it: a `ServerInstance` row, whose id names the claims
 * the process takes (a reply's, a send's), and a session advisory lock on that id, held on a
 * connection of its own for as long as the process lives. PostgreSQL releases the lock the moment
 * that connection goes, which is the moment a killed process' socket closes: whether a claim's
 * holder is alive is whether its lock is held (`LIVE_INSTANCES`), known at once and never from a
 * timeout. A process that only stalls (a long model call, a busy event loop) keeps its connection
 * and so its claims. A host that vanishes without closing its sockets is noticed by PostgreSQL's
 * own TCP keepalives, which this connection's session sets short (KEEPALIVES: idle 10 s, then 3
 * probes 5 s apart, so about 25 s); ours are on too, so this side notices a vanished database.
 *
 * The lock connection must reach PostgreSQL itself, not a pooler in transaction mode (as pg-boss'
 * LISTEN connection must).
 */
import pg from "pg";
import { hostname } from "node:os";
import type { Logger } from "../shared/logger.ts";

/** The first key of the advisory locks of server processes ("SW"); the second is the instance id. */
export const INSTANCE_LOCK_CLASS = 0x5357;

/**
 * The ids of the server processes alive now (their lock held), as a subquery. pg_locks shows a
 * two-key advisory lock with the first key as `classid`, the second as `objid` and `objsubid` 2.
 */
export const LIVE_INSTANCES = `SELECT l.objid::int AS id FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.classid = ${INSTANCE_LOCK_CLASS} AND l.objsubid = 2 AND l.granted
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

const KEEPALIVE_S = 10;
/** The server's keepalives on this session: PostgreSQL drops a vanished client after about 25 s. */
const KEEPALIVES =
  `-c tcp_keepalives_idle=${KEEPALIVE_S} -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3`;
const RECONNECT_MS = 1_000;

/** A statement this process may run on its lock connection (which never waits on the pool). */
export type Probe = <R>(sql: string, values?: unknown[]) => Promise<R[] | null>;

export interface Instance {
  /** This process' id: what its claims are stamped with. */
  readonly id: number;
  /** Runs a small statement on the lock connection; null while it is down (being re-established). */
  probe: Probe;
  /** Releases the lock (the process stops: its claims are free for others at once). */
  stop(): Promise<void>;
}

/**
 * Registers this process and takes its lock; resolves once the lock is held. If the lock
 * connection is lost (a database restart), it is re-established and the lock taken again: in
 * between, other processes may take this one's claims over, and the guards of its writes (a reply
 * stores only under its own claim) make sure that nothing is then sent twice.
 */
export async function registerInstance(databaseUrl: string, logger: Logger): Promise<Instance> {
  let client: pg.Client | null = null;
  let stopped = false;
  let reconnect: ReturnType<typeof setTimeout> | undefined;
  const open = async (id?: number): Promise<{ client: pg.Client; id: number }> => {
    const c = new pg.Client({
      connectionString: databaseUrl,
      application_name: "switchboard-instance",
      options: KEEPALIVES,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_S * 1000,
    });
    c.on("error", () => {}); // reported by `end` below
    await c.connect();
    try {
      if (id === undefined) {
        const { rows } = await c.query<{ id: number }>(
          `INSERT INTO "ServerInstance" (host, pid) VALUES ($1, $2) RETURNING id`,
          [hostname(), Deno.pid],
        );
        id = rows[0].id;
      }
      await c.query(`SELECT pg_advisory_lock($1, $2)`, [INSTANCE_LOCK_CLASS, id]);
      return { client: c, id };
    } catch (error) {
      await c.end().catch(() => {});
      throw error;
    }
  };
  const watch = (c: pg.Client, id: number) => {
    c.once("end", () => {
      if (stopped || client !== c) return;
      client = null;
      logger.warn("instance lock connection lost; taking the lock again", { instance: id });
      const retry = () => {
        reconnect = setTimeout(() => {
          open(id).then((next) => {
            if (stopped) return void next.client.end().catch(() => {});
            client = next.client;
            watch(next.client, id);
            logger.info("instance lock held again", { instance: id });
          }, retry);
        }, RECONNECT_MS);
      };
      retry();
    });
  };
  const first = await open();
  client = first.client;
  watch(first.client, first.id);
  return {
    id: first.id,
    probe: async <R>(sql: string, values: unknown[] = []) => {
      const c = client;
      if (!c) return null;
      try {
        return (await c.query(sql, values)).rows as R[];
      } catch (error) {
        if (client !== c) return null; // lost meanwhile
        throw error;
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(reconnect);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}

/**
 * Looks, at once and then every `intervalMs`, for claims of dead processes with `orphansSql` (one
 * row `{ found }`, run on the lock connection: the pool is not touched), and calls `recover` when
 * there are some. Returns the function that stops it (once a pass under way has ended). The period
 * is a process timer rather than a pg-boss schedule: cron's resolution is a minute.
 */
export function watchOrphanedClaims(
  deps: { instance: Pick<Instance, "probe">; logger: Logger },
  options: { orphansSql: string; intervalMs: number; what: string; recover: () => Promise<void> },
): () => Promise<void> {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let current: Promise<void> = Promise.resolve();
  const pass = () => current = look();
  const look = async () => {
    try {
      const [row] = (await deps.instance.probe<{ found: boolean }>(options.orphansSql)) ?? [];
      if (!row?.found || stopped) return;
      await options.recover();
    } catch (error) {
      if (!stopped) deps.logger.warn(`looking for ${options.what} of stopped processes failed`, { error });
    } finally {
      if (!stopped) timer = setTimeout(pass, options.intervalMs);
    }
  };
  pass();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await current;
  };
}
