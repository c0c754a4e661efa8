/**
 * Every private part of pg and pg-protocol this app relies on, in one place (db/pool.ts calls the
 * functions below). They were read in pg PG_VERIFIED and pg-protocol PG_PROTOCOL_VERIFIED;
 * tests/package_internals_test.ts fails when deno.lock holds other versions (read them again, then
 * move the constants), and checks that each member below is still there.
 *
 * pg:
 * - `Client#connection` (lib/connection.js), pg's end of the wire: its `attachListeners(stream)`,
 *   which pg calls with each stream it reads the server from (the socket, then the TLS stream over
 *   it), is replaced (readServerWith), to parse with the parser below behind a guard; what it
 *   parses is handed on as pg's own does: `emit("message")` while `_emitMessage` is set, then
 *   `emit(<message name>)` (`errorMessage` for an error). Its `stream`, the socket: destroyed to
 *   stop a read (socketOf).
 * - `Client#_getActiveQuery()` (lib/client.js): the query under way, whose `types` say whether its
 *   text columns are wanted as bytes (activeQueryTypes).
 * - `Client#processID` and `Client#secretKey`, the backend's cancel key (BackendKeyData), with
 *   `host` and `port`: the CancelRequest sent on a connection of its own (cancelTargetOf).
 * - lib/query.js corks the socket around an extended query's messages (Parse ... Sync) and uncorks
 *   it after them; lib/connection.js `end()` writes its Terminate with a callback (joinCorkedWrites).
 *
 * pg-protocol:
 * - `dist/parser` `Parser`, with its private `handlePacket(offset, code, length, bytes)`, which
 *   parses one message at `offset` of `bytes`: wrapped so that a DataRow keeps its fields as bytes
 *   (bytesParser); `parse(chunk, callback)` is the public method pg's reader calls.
 * - `dist/messages` `DataRowMessage(length, fields)`: the message whose `fields` pg's client hands
 *   to each column's type parser (Uint8Arrays here, where pg-protocol gives strings).
 * - `dist/serializer` `serialize`: `parse`, `bind`, `execute` and `cancel`. Public (the package's
 *   root re-exports it), imported by path because the import map maps only `pg-protocol/`.
 */
import type pg from "pg";
import { Buffer } from "node:buffer";
import { Parser } from "pg-protocol/dist/parser";
import { serialize } from "pg-protocol/dist/serializer";
import { type BackendMessage, DataRowMessage } from "pg-protocol/dist/messages";

export type { BackendMessage };

/** The pg version whose private parts were read (deno.lock's must be the same). */
export const PG_VERIFIED = "8.23.1";
/** The pg-protocol version whose private parts were read (deno.lock's must be the same). */
export const PG_PROTOCOL_VERIFIED = "1.16.1";

/** What is used of the streams pg reads and writes (a node:net or node:tls socket). */
export interface PgStream {
  emit(event: string | symbol, ...args: unknown[]): boolean;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  destroy(error?: Error): void;
  cork(): void;
  uncork(): void;
  write(chunk: Uint8Array, ...rest: unknown[]): boolean;
}

interface Wire {
  stream: PgStream;
  attachListeners(stream: PgStream): void;
  emit(event: string, ...args: unknown[]): boolean;
  _emitMessage: boolean;
}

const wireOf = (client: pg.ClientBase) => (client as unknown as { connection: Wire }).connection;

/**
 * Has `client` read its server with `attach` instead of pg's own reader: `attach(stream, deliver)`
 * is called with each stream pg reads from, and gives each message it parses to `deliver`, which
 * hands it to pg as pg's reader does. Call it in the client's constructor, before it connects.
 */
export function readServerWith(
  client: pg.Client,
  attach: (stream: PgStream, deliver: (message: BackendMessage) => void) => void,
): void {
  const wire = wireOf(client);
  const deliver = (message: BackendMessage) => {
    if (wire._emitMessage) wire.emit("message", message);
    wire.emit(message.name === "error" ? "errorMessage" : message.name, message);
  };
  wire.attachListeners = (stream) => attach(stream, deliver);
}

/** The socket of a client's connection: destroying it ends the connection. */
export const socketOf = (client: pg.ClientBase): PgStream => wireOf(client).stream;

/** The `types` of the query `client` runs now (undefined when none, or none given). */
export function activeQueryTypes(client: pg.ClientBase): unknown {
  return (client as unknown as { _getActiveQuery(): { types?: unknown } | null | undefined })
    ._getActiveQuery()
    ?.types;
}

/** Where and how to cancel the statement `client`'s backend runs; null before the server said. */
export interface CancelTarget {
  host: string;
  port: number;
  /** The protocol's CancelRequest for that backend. */
  request: Uint8Array;
}

export function cancelTargetOf(client: pg.ClientBase): CancelTarget | null {
  const { processID, secretKey, host, port } = client as unknown as {
    processID: number | null;
    secretKey: number | null;
    host: string;
    port: number;
  };
  if (processID == null || secretKey == null) return null;
  return { host, port, request: serialize.cancel(processID, secretKey) };
}

/** Parse, Bind and Execute of each statement (without parameters), to write before a query's own. */
export function statementMessages(statements: readonly string[]): Uint8Array {
  return Buffer.concat(
    statements.flatMap((text) => [serialize.parse({ text }), serialize.bind(), serialize.execute()]),
  );
}

const DATA_ROW = 0x44;

/** What pg's reader calls of a parser. */
export interface MessageParser {
  parse(chunk: Buffer, callback: (message: BackendMessage) => void): void;
}

/**
 * pg-protocol's parser, except that while `bytesWanted()` a data row keeps its fields as bytes
 * (copied out: the parser reuses its buffer for the next chunk), which pg then gives to the
 * query's type parsers as they are.
 */
export function bytesParser(bytesWanted: () => boolean): MessageParser {
  const parser = new Parser();
  const own = parser as unknown as {
    handlePacket(offset: number, code: number, length: number, bytes: Buffer): BackendMessage;
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
    return new DataRowMessage(length, fields);
  };
  return parser;
}

/**
 * pg corks the socket around a query's messages (parse, bind, describe, execute, sync) so they
 * leave together. Deno's node:net sends a corked batch through its writev path, which costs more
 * of this process' CPU per query than one write of the joined bytes (about a fifth of pg's CPU per
 * query, measured on a loop of one-row queries): the batch is joined and written once.
 * `ahead()` gives messages to put before the next batch (GuardedClient.sendAhead), or null.
 */
export function joinCorkedWrites(stream: PgStream, ahead: () => Uint8Array | null): void {
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
