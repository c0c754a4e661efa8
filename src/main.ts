/** Entry point of `deno task start`: configuration, listen, signals. */
import { exitMisconfigured, listenProblem, startApp } from "./startup.ts";

const app = await startApp({ listens: true });
const config = app.deps.config;
let port: number;
try {
  ({ port } = await app.start());
} catch (e) {
  // The port was free a moment ago: another process took it since.
  const problem = listenProblem(e, config);
  if (!problem) throw e;
  await app.stop();
  exitMisconfigured(problem);
}
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
