/**
 * src/shared/tcp_reset.ts against the Deno it was written for: a server WebSocket whose client
 * stops reading keeps its connection and kernel buffer after Deno's own close, and `reset` ends
 * the connection (the client sees what it had received, then the reset; our socket leaves the
 * kernel's table). Fails on a Deno upgrade, so that the need for the module is looked at again.
 */
import assert from "node:assert/strict";
import { canReset, CHECKED_DENO_VERSION, reset } from "../src/shared/tcp_reset.ts";
import { addressKey, readTable } from "../src/shared/tcp_peers.ts";
import { eventually } from "./_helpers/receiver.ts";

/** A Deno.serve WebSocket server and one raw client of it that never reads. */
async function stalledClient() {
  let accepted: { socket: WebSocket; remote: Deno.NetAddr } | undefined;
  const closed = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request, info) => {
    const remote = info.remoteAddr;
    const { socket, response } = Deno.upgradeWebSocket(request);
    socket.onopen = () => accepted = { socket, remote };
    socket.onclose = () => closed.resolve();
    return response;
  });
  const port = server.addr.port;
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(
    `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${btoa("0123456789abcdef")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  ));
  await conn.read(new Uint8Array(1024)); // the 101 response
  const { socket, remote } = await eventually(() => Promise.resolve(accepted));
  // More than the kernel's buffers on both sides take: the rest waits in Deno's write queue.
  const chunk = "x".repeat(64 * 1024);
  for (let i = 0; i < 200; i++) socket.send(chunk);
  /** Our side of the connection in the kernel's table: its state and bytes not yet sent. */
  const ours = () => {
    const states = new Map<string, string>();
    readTable(Deno.readTextFileSync("/proc/net/tcp"), port, states);
    return states.get(addressKey(remote.hostname, remote.port)!);
  };
  const hex = (n: number) => `:${n.toString(16).toUpperCase().padStart(4, "0")}`;
  const unsent = () => {
    const row = Deno.readTextFileSync("/proc/net/tcp").split("\n").map((l) => l.trim().split(/\s+/))
      .find(([, local, peer]) => local?.endsWith(hex(port)) && peer?.endsWith(hex(remote.port)));
    return row ? parseInt(row[4].split(":")[0], 16) : 0;
  };
  // The kernel's send buffer fills (to a few MB) while the rest waits in Deno's write queue.
  await eventually(() => Promise.resolve(unsent() > 1024 * 1024 && socket.bufferedAmount > 0 || undefined));
  return {
    socket,
    remote,
    port,
    conn,
    ours,
    unsent,
    closed: closed.promise,
    /** Reads what the client was sent until the connection ends: the bytes and how it ended. */
    async drain(): Promise<{ bytes: number; end: string }> {
      const buffer = new Uint8Array(1 << 20);
      let bytes = 0;
      for (;;) {
        const n = await conn.read(buffer).catch((error: Error) => error.name);
        if (n === null) return { bytes, end: "EOF" };
        if (typeof n === "string") return { bytes, end: n };
        bytes += n;
      }
    },
    async stop() {
      try {
        conn.close();
      } catch { /* reset already */ }
      await server.shutdown();
    },
  };
}

Deno.test("tcp_reset was checked with this Deno version", () => {
  assert.equal(
    Deno.version.deno,
    CHECKED_DENO_VERSION,
    "look again at what src/shared/tcp_reset.ts says of Deno",
  );
  assert.equal(Deno.build.os, "linux");
  assert.ok(canReset(), "libc through FFI");
});

Deno.test("Deno's close() leaves a client that stopped reading connected with its kernel buffer full", async () => {
  const client = await stalledClient();
  try {
    client.socket.close(1013, "Slow consumer");
    // The close frame is queued behind what the client did not read.
    assert.equal(client.socket.readyState, WebSocket.CLOSING);
    assert.equal(client.ours(), "01", "still ESTABLISHED");
    assert.ok(client.unsent() > 1024 * 1024, `${client.unsent()} bytes unsent in the kernel`);
  } finally {
    reset([{ remote: client.remote, localPort: client.port }]);
    await client.stop();
  }
});

Deno.test("reset ends the connection of a client that stopped reading: it gets what it had, then the reset", async () => {
  const client = await stalledClient();
  try {
    assert.equal(client.ours(), "01");
    assert.equal(reset([{ remote: client.remote, localPort: client.port }]), 1);
    await client.closed;
    await eventually(() => Promise.resolve(client.ours() === undefined || undefined));
    const { bytes, end } = await client.drain();
    assert.ok(bytes > 0, "what reached the client's buffer is still read");
    assert.equal(end, "ConnectionReset");
    // Another port's connection, or one already gone, is left alone.
    assert.equal(reset([{ remote: client.remote, localPort: client.port }]), 0);
  } finally {
    await client.stop();
  }
});
