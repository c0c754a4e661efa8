/**
 * The real server for the benchmark, configured from the environment like `deno task start`.
 * With BENCH_CPU_PROFILE=<file>, V8's CPU profile since the start (or the previous SIGUSR2) is written there on SIGUSR2
 * (open it in Chrome DevTools). Deno 2.9 has no `--cpu-prof`, so an inspector session does it;
 * SIGUSR2 rather than SIGTERM because the process may be gone before an async SIGTERM handler ends.
 */
import { Session } from "node:inspector/promises";
import { loadConfig } from "../src/config.ts";
import { buildApp } from "../src/app.ts";
import { createLogger } from "../src/shared/logger.ts";

const profileTo = Deno.env.get("BENCH_CPU_PROFILE");
const profiler = profileTo ? new Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post("Profiler.enable");
  await profiler.post("Profiler.start");
  Deno.addSignalListener("SIGUSR2", async () => {
    const { profile } = await profiler.post("Profiler.stop");
    await Deno.writeTextFile(`${profileTo}.part`, JSON.stringify(profile));
    await Deno.rename(`${profileTo}.part`, profileTo!);
    // Profiling goes on: the next SIGUSR2 writes the profile since this one (a phase of a bench).
    await profiler.post("Profiler.start");
  });
}

const app = await buildApp(loadConfig(Deno.env.toObject()), {
  bootstrap: false,
  logger: createLogger((Deno.env.get("BENCH_LOG_LEVEL") ?? "error") as "error"),
  // BENCH_WORKERS=0: this process only serves (another one, or none, runs the jobs).
  workers: Deno.env.get("BENCH_WORKERS") !== "0",
});
await app.start();
console.log("ready");
