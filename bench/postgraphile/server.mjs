/**
 * PostGraphile 5 (amber preset) over the app's tables, for the nested-list benchmark. Run by
 * bench/nested.ts from a copy in .tools/pg5 (so its imports resolve there), under Node 24.
 * Env: DATABASE_URL, PORT. Prints "ready" once it listens on 127.0.0.1.
 */
import { createServer } from "node:http";
import { postgraphile } from "postgraphile";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";

const port = Number(process.env.PORT);
const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [
    // Pool of 10, as the bare baseline's.
    makePgService({ connectionString: process.env.DATABASE_URL, schemas: ["public"], poolConfig: { max: 10 } }),
  ],
  grafserv: { host: "127.0.0.1", port, graphqlPath: "/graphql", graphiql: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on("error", (e) => {
  console.error(e);
  process.exit(1);
});
await serv.addTo(server);
server.listen(port, "127.0.0.1", () => console.log("ready"));
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    server.close();
    pgl.release().finally(() => process.exit(0));
  });
}
