/** The real server for the benchmark, configured from the environment like `deno task start`. */
import { loadConfig } from "../src/config.ts";
import { buildApp } from "../src/app.ts";
import { createLogger } from "../src/shared/logger.ts";

const app = await buildApp(loadConfig(Deno.env.toObject()), {
  bootstrap: false,
  logger: createLogger("error"),
  // BENCH_WORKERS=0: this process only serves (another one, or none, runs the jobs).
  workers: Deno.env.get("BENCH_WORKERS") !== "0",
});
await app.start();
console.log("ready");
