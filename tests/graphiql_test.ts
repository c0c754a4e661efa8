/**
 * GraphiQL in development works offline: the page carries its scripts and styles inline and names
 * no other origin to load anything from.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";

Deno.test("GraphiQL (APP_ENV=development) loads nothing from outside the server", async () => {
  const t = await startTestApp({ APP_ENV: "development" });
  try {
    const res = await t.app.fetch(
      new Request("http://test.local/graphql", { headers: { accept: "text/html" } }),
    );
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/html/);
    const html = await res.text();
    assert.match(html, /renderYogaGraphiQL/, "the GraphiQL bundle is in the page");
    // Every src/href attribute of the page's own tags (inline scripts and styles left out: their
    // text is code, not markup): inline (data:, blob:) or none at all.
    const markup = html.replace(/(<(script|style)\b[^>]*>)[\s\S]*?(<\/\2>)/gi, "$1$3");
    const loads = [...markup.matchAll(/<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*["']?([^"' >]+)/gi)]
      .map((m) => m[3]);
    assert.deepEqual(loads.filter((u) => !/^(data|blob):/.test(u)), []);
    assert.doesNotMatch(html, /unpkg\.com|jsdelivr|cdn\./i);
  } finally {
    await t.close();
  }
});
