/**
 * An open-loop load generator for the inbound benchmark: `rate` requests per second for
 * `durationMs`, each sent on schedule whatever the earlier ones are doing (as Meta does), run as its
 * own process. With `inbound`, each request is a new signed WhatsApp text message (its own wamid,
 * one of 50 senders); without, a GET of `url`. Prints one JSON line: requests, errors, p50, p99 (ms).
 */
import { hubSignature } from "../src/channels/whatsapp/signature.ts";

interface RateOptions {
  url: string;
  rate: number;
  durationMs: number;
  inbound?: { appSecret: string; phoneNumberId: string; run: string };
}

const opts = JSON.parse(Deno.args[0]) as RateOptions;

function message(i: number): string {
  const from = `5511900${String(i % 50).padStart(5, "0")}`;
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [{
      id: "102290129340398",
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: { display_phone_number: "15550783881", phone_number_id: opts.inbound!.phoneNumberId },
          contacts: [{ profile: { name: `Customer ${i % 50}` }, wa_id: from }],
          messages: [{
            from,
            id: `wamid.${opts.inbound!.run}-${i}`,
            timestamp: "1749416383",
            type: "text",
            text: { body: `message ${i}` },
          }],
        },
      }],
    }],
  });
}

const latencies: number[] = [];
let errors = 0;
const inflight: Promise<void>[] = [];
const start = performance.now();
const total = Math.floor(opts.rate * opts.durationMs / 1000);
for (let i = 0; i < total; i++) {
  const due = start + (i * 1000) / opts.rate;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const init: RequestInit = opts.inbound
    ? (() => {
      const body = message(i);
      return {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "x-hub-signature-256": hubSignature(body, opts.inbound!.appSecret),
        },
      };
    })()
    : {};
  const t0 = performance.now();
  inflight.push(
    fetch(opts.url, init).then(async (res) => {
      await res.arrayBuffer();
      if (res.status !== 200) errors++;
      latencies.push(performance.now() - t0);
    }, () => {
      errors++;
    }),
  );
}
await Promise.all(inflight);
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
console.log(JSON.stringify({ requests: latencies.length, errors, p50: pct(0.5), p99: pct(0.99) }));
