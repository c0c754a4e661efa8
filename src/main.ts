/** Entry point of `deno task start`: configuration, listen, signals. */
import { ConfigError, loadConfig } from "./config.ts";
import { buildApp } from "./app.ts";
import { StartupError } from "./db/embedded.ts";

let config;
try {
  config = loadConfig(Deno.env.toObject());
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(e.message);
    Deno.exit(78); // EX_CONFIG
  }
  throw e;
}

let app;
try {
  app = await buildApp(config);
} catch (e) {
  if (e instanceof StartupError) {
    console.error(e.message);
    Deno.exit(78); // EX_CONFIG: nothing to retry until the operator changes something
  }
  throw e;
}
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
