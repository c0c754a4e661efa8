/**
 * Resets the TCP connection of a server WebSocket whose client stopped reading, so that the kernel
 * frees what it holds for it (its send buffer grows to about 4 MB) and the client sees the reset.
 *
 * Why: Deno (2.9.6) cannot let such a connection go. Every frame written to a socket of
 * `Deno.upgradeWebSocket` is a task holding the socket's resource until the kernel takes the
 * frame; a client that reads nothing never lets the first of them finish. `WebSocket.close()`
 * queues its close frame behind them, and removing the resource itself (the private
 * `core.tryClose(rid)`) only stops the read side: the connection stays ESTABLISHED with its buffer
 * full for as long as the client keeps it open (tests/tcp_reset_test.ts shows both). No member of
 * Deno's WebSocket, public or private, reaches the socket.
 *
 * What this module relies on instead, the only place that does (tests/tcp_reset_test.ts fails when
 * any of it changes, or when Deno is upgraded, so that the need for it is looked at again):
 * - Linux: `/proc/self/fd` lists the process' descriptors;
 * - libc through Deno's FFI (`Deno.dlopen`, which needs `--allow-ffi`; `-A` gives it):
 *   `getpeername` and `getsockname` to find the descriptor of the connection from the client's
 *   address to our port, `setsockopt(SO_LINGER, {on, 0})` so that its close resets it instead of
 *   waiting on the unsent bytes, and `shutdown(SHUT_RDWR)`, which wakes Deno's pending write with
 *   EPIPE and its read with end of file: Deno then drops the resource and closes the descriptor
 *   itself. The descriptor is never closed here (Deno owns it).
 * The lookup and the two calls run in one synchronous stretch on the thread that owns the sockets,
 * so the descriptor cannot be closed and reused by another socket in between.
 *
 * Elsewhere, or without the permission, `reset` does nothing and says so (false).
 */
import { addressKey } from "./tcp_peers.ts";

/** The Deno version these facts were checked with (tests/tcp_reset_test.ts compares). */
export const CHECKED_DENO_VERSION = "2.9.6";

const SOL_SOCKET = 1;
const SO_LINGER = 13;
const SHUT_RDWR = 2;
const AF_INET = 2;
const AF_INET6 = 10;

const SYMBOLS = {
  getpeername: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  shutdown: { parameters: ["i32", "i32"], result: "i32" },
} as const;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** glibc, then musl's names. */
const LIBC_NAMES = ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"];

let libc: Libc | null | undefined;

function openLibc(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (Deno.build.os !== "linux") return libc;
  for (const name of LIBC_NAMES) {
    try {
      libc = Deno.dlopen(name, SYMBOLS).symbols;
      break;
    } catch { /* not this name, or no --allow-ffi */ }
  }
  return libc;
}

/** Whether `reset` can work here (Linux with libc and the FFI permission). */
export function canReset(): boolean {
  return openLibc() !== null;
}

/** A connection to reset: the client's address, and our listening port it connected to. */
export interface Connection {
  remote: Deno.NetAddr;
  localPort: number;
}

const address = new Uint8Array(128);
const length = new Uint32Array(1);
const lengthBytes = new Uint8Array(length.buffer);

/** The `addressKey` of a descriptor's peer or own address, or undefined (not an inet socket). */
function socketKey(call: Libc["getpeername"], fd: number): string | undefined {
  length[0] = address.length;
  if (call(fd, address, lengthBytes) !== 0) return undefined;
  const family = address[0] | (address[1] << 8);
  const port = (address[2] << 8) | address[3];
  if (family === AF_INET) return addressKey(address.subarray(4, 8).join("."), port);
  if (family !== AF_INET6) return undefined;
  const words: string[] = [];
  for (let i = 8; i < 24; i += 2) words.push(((address[i] << 8) | address[i + 1]).toString(16));
  return addressKey(words.join(":"), port);
}

const localPortOf = (c: Libc, fd: number): number | undefined => {
  const key = socketKey(c.getsockname, fd);
  return key === undefined ? undefined : Number(key.slice(key.lastIndexOf("|") + 1));
};

/**
 * Resets each connection that is still open: its descriptor is found by the client's address and
 * our port, set to linger 0 and shut down. One pass over the descriptors serves them all. Returns
 * how many were found.
 */
export function reset(connections: readonly Connection[]): number {
  const c = openLibc();
  if (!c || !connections.length) return 0;
  const wanted = new Map<string, number>();
  for (const { remote, localPort } of connections) {
    const key = addressKey(remote.hostname, remote.port);
    if (key !== undefined) wanted.set(key, localPort);
  }
  let found = 0;
  const linger = new Uint8Array(new Int32Array([1, 0]).buffer);
  for (const entry of Deno.readDirSync("/proc/self/fd")) {
    const fd = Number(entry.name);
    const key = socketKey(c.getpeername, fd);
    if (key === undefined) continue;
    const localPort = wanted.get(key);
    if (localPort === undefined || localPortOf(c, fd) !== localPort) continue;
    wanted.delete(key);
    c.setsockopt(fd, SOL_SOCKET, SO_LINGER, linger, linger.length);
    c.shutdown(fd, SHUT_RDWR);
    found++;
    if (!wanted.size) break;
  }
  return found;
}
