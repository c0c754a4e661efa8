/** Open-loop posts from a separate process (bench/load_rate.ts), for the inbound and media benches. */
import type { RateOptions } from "./load_rate.ts";

/** What the poster reports of one run (epoch ms on the stand-ins' clock). */
export interface LoadOut {
  requests: number;
  errors: number;
  p50: number;
  p99: number;
  firstSentAt: number;
  lastAcceptedAt: number;
  /** Per token, when its 200 arrived. */
  accepted: Record<string, number>;
}

/** Runs bench/load_rate.ts with `options` and waits for its report; throws when a request failed. */
export async function postOpenLoop(options: RateOptions): Promise<LoadOut> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "bench/load_rate.ts", JSON.stringify(options)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const r = JSON.parse(new TextDecoder().decode(out.stdout)) as LoadOut;
  if (r.errors) throw new Error(`${options.run}: ${r.errors} failed requests`);
  return r;
}
