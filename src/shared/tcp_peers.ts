/**
 * Learns that an HTTP client closed its TCP connection while its request still runs, from the
 * kernel's socket table (Linux `/proc/net/tcp` and `/proc/net/tcp6`).
 *
 * Why: Deno.serve (2.9.6) aborts `request.signal` on a disconnect only while it still watches the
 * socket, which its own HTTP/1.1 server does for requests without a body or whose whole request
 * came in its first read (about 512 bytes); for a POST with a real GraphQL query it learns of the
 * close only when it writes the response. The kernel knows earlier: our side of a connection whose
 * peer sent FIN is in CLOSE_WAIT, and one reset by the peer leaves the table.
 *
 * One timer serves every watched request and reads the table once per tick, only while some
 * request is watched. Elsewhere than Linux (no such table) nothing is watched.
 */
import ipaddr from "ipaddr.js";
import { detachedFromRequest } from "./request_scope.ts";

const CLOSE_WAIT = "08";
const LISTEN = "0A";

export interface PeerWatch {
  /** Aborted once the peer has closed (or reset) the connection. */
  readonly signal: AbortSignal;
  stop(): void;
}

interface Entry {
  /** The client's address as ipaddr.js prints it (IPv4-mapped IPv6 as IPv4) and its port. */
  key: string;
  controller: AbortController;
  /** Seen in the table at least once: its absence later means a reset, not a parsing miss. */
  seen: boolean;
}

const NEVER: PeerWatch = { signal: new AbortController().signal, stop() {} };

export class TcpPeerWatcher {
  readonly #entries = new Set<Entry>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #reading = false;
  readonly #enabled: boolean;
  readonly #table: string;
  readonly #localPort: number;

  /**
   * `listening`: the server's address (an IPv6 socket also holds IPv4 clients, in the tcp6
   * table); `intervalMs`: how often the table is read while some request is watched.
   */
  constructor(listening: Deno.NetAddr, private readonly intervalMs = 250) {
    this.#enabled = Deno.build.os === "linux";
    this.#table = listening.hostname.includes(":") ? "/proc/net/tcp6" : "/proc/net/tcp";
    this.#localPort = listening.port;
  }

  /** Watches the connection from `remote` to our port until `stop()`. */
  watch(remote: Deno.Addr): PeerWatch {
    if (!this.#enabled || remote.transport !== "tcp") return NEVER;
    const key = addressKey(remote.hostname, remote.port);
    if (key === undefined) return NEVER;
    const entry: Entry = { key, controller: new AbortController(), seen: false };
    this.#entries.add(entry);
    this.#schedule();
    return {
      signal: entry.controller.signal,
      stop: () => {
        this.#entries.delete(entry);
        if (this.#entries.size === 0) this.close();
      },
    };
  }

  /** Stops the timer (the server stops; or nothing is watched any more). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#reading) return;
    // Outside the request scope: the tick belongs to no request.
    const timer = detachedFromRequest(() => setTimeout(() => this.#tick(), this.intervalMs));
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  async #tick(): Promise<void> {
    this.#timer = undefined;
    this.#reading = true;
    // Requests that came in during the read may be missing from it: they wait for the next tick.
    const watched = [...this.#entries];
    const states = new Map<string, string>();
    let listed = false;
    try {
      listed = readTable(await Deno.readTextFile(this.#table).catch(() => ""), this.#localPort, states);
    } finally {
      this.#reading = false;
    }
    for (const entry of watched.filter((e) => this.#entries.has(e))) {
      const state = states.get(entry.key);
      if (state !== undefined) entry.seen = true;
      // Absent from a table that lists our listening socket: reset by its client, even before the
      // first look (a burst of clients that reset at once).
      if (state === CLOSE_WAIT || (state === undefined && (entry.seen || listed))) {
        this.#entries.delete(entry);
        entry.controller.abort();
      } else if (state === undefined) {
        // Not found, and the table is not the listening socket's: give up quietly.
        this.#entries.delete(entry);
      }
    }
    if (this.#entries.size) this.#schedule();
  }
}

/**
 * The state of each connection to `localPort` in a /proc/net/tcp{,6} table, by client key; true
 * when the table lists the socket listening on `localPort` (it is the server's table).
 */
export function readTable(text: string, localPort: number, into: Map<string, string>): boolean {
  let listening = false;
  // A cheap test first: a busy server's table has a line per socket.
  const portHex = `:${localPort.toString(16).toUpperCase().padStart(4, "0")} `;
  for (const line of text.split("\n")) {
    if (!line.includes(portHex)) continue;
    const [, local, remote, state] = line.trim().split(/\s+/);
    if (!local || !remote) continue;
    if (parseInt(local.slice(local.indexOf(":") + 1), 16) !== localPort) continue;
    if (state === LISTEN) {
      listening = true;
      continue;
    }
    const [hex, port] = remote.split(":");
    const bytes = hexAddressBytes(hex);
    if (bytes === undefined) continue;
    into.set(`${ipaddr.fromByteArray(bytes).toString()}|${parseInt(port, 16)}`, state);
  }
  return listening;
}

/** The key `readTable` uses for a client address (IPv4-mapped IPv6 as IPv4). */
export function addressKey(hostname: string, port: number): string | undefined {
  if (!ipaddr.isValid(hostname)) return undefined;
  return `${ipaddr.process(hostname).toString()}|${port}`;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The table prints an address as 32-bit words in host byte order (`0100007F` is 127.0.0.1 on
 * x86); an IPv4-mapped IPv6 address comes back as IPv4, as ipaddr.process gives it.
 */
function hexAddressBytes(hex: string): number[] | undefined {
  if (hex.length !== 8 && hex.length !== 32) return undefined;
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = [0, 2, 4, 6].map((i) => parseInt(hex.slice(w + i, w + i + 2), 16));
    bytes.push(...(LITTLE_ENDIAN ? word.reverse() : word));
  }
  if (bytes.some(Number.isNaN)) return undefined;
  const mapped = bytes.length === 16 && bytes.slice(0, 10).every((b) => b === 0) &&
    bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}
