/**
 * The app's pg pool, with two duties beyond pg's own (and faster writes: joinCorkedWrites, and
 * statements sent ahead of a query in its round trip, GuardedClient.sendAhead). What it needs of
 * pg's and pg-protocol's private parts comes from ./pg_internals.ts, and from there only:
 *
 * - A fault inside the driver fails one statement, never the process. pg parses the server's
 *   messages in the socket's `data` callback; anything thrown there (pg-protocol refusing a field
 *   longer than V8's longest string, a listener's bug) would escape as an uncaught exception and
 *   end the process. Here it destroys that connection instead: its statement fails with the error
 *   and the pool discards the connection.
 * - A read run through `stoppedWhenClientGone` is stopped when the request's client goes away: it
 *   never starts when the client left while it waited for a connection (the connection, once
 *   given, goes back unused); under way, PostgreSQL is asked to cancel it (the protocol's
 *   CancelRequest, on a connection of its own: it works whatever the pool's state and the URL's
 *   settings) and the connection is destroyed (it may be mid-answer, so it cannot go back to the
 *   pool; the server, told to check its client while running a statement, also ends the backend
 *   within CLIENT_CHECK_MS). Either way the read fails with ClientGoneError, which nobody logs
 *   above debug. Writes are not stopped: a statement under way completes, as the request's next
 *   one is never sent.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createConnection } from "node:net";
import pg from "pg";
import { ClientGoneError, currentScope } from "../shared/request_scope.ts";
import {
  activeQueryTypes,
  bytesParser,
  cancelTargetOf,
  joinCorkedWrites,
  type PgStream,
  readServerWith,
  socketOf,
  statementMessages,
} from "./pg_internals.ts";

const stoppable = new AsyncLocalStorage<AbortSignal>();

/** Runs `read` so that its statements stop when the current request's client goes away. */
export function stoppedWhenClientGone<T>(read: () => Promise<T>): Promise<T> {
  const signal = currentScope()?.signal;
  // Awaited inside the run: Prisma's promises start their work only when awaited.
  return signal ? stoppable.run(signal, async () => await read()) : read();
}

/** How often a backend running a statement checks that its client is still connected. */
export const CLIENT_CHECK_MS = 500;

export interface PoolOptions {
  max: number;
  idleTimeoutMillis: number;
  /** false: the sessions' commits do not wait for the disk (synchronous_commit=off; see app.ts workerDeps). */
  synchronousCommit?: boolean;
}

const TEXT_OID = 25;
const utf8 = new TextDecoder();

/**
 * The `types` of a query whose `text` columns are wanted as bytes (a Uint8Array each, as PostgreSQL
 * sent them); its other columns are parsed as usual. For the read planner's answer: JSON of up to a
 * few MB that is only searched and copied into the HTTP response. As a string it was decoded, then
 * copied again where values are presented: two large strings a request, whose allocation in V8's
 * large-object space (and the marking it drives) cost about 1 ms of a 250 KB answer.
 */
export const TEXT_AS_BYTES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === TEXT_OID) return (value: Uint8Array) => value;
    const parse = pg.types.getTypeParser(oid, format as "text");
    return (value: Uint8Array) => parse(utf8.decode(value));
  }) as pg.CustomTypesConfig["getTypeParser"],
};

/** Makes an exception thrown while a `data` event is handled destroy the stream with it. */
function guardData(stream: PgStream): void {
  const emit = stream.emit;
  stream.emit = function (this: PgStream, event, ...args) {
    if (event !== "data") return emit.call(this, event, ...args);
    try {
      return emit.call(this, event, ...args);
    } catch (error) {
      this.destroy(error instanceof Error ? error : new Error(String(error)));
      return false;
    }
  };
}

/** The answers of a statement sent ahead (sendAhead), three each, consumed by the client itself. */
const AHEAD_ANSWERS: ReadonlySet<string> = new Set(["parseComplete", "bindComplete", "commandComplete"]);

/**
 * A pg client whose message parsing is guarded, whose corked writes are joined (plain and TLS
 * streams alike), which answers the text of TEXT_AS_BYTES queries as bytes, and which can send
 * statements ahead of a query in the query's own round trip (sendAhead). pg-boss's pool uses it
 * too (jobs/boss.ts).
 */
export class GuardedClient extends pg.Client {
  /** Parse, Bind and Execute of the statements to send ahead of the next query, or null. */
  #ahead: Uint8Array | null = null;
  /** Answers of statements sent ahead not consumed yet (three each). */
  #aheadAnswers = 0;

