/**
 * The Graph API stand-in of `deno task bench templates`, as its own process: a business account's
 * message templates in Meta's shape (its "Get templates" reference example), TEMPLATES of them,
 * listed at most 100 a page with `paging.cursors` and `paging.next`. Prints "ready <port>".
 */
import { metaTemplate } from "../tests/_helpers/templates.ts";

const TEMPLATES = Number(Deno.env.get("TEMPLATES") ?? 6000);
const PAGE = 100;

/** Meta's example template, in two languages and two categories, a tenth still PENDING review. */
const template = (n: number) =>
  metaTemplate(n, {
    language: n % 3 ? "en_US" : "pt_BR",
    status: n % 10 ? "APPROVED" : "PENDING",
    category: n % 4 ? "MARKETING" : "UTILITY",
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
