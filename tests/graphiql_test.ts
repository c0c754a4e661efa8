/**
 * GraphiQL in development works offline: the page carries its scripts and styles inline and names
 * no other origin to load anything from. It opens with the headers a call needs: an example, or with
 * the console's session, the workspace the console acts in, the session cookie and the CSRF header.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { consoleSuite, signIn } from "./_helpers/browser.ts";

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

/** The options GraphiQL's page starts with (the JSON of its start call). */
function openingOptions(html: string) {
  const at = html.indexOf(`document.querySelector('#root'),`);
  assert.ok(at > 0, "the page starts GraphiQL on #root");
  const json = html.slice(at).match(/#root'\),\s*(\{.*\}),\s*\)/s);
  assert.ok(json, "the start call's options");
  return JSON.parse(json[1]);
}

Deno.test("GraphiQL opens with an example of the headers, or with the console's session's workspace and CSRF header", async () => {
  const t = await startTestApp({ APP_ENV: "development" }, { workers: false });
  try {
    const { workspaceId, owner } = await t.seed.workspace("Acme");
    const page = async (headers: Record<string, string> = {}) => {
      const res = await t.app.fetch(
        new Request("http://test.local/graphql", { headers: { accept: "text/html", ...headers } }),
      );
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("cache-control"), "no-store");
      return await res.text();
    };
    const example = openingOptions(await page());
    assert.deepEqual(JSON.parse(example.headers), {
      authorization: "Bearer <the token of POST /api/auth/login>",
      "x-workspace-id": "<a workspace id>",
    });
    assert.deepEqual(example.additionalHeaders, { "x-switchboard-csrf": "1" });
    assert.equal(example.credentials, "same-origin");
    assert.equal(example.switchboardWorkspaces, undefined);

    const signIn = await t.anon.post("/console/session", { email: owner.email, password: owner.password }, {
      "x-switchboard-csrf": "1",
    });
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0];
    const html = await page({ cookie });
    const signedIn = openingOptions(html);
    assert.deepEqual(JSON.parse(signedIn.headers), { "x-workspace-id": workspaceId });
    assert.deepEqual(signedIn.additionalHeaders, { "x-switchboard-csrf": "1" });
    assert.deepEqual(signedIn.switchboardWorkspaces, [workspaceId]);
    assert.ok(!html.includes(cookie.split("=")[1]), "the token is not in the page");

    // A session that has ended opens with the example.
    await t.anon.delete("/console/session", { cookie, "x-switchboard-csrf": "1" });
    assert.deepEqual(JSON.parse(openingOptions(await page({ cookie })).headers), JSON.parse(example.headers));
  } finally {
    await t.close();
  }
});

Deno.test("GraphiQL in Chromium calls with the console's cookie, CSRF header and the workspace the console chose", async () => {
  const suite = await consoleSuite({ APP_ENV: "development" });
  try {
    const { owner } = await suite.t.seed.workspace("Acme");
    const beta = await owner.client.post("/api/workspaces", { name: "Beta" });
    assert.equal(beta.status, 201);
    const { page, incidents, refused, close } = await suite.open("/");
    await signIn(page, owner);
    await page.getByLabel("Workspace").selectOption({ label: "Beta" });
    // GraphiQL asks for the schema as soon as it opens, with its opening headers.
    const call = page.waitForRequest((r) => r.url().endsWith("/graphql") && r.method() === "POST");
    await page.goto("/graphql");
    const request = await call;
    const headers = await request.allHeaders();
    assert.equal(headers["x-workspace-id"], beta.body.id);
    assert.equal(headers["x-switchboard-csrf"], "1");
    assert.match(headers.cookie ?? "", /^switchboard_session=/);
    assert.equal(headers.authorization, undefined);
    const answer = await request.response();
    assert.equal(answer?.status(), 200);
    assert.ok((await answer!.json()).data.__schema, "the schema was read");
    // The headers editor shows them.
    await page.getByText(beta.body.id).first().waitFor();
    assert.deepEqual(refused, []);
    assert.deepEqual(incidents, []);
    await close();
  } finally {
    await suite.close();
  }
});
