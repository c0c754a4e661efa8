/**
 * The baseline of bench/subscriptions.ts: the least a live feed can do. One LISTEN connection, and
 * each notification's payload sent as it is to every open WebSocket (no protocol, no
 * authentication, no reads). Prints "ready" once listening on PORT.
 */
import pg from "pg";
import { LIVE_CHANNEL } from "../src/live/hub.ts";

const sockets = new Set<WebSocket>();
const client = new pg.Client({ connectionString: Deno.env.get("DATABASE_URL") });
await client.connect();
await client.query(`LISTEN ${LIVE_CHANNEL}`);
client.on("notification", (n) => {
  for (const socket of sockets) if (socket.readyState === WebSocket.OPEN) socket.send(n.payload ?? "");
});
Deno.serve({
  hostname: "127.0.0.1",
  port: Number(Deno.env.get("PORT")),
  onListen: () => console.log("ready"),
}, (req) => {
  const { socket, response } = Deno.upgradeWebSocket(req);
  socket.onopen = () => {
    sockets.add(socket);
    socket.send("subscribed");
  };
  socket.onclose = () => sockets.delete(socket);
  return response;
});
