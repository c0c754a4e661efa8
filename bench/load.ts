/**
 * A closed-loop HTTP load generator, run as its own process so it does not share the server's
 * event loop: `deno run -A bench/load.ts '<json options>'` prints one JSON line of results.
 */
import { cpuTimeMs } from "./_cpu.ts";

interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  /** A server process whose CPU time (utime + stime) over the measured window is reported as cpuMs. */
  cpuPid?: number;
}

const opts = JSON.parse(Deno.args[0]) as LoadOptions;

async function run(durationMs: number, record: boolean) {
  const latencies: number[] = [];
  let errors = 0;
  let requests = 0;
  const end = performance.now() + durationMs;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const res = await fetch(opts.url, {
        method: opts.method ?? "GET",
        headers: opts.headers,
        body: opts.body,
      });
      await res.arrayBuffer();
      if (!res.ok) errors++;
      requests++;
      if (record) latencies.push(performance.now() - t0);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return { latencies, errors, requests, elapsedMs: performance.now() - started };
}

const warmup = await run(opts.warmupMs, false);
const cpuBefore = opts.cpuPid ? cpuTimeMs(opts.cpuPid) : 0;
const { latencies, errors, elapsedMs } = await run(opts.durationMs, true);
const cpuAfter = opts.cpuPid ? cpuTimeMs(opts.cpuPid) : 0;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
console.log(JSON.stringify({
  requests: latencies.length,
  errors,
  rps: latencies.length / (elapsedMs / 1000),
  p50: pct(0.5),
  p99: pct(0.99),
  // Requests of the warm-up and the measured window together (to share out counts taken around both).
  allRequests: warmup.requests + latencies.length,
  ...(opts.cpuPid ? { cpuMs: cpuAfter - cpuBefore } : {}),
}));
