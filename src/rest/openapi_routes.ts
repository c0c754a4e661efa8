/**
 * GET /api/openapi.json (the document of src/rest/openapi.ts, built once) and GET /api/docs, a
 * reference page rendering it with Swagger UI from the pinned npm package `swagger-ui-dist`. Its
 * files are read from the installed package once and served from /api/docs/assets/: the page loads
 * nothing from another origin, and its CSP allows scripts from this server only.
 */
import { Hono } from "hono";
import { getAbsoluteFSPath } from "swagger-ui-dist";
import type { Capability } from "../shared/capability.ts";
import { openApiDocument } from "./openapi.ts";

export const OPENAPI_PATH = "/api/openapi.json";
export const DOCS_PATH = "/api/docs";
export const DOCS_ASSETS = "/api/docs/assets";

/** The page's policy: our own scripts only (no inline ones); Swagger UI sets inline styles and data: icons. */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

// Relative URLs: the page is /api/docs, so these resolve under /api/ behind any path prefix too.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard REST API</title>
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/init.js"></script>
</body>
</html>
`;

// In a file of its own: the CSP allows no inline script. validatorUrl null: no call to swagger.io.
const INIT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "openapi.json",
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    validatorUrl: null,
  });
});
`;

/** The files of swagger-ui-dist the page uses, with their media types. */
const PACKAGE_FILES: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  type: string;
}

/** The page's assets, read from the installed package (once, when the routes are built). */
function loadAssets(): Map<string, Asset> {
  const dir = getAbsoluteFSPath() as string;
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(PACKAGE_FILES)) {
    assets.set(name, { body: Deno.readFileSync(`${dir}/${name}`), type });
  }
  assets.set("init.js", { body: new TextEncoder().encode(INIT), type: "text/javascript; charset=utf-8" });
  return assets;
}

/** The document and reference page routes. Public: the document describes the API, not its data. */
export function openApiRoutes(capabilities: readonly Capability[], options: { version?: string } = {}): Hono {
  const document = JSON.stringify(openApiDocument(capabilities, options));
  const assets = loadAssets();
  const r = new Hono();

  r.get(OPENAPI_PATH, () =>
    new Response(document, {
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache" },
    }));
  r.get(DOCS_PATH, () =>
    new Response(PAGE, {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": DOCS_CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-cache",
      },
    }));
  for (const [name, asset] of assets) {
    r.get(`${DOCS_ASSETS}/${name}`, () =>
      new Response(asset.body, {
        headers: {
          "content-type": asset.type,
          "x-content-type-options": "nosniff",
          "cache-control": "public, max-age=86400",
        },
      }));
  }
  return r;
}
