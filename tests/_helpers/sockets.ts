/**
 * WebSockets below the graphql-ws client, for the live limits: a socket's `connection_init`
 * outcome, a close awaited, and an upgrade written by hand over TCP whose client reads (or stops
 * reading) the server's frames itself.
 */
import { eventually } from "./receiver.ts";

/** A socket's outcome of `connection_init`: the acknowledged socket, or the close code. */
export async function initOutcome(
  port: number,
  token: string,
  workspaceId: string,
): Promise<WebSocket | number> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, "graphql-transport-ws");
  await new Promise((resolve) => socket.onopen = resolve);
  const outcome = new Promise<WebSocket | number>((resolve) => {
    socket.onclose = (e) => resolve(e.code);
    socket.onmessage = (e) => JSON.parse(String(e.data)).type === "connection_ack" && resolve(socket);
  });
  socket.send(JSON.stringify({
    type: "connection_init",
    payload: { authorization: `Bearer ${token}`, "x-workspace-id": workspaceId },
  }));
  return await outcome;
}

/** An acknowledged socket, once the server accepts one again (a socket of the credential closed). */
export function initOnceAccepted(port: number, token: string, workspaceId: string): Promise<WebSocket> {
  return eventually(async () => {
    const outcome = await initOutcome(port, token, workspaceId);
    return outcome instanceof WebSocket ? outcome : undefined;
  });
}

/** Closes a socket and resolves once the close handshake is over. */
export async function closeSocket(socket: WebSocket) {
  const closed = new Promise((resolve) => socket.onclose = resolve);
  socket.close();
  await closed;
}

/** A client frame (masked, as RFC 6455 requires of clients). */
function clientFrame(opcode: number, payload: Uint8Array): Uint8Array {
  const mask = crypto.getRandomValues(new Uint8Array(4));
  const head = payload.length < 126
    ? [0x80 | opcode, 0x80 | payload.length]
    : [0x80 | opcode, 0x80 | 126, payload.length >> 8, payload.length & 0xff];
  const out = new Uint8Array(head.length + 4 + payload.length);
  out.set(head);
  out.set(mask, head.length);
  for (let i = 0; i < payload.length; i++) out[head.length + 4 + i] = payload[i] ^ mask[i % 4];
  return out;
}

/**
 * A graphql-transport-ws upgrade of /graphql written by hand over TCP: the response's status and
 * head, then the server's frames as the test reads them. A client that stops reading lets the
 * kernel's buffers fill and the server's writes queue up.
 */
export async function rawUpgrade(port: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  await conn.write(new TextEncoder().encode(
    `GET /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
  ));
  let bytes = new Uint8Array(0);
  let ended = false;
  const read = async (): Promise<boolean> => {
    const chunk = new Uint8Array(64 * 1024);
    const n = await conn.read(chunk).catch(() => null);
    if (n === null) return !(ended = true);
    const next = new Uint8Array(bytes.length + n);
    next.set(bytes);
    next.set(chunk.subarray(0, n), bytes.length);
    bytes = next;
    return true;
  };
  const text = () => new TextDecoder().decode(bytes);
  while (!text().includes("\r\n\r\n")) if (!(await read())) throw new Error("no upgrade response");
  const head = text().slice(0, text().indexOf("\r\n\r\n") + 4);
  bytes = bytes.slice(new TextEncoder().encode(head).length);

  /** The next server frame (never masked): [opcode, payload], or null once the connection ended. */
  const frame = async (): Promise<[number, Uint8Array] | null> => {
    for (;;) {
      if (bytes.length >= 2) {
        let length = bytes[1] & 0x7f;
        let at = 2;
        if (length === 126) [length, at] = [(bytes[2] << 8) | bytes[3], 4];
        else if (length === 127) {
          length = Number(new DataView(bytes.buffer, bytes.byteOffset + 2, 8).getBigUint64(0));
          at = 10;
        }
        if (bytes.length >= at + length) {
          const out: [number, Uint8Array] = [bytes[0] & 0x0f, bytes.slice(at, at + length)];
          bytes = bytes.slice(at + length);
          return out;
        }
      }
      if (ended || !(await read())) return null;
    }
  };
  const close = () => {
    try {
      conn.close();
    } catch { /* already closed */ }
  };
  return {
    status: Number(head.split(" ")[1]),
    head,
    /** The client's end of the connection (its port tells it apart in the kernel's table). */
    localAddr: conn.localAddr as Deno.NetAddr,
    frame,
    /** Every frame until the server ends the connection. */
    async frames(): Promise<Array<[number, Uint8Array]>> {
      const out: Array<[number, Uint8Array]> = [];
      for (let got = await frame(); got; got = await frame()) out.push(got);
      close();
      return out;
    },
    /** The rest of a refused upgrade's response: `length` bytes, or until the server ends it. */
    async rest(length = Infinity): Promise<Uint8Array> {
      while (bytes.length < length && !ended && await read());
      close();
      return bytes;
    },
    sendJson: (message: unknown) =>
      conn.write(clientFrame(0x1, new TextEncoder().encode(JSON.stringify(message)))),
    /** Answers the server's close frame with its code, so the server's socket closes too. */
    answerClose: (payload: Uint8Array) => conn.write(clientFrame(0x8, payload.slice(0, 2))).catch(() => {}),
    close,
  };
}
