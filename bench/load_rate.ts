/**
 * The poster process of the inbound and media benchmarks (bench/_poster.ts starts it): `rate`
 * requests per second for `durationMs`, each sent on schedule whatever the earlier ones are doing
 * (as Meta does). With `inbound`, each request is a signed WhatsApp message (bench/_meta.ts: a text,
 * or with `kind` "voice" a voice note) of a NEW sender (a new conversation), carrying a token
 * (`<run>-<i>`) the stand-ins read back; without, a POST of the same bytes to `url` (the
 * bare-handler baseline). Senders are `55` + `senders` (4 digits; by default the run's last digits)
 * + i. Prints one JSON line: requests, errors, p50, p99 (ms) and, per token, the epoch ms
 * (performance.timeOrigin based, the same clock as the stand-ins') at which its 200 arrived.
 */
import { type MessageKind, metaMessageBody, postHeaders } from "./_meta.ts";

export interface RateOptions {
  url: string;
  rate: number;
  durationMs: number;
  run: string;
  inbound?: { appSecret: string; phoneNumberId: string };
  kind?: MessageKind;
  senders?: string;
}

const opts = JSON.parse(Deno.args[0]) as RateOptions;
const epochMs = () => performance.timeOrigin + performance.now();
const senders = (opts.senders ?? opts.run.replace(/\D/g, "").slice(-4)).padStart(4, "0");

/** A new sender per message: every message opens its own conversation. */
const message = (token: string, i: number) =>
  metaMessageBody({
    phoneNumberId: opts.inbound?.phoneNumberId ?? "",
    from: `55${senders}${String(i).padStart(7, "0")}`,
    i,
    token,
    kind: opts.kind,
  });

/**
 * Every message is built and signed before the schedule starts, and the process then idles for
 * SETTLE_MS: what this process does while it posts is the fetch alone, and its own start-up does not
 * compete with the server for the first messages of the round (the machine may have two cores).
 */
const SETTLE_MS = 500;
const total = Math.floor(opts.rate * opts.durationMs / 1000);
const prepared = Array.from({ length: total }, (_, i) => {
  const token = `${opts.run}-${i}`;
  const body = message(token, i);
  return { token, body, headers: postHeaders(body, opts.inbound?.appSecret) };
});
await new Promise((r) => setTimeout(r, SETTLE_MS));

const latencies: number[] = [];
const accepted: Record<string, number> = {};
let errors = 0;
const inflight: Promise<void>[] = [];
const start = performance.now();
for (let i = 0; i < total; i++) {
  const due = start + (i * 1000) / opts.rate;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const { token, body, headers } = prepared[i];
  const t0 = performance.now();
  inflight.push(
    fetch(opts.url, { method: "POST", body, headers }).then(async (res) => {
      await res.arrayBuffer();
      const t1 = performance.now();
      if (res.status !== 200) errors++;
      latencies.push(t1 - t0);
      accepted[token] = performance.timeOrigin + t1;
    }, () => {
      errors++;
    }),
  );
}
await Promise.all(inflight);
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
console.log(JSON.stringify({
  requests: latencies.length,
  errors,
  p50: pct(0.5),
  p99: pct(0.99),
  firstSentAt: performance.timeOrigin + start,
  lastAcceptedAt: epochMs(),
  accepted,
}));
