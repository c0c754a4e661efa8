/**
 * The app's pg pool, with two duties beyond pg's own (and faster writes: joinCorkedWrites, and
 * statements sent ahead of a query in its round trip, GuardedClient.sendAhead):
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
import { Buffer } from "node:buffer";
import { Parser } from "pg-protocol/dist/parser";
import { serialize } from "pg-protocol/dist/serializer";
import { DataRowMessage } from "pg-protocol/dist/messages";
import { ClientGoneError, currentScope } from "../shared/request_scope.ts";

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

interface Stream {
  emit(event: string | symbol, ...args: unknown[]): boolean;
  destroy(error?: Error): void;
  cork(): void;
  uncork(): void;
  write(chunk: Uint8Array, ...rest: unknown[]): boolean;
}

interface Wire {
  stream: Stream;
  attachListeners(stream: Stream): void;
  emit(event: string, ...args: unknown[]): boolean;
  _emitMessage: boolean;
}

const TEXT_OID = 25;
const DATA_ROW = 0x44;
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

/**
 * pg-protocol's parser, except that the data rows of a query run with TEXT_AS_BYTES keep their
 * fields as bytes (copied out: the parser reuses its buffer for the next chunk).
 */
function bytesParser(bytesWanted: () => boolean): Parser {
  const parser = new Parser();
  const own = parser as unknown as {
    handlePacket(offset: number, code: number, length: number, bytes: Buffer): unknown;
  };
  const handle = own.handlePacket.bind(parser);
  own.handlePacket = (offset, code, length, bytes) => {
    if (code !== DATA_ROW || !bytesWanted()) return handle(offset, code, length, bytes);
    const fields: (Uint8Array | null)[] = new Array(bytes.readInt16BE(offset));
    let at = offset + 2;
    for (let i = 0; i < fields.length; i++) {
      const size = bytes.readInt32BE(at);
      at += 4;
      if (size < 0) {
        fields[i] = null;
        continue;
      }
      const field = new Uint8Array(size);
      field.set(bytes.subarray(at, at + size));
      fields[i] = field;
      at += size;
    }
    return new DataRowMessage(length, fields as unknown as string[]);
  };
  return parser;
}

/** Makes an exception thrown while a `data` event is handled destroy the stream with it. */
function guardData(stream: Stream): void {
  const emit = stream.emit;
  stream.emit = function (this: Stream, event, ...args) {
    if (event !== "data") return emit.call(this, event, ...args);
    try {
      return emit.call(this, event, ...args);
    } catch (error) {
      this.destroy(error instanceof Error ? error : new Error(String(error)));
      return false;
    }
  };
}

/**
 * pg corks the socket around a query's messages (parse, bind, describe, execute, sync) so they
 * leave together. Deno's node:net sends a corked batch through its writev path, which costs more
 * of this process' CPU per query than one write of the joined bytes (about a fifth of pg's CPU per
 * query, measured on a loop of one-row queries): the batch is joined and written once.
 * `ahead()` gives messages to put before the next batch (GuardedClient.sendAhead), or null.
 */
function joinCorkedWrites(stream: Stream, ahead: () => Uint8Array | null): void {
  const write = stream.write.bind(stream);
  let held: Uint8Array[] | null = null;
  stream.cork = () => {
    held ??= [];
  };
  const flush = () => {
    const batch = held;
    held = null;
    if (!batch?.length) return;
    const before = ahead();
    if (before) batch.unshift(before);
    write(batch.length === 1 ? batch[0] : Buffer.concat(batch));
  };
  stream.uncork = flush;
  stream.write = (chunk, ...rest) => {
    if (held === null) return write(chunk, ...rest);
    // With a callback or an encoding (pg's end message), after what is held, as written.
    if (rest.length > 0) {
      flush();
      return write(chunk, ...rest);
    }
    held.push(chunk);
    return true;
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
    const wire = this.connection as unknown as Wire;
    const client = this as unknown as { _getActiveQuery(): { types?: unknown } | null | undefined };
    // pg's own attachListeners (connection.js), with that parser.
    wire.attachListeners = (stream) => {
      guardData(stream);
      joinCorkedWrites(stream, () => {
        const ahead = this.#ahead;
        this.#ahead = null;
        return ahead;
      });
      const parser = bytesParser(() => client._getActiveQuery()?.types === TEXT_AS_BYTES);
      (stream as unknown as { on(event: "data", listener: (chunk: Buffer) => void): void }).on(
        "data",
        (chunk) =>
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
            if (wire._emitMessage) wire.emit("message", message);
            wire.emit(message.name === "error" ? "errorMessage" : message.name, message);
          }),
      );
    };
  }

  /**
   * Sends `statements` (without parameters) ahead of the next query, which must have parameters
   * (the extended protocol): their Parse, Bind and Execute go in the query's write, before its own
   * messages and under its Sync, so they cost no round trip of their own. Their answers are
   * consumed here; if one fails, the server skips the rest and the query, and the query fails with
   * that error. For BEGIN before a transaction's first statement (db/fast_path.ts).
   */
  sendAhead(statements: readonly string[]): void {
    this.#ahead = Buffer.concat(
      statements.flatMap((text) => [serialize.parse({ text }), serialize.bind(), serialize.execute()]),
    );
    this.#aheadAnswers = statements.length * 3;
  }

  /** Statements given to sendAhead that no query has taken out yet. */
  get sendingAhead(): boolean {
    return this.#ahead !== null;
  }
}

/** The socket of a checked-out client: destroying it ends the connection. */
const streamOf = (client: pg.PoolClient) => (client as unknown as { connection: Wire }).connection.stream;

const ignore = () => {};

/**
 * Asks PostgreSQL to cancel the statement `client`'s backend runs: the protocol's CancelRequest
 * (its process id and secret key) on a new connection to the same server, answered by none.
 */
export function cancelStatement(client: pg.ClientBase): void {
  const { processID, secretKey, host, port } = client as unknown as {
    processID: number | null;
    secretKey: number | null;
    host: string;
    port: number;
  };
  if (processID == null || secretKey == null) return;
  const socket = host.startsWith("/")
    ? createConnection(`${host}/.s.PGSQL.${port}`)
    : createConnection(port, host);
  socket.on("error", ignore);
  socket.on("connect", () => socket.end(serialize.cancel(processID, secretKey)));
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
      streamOf(client).destroy();
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
