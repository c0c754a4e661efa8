/**
 * An open-loop load generator for the inbound benchmark: `rate` requests per second for
 * `durationMs`, each sent on schedule whatever the earlier ones are doing (as Meta does), run as its
 * own process. With `inbound`, each request is a signed WhatsApp text message of a NEW sender (a new
 * conversation), whose text carries a token (`<run>-<i>`) the model and Graph stand-ins read back;
 * without, a POST of the same bytes to `url` (the bare-handler baseline). Prints one JSON line:
 * requests, errors, p50, p99 (ms) and, per token, the epoch ms (performance.timeOrigin based, the
 * same clock as the stand-ins') at which its 200 arrived.
 */
import { hubSignature } from "../src/channels/whatsapp/signature.ts";

interface RateOptions {
  url: string;
  rate: number;
  durationMs: number;
  run: string;
  inbound?: { appSecret: string; phoneNumberId: string };
}

const opts = JSON.parse(Deno.args[0]) as RateOptions;
const epochMs = () => performance.timeOrigin + performance.now();

/** A new sender per message: every message opens its own conversation. */
function message(token: string, i: number): string {
  const from = `55${opts.run.replace(/\D/g, "").slice(-4).padStart(4, "0")}${String(i).padStart(7, "0")}`;
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [{
      id: "102290129340398",
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: {
            display_phone_number: "15550783881",
            phone_number_id: opts.inbound?.phoneNumberId ?? "",
          },
          contacts: [{ profile: { name: `Customer ${i}` }, wa_id: from }],
          messages: [{
            from,
            id: `wamid.${token}`,
            timestamp: "1749416383",
            type: "text",
            text: { body: `tok:${token}: does it come in another color?` },
          }],
        },
      }],
    }],
  });
}

const latencies: number[] = [];
const accepted: Record<string, number> = {};
let errors = 0;
const inflight: Promise<void>[] = [];
const start = performance.now();
const total = Math.floor(opts.rate * opts.durationMs / 1000);
for (let i = 0; i < total; i++) {
  const due = start + (i * 1000) / opts.rate;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const token = `${opts.run}-${i}`;
  const body = message(token, i);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (opts.inbound) headers["x-hub-signature-256"] = hubSignature(body, opts.inbound.appSecret);
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
