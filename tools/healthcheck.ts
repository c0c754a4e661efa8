/**
 * The image's HEALTHCHECK: GET /healthz on this container's own port (PORT; HOST when it names
 * one address). Exit 0 on 200, 1 otherwise. The Deno image has no curl or wget; Deno is there.
 */
const port = Deno.env.get("PORT") || "8080";
const host = Deno.env.get("HOST") || "";
// A wildcard bind is reached on loopback; an IPv6 address goes in brackets.
const address = ["", "0.0.0.0", "::"].includes(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
try {
  const res = await fetch(`http://${address}:${port}/healthz`, { signal: AbortSignal.timeout(4000) });
  await res.body?.cancel();
  if (res.status !== 200) console.error(`/healthz answered ${res.status}`);
  Deno.exit(res.status === 200 ? 0 : 1);
} catch (e) {
  console.error(`/healthz did not answer: ${e instanceof Error ? e.message : e}`);
  Deno.exit(1);
}
