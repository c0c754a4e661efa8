/** Entry point of `deno task start`: configuration, listen, signals. */
import { startApp } from "./startup.ts";

const app = await startApp();
const config = app.deps.config;
const { port } = await app.start();
app.deps.logger.info("listening", { url: `http://${config.host}:${port}`, publicUrl: config.publicUrl });

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  app.deps.logger.info("shutting down");
  await app.stop();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", shutdown);
Deno.addSignalListener("SIGTERM", shutdown);
