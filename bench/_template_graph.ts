/**
 * The Graph API stand-in of `deno task bench templates`, as its own process: a business account's
 * message templates in Meta's shape (its "Get templates" reference example), TEMPLATES of them,
 * listed at most 100 a page with `paging.cursors` and `paging.next`. Prints "ready <port>".
 */
const TEMPLATES = Number(Deno.env.get("TEMPLATES") ?? 6000);
const PAGE = 100;

const template = (n: number) => ({
  name: `seasonal_promotion_${n}`,
  parameter_format: n % 2 ? "POSITIONAL" : "NAMED",
  components: [
    { type: "HEADER", format: "TEXT", text: "Our {{1}} is on!", example: { header_text: ["Summer Sale"] } },
    {
      type: "BODY",
      text: "Shop now through {{1}} and use code {{2}} to get {{3}} off of all merchandise.",
      example: { body_text: [["the end of August", "25OFF", "25%"]] },
    },
    { type: "FOOTER", text: "Use the buttons below to manage your marketing subscriptions" },
    {
      type: "BUTTONS",
      buttons: [
        { type: "QUICK_REPLY", text: "Unsubscribe from Promos" },
        { type: "URL", text: "Shop", url: "https://example.com/shop/{{1}}", example: ["summer"] },
      ],
    },
  ],
  language: n % 3 ? "en_US" : "pt_BR",
  status: n % 10 ? "APPROVED" : "PENDING",
  category: n % 4 ? "MARKETING" : "UTILITY",
  id: String(546151681022936 + n),
});

const all = Array.from({ length: TEMPLATES }, (_, n) => template(n));

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  const url = new URL(req.url);
  if (!url.pathname.endsWith("/message_templates")) return new Response("not found", { status: 404 });
  const limit = Math.min(PAGE, Number(url.searchParams.get("limit") ?? 25));
  const from = Number(url.searchParams.get("after") ?? 0);
  const data = all.slice(from, from + limit);
  const after = from + data.length;
  const next = new URL(url);
  next.searchParams.set("after", String(after));
  return Response.json({
    data,
    paging: {
      cursors: { before: String(from), after: String(after) },
      ...(after < all.length ? { next: next.href } : {}),
    },
  });
});
console.log(`ready ${server.addr.port}`);
