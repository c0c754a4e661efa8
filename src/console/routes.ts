/**
 * The web console, served by the server itself: `GET /` (and `GET /invite/{token}` when a browser
 * asks for HTML) answers the page, `/console/*` its assets, built into web/dist/ by
 * `deno task setup` (web/build.ts). The page talks to the public GraphQL API only.
 */
import { Hono } from "hono";
import { problem } from "../rest/errors.ts";

const DIST = new URL("../../web/dist/", import.meta.url);

const ASSETS: Record<string, string> = {
  "app.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

/**
 * Nothing of the page comes from elsewhere or runs inline: an injected text could not load or run
 * a script even if it reached the DOM as HTML. `connect-src 'self'` covers the same-origin
 * WebSocket of the live feeds.
 */
const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "media-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

interface Asset {
  body: Uint8Array;
  etag: string;
}

/** An asset of web/dist, read once; null when the console has not been built. */
async function readAsset(name: string, cache: Map<string, Asset | null>): Promise<Asset | null> {
  if (cache.has(name)) return cache.get(name)!;
  let asset: Asset | null = null;
  try {
    const body = await Deno.readFile(new URL(name, DIST));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
    const etag = `"${Array.from(digest.slice(0, 12), (b) => b.toString(16).padStart(2, "0")).join("")}"`;
    asset = { body, etag };
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  // A missing build is not cached: `deno task web:build` beside a running server fixes it.
  if (asset) cache.set(name, asset);
  return asset;
}

const version = (etag: string) => etag.replaceAll('"', "");

/**
 * The page: a shell that loads the bundle, with versioned asset URLs so a new build is fetched. The
 * icon is the console's own (a browser asks for /favicon.ico only without this link).
 */
function page(versions: { js: string; css: string; icon: string | null }): string {
  const icon = versions.icon
    ? `<link rel="icon" type="image/svg+xml" href="/console/favicon.svg?v=${version(versions.icon)}">\n`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard</title>
${icon}<link rel="stylesheet" href="/console/style.css?v=${version(versions.css)}">
<script type="module" src="/console/app.js?v=${version(versions.js)}"></script>
</head>
<body><div id="app"><noscript>The Switchboard console needs JavaScript.</noscript></div></body>
</html>
`;
}

/** Whether the request asks for a page (a browser navigating) rather than JSON. */
function wantsHtml(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  return /(^|,)\s*text\/html\b/i.test(accept);
}

/**
 * The console's routes: `/`, `/invite/{token}` for browsers, `/console/app.js`, `/console/style.css`,
 * `/console/favicon.svg`.
 */
export function consoleRoutes(): Hono {
  const cache = new Map<string, Asset | null>();
  const r = new Hono();

  const servePage = async () => {
    const [js, css, icon] = await Promise.all(
      ["app.js", "style.css", "favicon.svg"].map((name) => readAsset(name, cache)),
    );
    if (!js || !css) {
      return problem(503, "UNAVAILABLE", "The console is not built: run `deno task setup`.");
    }
    return new Response(page({ js: js.etag, css: css.etag, icon: icon?.etag ?? null }), {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-cache",
        "content-security-policy": PAGE_POLICY,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
      },
    });
  };

  r.get("/", servePage);
  // The invite link opened in a browser: the console's invite screen. JSON clients fall through
  // to the API's answer.
  r.get("/invite/:token", async (c, next) => {
    if (!wantsHtml(c.req.raw)) return await next();
    return await servePage();
  });
  r.get("/console/:name", async (c) => {
    const name = c.req.param("name");
    const type = ASSETS[name];
    const asset = type ? await readAsset(name, cache) : null;
    if (!type || !asset) return problem(404, "NOT_FOUND", `No route for GET ${c.req.path}.`);
    const headers = {
      "content-type": type,
      etag: asset.etag,
      "x-content-type-options": "nosniff",
      // Versioned URLs (`?v=`) from the page: a browser keeps them; a bare URL is revalidated.
      "cache-control": c.req.query("v") ? "public, max-age=31536000, immutable" : "no-cache",
    };
    if (c.req.header("if-none-match") === asset.etag) return new Response(null, { status: 304, headers });
    return new Response(asset.body as Uint8Array<ArrayBuffer>, { headers });
  });
  return r;
}