  constructor(config?: pg.ClientConfig) {
    super(config);
    // In place of pg's reader: guarded, writes joined, text as bytes for TEXT_AS_BYTES queries.
    readServerWith(this, (stream, deliver) => {
      guardData(stream);
      joinCorkedWrites(stream, () => {
        const ahead = this.#ahead;
        this.#ahead = null;
        return ahead;
      });
      const parser = bytesParser(() => activeQueryTypes(this) === TEXT_AS_BYTES);
      stream.on("data", (chunk) =>
        parser.parse(chunk, (message) => {
          if (this.#aheadAnswers > 0) {
            if (AHEAD_ANSWERS.has(message.name)) {
              this.#aheadAnswers--;
              return;
            }
            // Rows of a statement sent ahead are not asked for (no Describe): dropped.
            if (message.name === "dataRow") return;
            // The server skips the rest up to the query's Sync: its error is the query's.
            if (message.name === "error") this.#aheadAnswers = 0;
          }
          deliver(message);
        }));
    });
  }

  /**
   * Sends `statements` (without parameters) ahead of the next query, which must have parameters
   * (the extended protocol): their Parse, Bind and Execute go in the query's write, before its own
   * messages and under its Sync, so they cost no round trip of their own. Their answers are
   * consumed here; if one fails, the server skips the rest and the query, and the query fails with
   * that error. For BEGIN before a transaction's first statement (db/fast_path.ts).
   */
  sendAhead(statements: readonly string[]): void {
    this.#ahead = statementMessages(statements);
    this.#aheadAnswers = statements.length * 3;
  }

  /** Statements given to sendAhead that no query has taken out yet. */
  get sendingAhead(): boolean {
    return this.#ahead !== null;
  }
}

const ignore = () => {};

/**
 * Asks PostgreSQL to cancel the statement `client`'s backend runs: the protocol's CancelRequest
 * (its process id and secret key) on a new connection to the same server, answered by none.
 */
export function cancelStatement(client: pg.ClientBase): void {
  const target = cancelTargetOf(client);
  if (!target) return;
  const { host, port, request } = target;
  const socket = host.startsWith("/")
    ? createConnection(`${host}/.s.PGSQL.${port}`)
    : createConnection(port, host);
  socket.on("error", ignore);
  socket.on("connect", () => socket.end(request));
}

/** A connection of `pool`, unless `signal` aborts first: then ClientGoneError, and the connection goes back unused. */
function connectUnlessAborted(pool: pg.Pool, signal: AbortSignal): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => {
    let abandoned = false;
    const onAbort = () => {
      abandoned = true;
      reject(new ClientGoneError());
    };
    signal.addEventListener("abort", onAbort, { once: true });
    pool.connect().then((client) => {
      signal.removeEventListener("abort", onAbort);
      if (abandoned || signal.aborted) {
        client.release();
        reject(new ClientGoneError());
      } else resolve(client);
    }, (error) => {
      signal.removeEventListener("abort", onAbort);
      reject(error);
    });
  });
}

class AppPool extends pg.Pool {
  // pg's signature is overloaded; only the promise form is scoped (Prisma's adapter uses it).
  // deno-lint-ignore no-explicit-any
  override query(config: any, values?: any, callback?: any): any {
    const signal = stoppable.getStore();
    if (!signal || typeof values === "function" || typeof callback === "function") {
      return super.query(config, values, callback);
    }
    return this.#queryFor(signal, config, values);
  }

  async #queryFor(signal: AbortSignal, config: pg.QueryConfig, values?: unknown[]) {
    if (signal.aborted) throw new ClientGoneError();
    const client = await connectUnlessAborted(this, signal);
    if (signal.aborted) {
      client.release();
      throw new ClientGoneError();
    }
    const stop = () => {
      cancelStatement(client);
      socketOf(client).destroy();
    };
    // A dead connection also reports on the client; the statement's rejection carries the error.
    client.on("error", ignore);
    signal.addEventListener("abort", stop, { once: true });
    try {
      const result = await client.query(config, values);
      client.removeListener("error", ignore);
      client.release();
      return result;
    } catch (error) {
      // An error PostgreSQL answered (a read refused by its cut-off, say) leaves the connection ready
      // for the next statement. Discarded: after an error inside the driver or a stop, its state is unknown.
      if (error instanceof pg.DatabaseError && !signal.aborted) {
        client.removeListener("error", ignore);
        client.release();
      } else client.release(error instanceof Error ? error : true);
      // Stopped for a client that left (the connection ended, or the statement cancelled): not an error.
      if (signal.aborted) throw new ClientGoneError();
      throw error;
    } finally {
      signal.removeEventListener("abort", stop);
    }
  }
}

/** The pool of `createPrisma` (src/db/client.ts); created here so a caller may observe its clients. */
export function createPool(connectionString: string, options: PoolOptions): pg.Pool {
  return new AppPool({
    connectionString,
    max: options.max,
    idleTimeoutMillis: options.idleTimeoutMillis,
    // Not honoured when the URL names its own `options` (pg lets the URL win).
    options: `-c client_connection_check_interval=${CLIENT_CHECK_MS}` +
      (options.synchronousCommit === false ? " -c synchronous_commit=off" : ""),
    Client: GuardedClient,
  });
}
