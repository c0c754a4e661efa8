/**
 * The console's session cookie over HTTP and graphql-ws (the browser's side is in
 * console_sign_in_test.ts): what `POST /console/session` sets, what the cookie signs, the CSRF and
 * origin checks on it (403 CSRF_REFUSED, nothing run), Bearer clients untouched, and a revoked or
 * logged-out session's cookie refused.
 */
import assert from "node:assert/strict";
import { type Reply, startTestApp, type TestApp } from "./_helpers/app.ts";
import { assertProblem } from "./_helpers/problem.ts";

const OWN = "http://test.local";
const CSRF = { "x-switchboard-csrf": "1" };
const CREATE_AGENT = `mutation { createAgent(input: { name: "Via cookie", jobName: "Acme" }) { id } }`;

/** `POST /console/session` with email and password, as the console's page sends it. */
async function signIn(
  t: TestApp,
  who: { email: string; password: string },
  headers: Record<string, string> = { origin: OWN, ...CSRF },
) {
  return await t.anon.post("/console/session", { email: who.email, password: who.password }, headers);
}

/** The `name=value` of a Set-Cookie. */
const cookieOf = (res: Reply) => res.headers.get("set-cookie")!.split(";")[0];

async function agentNames(t: TestApp, workspaceId: string): Promise<string[]> {
  const rows = await t.app.deps.db.agent.findMany({ where: { workspaceId }, select: { name: true } });
  return rows.map((r) => r.name).sort();
}

Deno.test("the console's session cookie: set at sign-in, accepted from this origin only, writes need the CSRF header", async (s) => {
  const t = await startTestApp({}, { workers: false });
  try {
    const { workspaceId, owner } = await t.seed.workspace("Acme");
    const graphql = (cookie: string, headers: Record<string, string>, query = CREATE_AGENT) =>
      t.anon.post("/graphql", { query }, { cookie, "x-workspace-id": workspaceId, ...headers });

    let cookie = "";
    await s.step(
      "sign-in sets an httpOnly, SameSite=Strict cookie until the session's expiry; the body has no token",
      async () => {
        const res = await signIn(t, owner);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(Object.keys(res.body).sort(), ["user", "workspaces"]);
        assert.equal(res.body.user.email, owner.email);
        assert.deepEqual(res.body.workspaces, [{ id: workspaceId, name: "Acme", role: "OWNER" }]);
        assert.equal(res.headers.get("cache-control"), "no-store");
        const setCookie = res.headers.get("set-cookie")!;
        const [pair, ...attributes] = setCookie.split("; ");
        assert.match(pair, /^switchboard_session=[\w-]+\.[\w-]+\.[\w-]+$/);
        assert.deepEqual(attributes.filter((a) => !a.startsWith("Max-Age=")), [
          "Path=/",
          "HttpOnly",
          "SameSite=Strict",
        ]);
        // The JWT's TTL (JWT_TTL, 12 hours by default), give or take the second it was signed in.
        const maxAge = Number(attributes.find((a) => a.startsWith("Max-Age="))!.slice(8));
        assert.ok(Math.abs(maxAge - t.app.deps.config.jwtTtlSeconds) <= 2, `Max-Age=${maxAge}`);
        assert.ok(!JSON.stringify(res.body).includes(pair.split("=")[1]), "the token is not in the body");
        cookie = pair;
      },
    );

    await s.step(
      "sign-in without the CSRF header or from another origin is refused, and opens no session",
      async () => {
        const before = await t.app.deps.db.session.count();
        assertProblem(await signIn(t, owner, { origin: OWN }), 403, "CSRF_REFUSED");
        assertProblem(
          await signIn(t, owner, { origin: "https://evil.example", ...CSRF }),
          403,
          "CSRF_REFUSED",
        );
        assertProblem(
          await signIn(t, owner, { "sec-fetch-site": "cross-site", ...CSRF }),
          403,
          "CSRF_REFUSED",
        );
        assert.equal(await t.app.deps.db.session.count(), before);
        const wrong = await signIn(t, { email: owner.email, password: "not it" });
        assertProblem(wrong, 401, "INVALID_CREDENTIALS");
        assert.equal(wrong.headers.get("set-cookie"), null);
      },
    );

    await s.step("the cookie signs a GraphQL write from this origin with the CSRF header", async () => {
      const res = await graphql(cookie, { origin: OWN, "sec-fetch-site": "same-origin", ...CSRF });
      assert.equal(res.status, 200);
      assert.equal(res.body.errors, undefined, JSON.stringify(res.body));
      assert.deepEqual(await agentNames(t, workspaceId), ["Via cookie"]);
      // Its author is the signed-in member, as with Bearer.
      const viewer = await graphql(cookie, CSRF, "{ viewer { user { email } } }");
      assert.equal(viewer.body.data.viewer.user.email, owner.email);
      // PUBLIC_URL's origin is this server's too.
      const read = await graphql(
        cookie,
        { origin: "http://switchboard.test", ...CSRF },
        "{ workspace { name } }",
      );
      assert.deepEqual(read.body, { data: { workspace: { name: "Acme" } } });
    });

    await s.step(
      "without the CSRF header, or from another site or origin, nothing runs: 403 CSRF_REFUSED",
      async () => {
        const refusals: Record<string, string>[] = [
          { origin: OWN }, // no CSRF header
          { origin: OWN, "x-switchboard-csrf": " " },
          { origin: "https://evil.example", ...CSRF },
          { origin: "http://test.local.evil.example", ...CSRF },
          { origin: "null", ...CSRF },
          { "sec-fetch-site": "cross-site", ...CSRF },
          // A sibling subdomain is the same site but not this origin.
          { "sec-fetch-site": "same-site", ...CSRF },
        ];
        for (const headers of refusals) {
          assertProblem(await graphql(cookie, headers), 403, "CSRF_REFUSED");
        }
        // A GET (a read: Yoga runs no mutation over GET) from another origin is refused as well.
        const get = await t.anon.get(`/graphql?query=${encodeURIComponent("{ workspace { name } }")}`, {
          cookie,
          "x-workspace-id": workspaceId,
          "sec-fetch-site": "cross-site",
        });
        assertProblem(get, 403, "CSRF_REFUSED");
        assert.deepEqual(await agentNames(t, workspaceId), ["Via cookie"]);
      },
    );

    await s.step(
      "the media file takes the cookie (a GET: no CSRF header) from this origin only",
      async () => {
        const path = "/api/messages/cmx0000000000000000000000/media";
        const headers = { cookie, "x-workspace-id": workspaceId };
        assertProblem(await t.anon.get(path, { "x-workspace-id": workspaceId }), 401, "UNAUTHENTICATED");
        // Signed in: past the credential, the message is not found.
        assertProblem(
          await t.anon.get(path, { ...headers, "sec-fetch-site": "same-origin" }),
          404,
          "NOT_FOUND",
        );
        assertProblem(
          await t.anon.get(path, { ...headers, "sec-fetch-site": "cross-site" }),
          403,
          "CSRF_REFUSED",
        );
        // Other REST routes are the API's: Bearer only, the cookie is no credential there.
        assertProblem(await t.anon.get("/api/agents", headers), 401, "UNAUTHENTICATED");
      },
    );

    await s.step("Bearer clients never meet the checks, and Authorization wins over a cookie", async () => {
      const headers = { origin: "https://elsewhere.example", "sec-fetch-site": "cross-site" };
      const res = await owner.client.post("/graphql", {
        query: CREATE_AGENT.replace("Via cookie", "Via bearer"),
      }, {
        ...headers,
        cookie: "switchboard_session=not-a-token",
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.errors, undefined, JSON.stringify(res.body));
      const rest = await owner.client.get("/api/agents", headers);
      assert.equal(rest.status, 200);
      assert.deepEqual(await agentNames(t, workspaceId), ["Via bearer", "Via cookie"]);
      // A bad Bearer with a good cookie is the bad Bearer's 401.
      const bad = await graphql(cookie, { authorization: "Bearer nope", ...CSRF }, "{ workspace { name } }");
      assert.equal(bad.body.errors[0].extensions.code, "UNAUTHENTICATED");
    });

    await s.step(
      "DELETE /console/session revokes the cookie's session and clears it; the old cookie is refused",
      async () => {
        assertProblem(await t.anon.delete("/console/session", { cookie, origin: OWN }), 403, "CSRF_REFUSED");
        const out = await t.anon.delete("/console/session", { cookie, origin: OWN, ...CSRF });
        assert.equal(out.status, 204);
        assert.equal(
          out.headers.get("set-cookie"),
          "switchboard_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict",
        );
        const after = await graphql(cookie, CSRF, "{ workspace { name } }");
        assert.equal(after.body.errors[0].extensions.code, "UNAUTHENTICATED");
        // Again, or without a cookie: nothing to revoke, still 204.
        assert.equal((await t.anon.delete("/console/session", { origin: OWN, ...CSRF })).status, 204);
      },
    );

    await s.step("a session revoked elsewhere (a password change) makes its cookie answer 401", async () => {
      const fresh = cookieOf(await signIn(t, owner));
      const ok = await graphql(fresh, CSRF, "{ workspace { name } }");
      assert.deepEqual(ok.body, { data: { workspace: { name: "Acme" } } });
      const changed = await owner.client.post("/api/auth/password", {
        currentPassword: owner.password,
        newPassword: "a brand new password",
      });
      assert.equal(changed.status, 204);
      const after = await graphql(fresh, CSRF, "{ workspace { name } }");
      assert.equal(after.body.errors[0].extensions.code, "UNAUTHENTICATED");
      owner.password = "a brand new password";
    });

    await s.step(
      "an accepted invitation's login token moves into the cookie; an API token cannot",
      async () => {
        const login = await t.anon.post("/api/auth/login", { email: owner.email, password: owner.password });
        const res = await t.anon.post("/console/session", undefined, {
          authorization: `Bearer ${login.body.token}`,
          origin: OWN,
          ...CSRF,
        });
        assert.equal(res.status, 200);
        assert.equal(cookieOf(res), `switchboard_session=${login.body.token}`);
        assert.equal(res.body.user.email, owner.email);
        const token = await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "ci" });
        assert.equal(token.status, 201);
        const refused = await t.anon.post("/console/session", undefined, {
          authorization: `Bearer ${token.body.token}`,
          origin: OWN,
          ...CSRF,
        });
        assertProblem(refused, 403, "FORBIDDEN");
        assert.equal(refused.headers.get("set-cookie"), null);
      },
    );
  } finally {
    await t.close();
  }
});

Deno.test("on HTTPS (PUBLIC_URL) the cookie is Secure, host-only and __Host- prefixed", async () => {
  const t = await startTestApp({ PUBLIC_URL: "https://switchboard.test" }, { workers: false });
  try {
    const { workspaceId, owner } = await t.seed.workspace("Acme");
    const res = await signIn(t, owner, { origin: "https://switchboard.test", ...CSRF });
    assert.equal(res.status, 200);
    const [pair, ...attributes] = res.headers.get("set-cookie")!.split("; ");
    assert.match(pair, /^__Host-switchboard_session=/);
    assert.deepEqual(
      attributes.filter((a) => !a.startsWith("Max-Age=")),
      ["Path=/", "HttpOnly", "Secure", "SameSite=Strict"],
    );
    const read = await t.anon.post("/graphql", { query: "{ workspace { name } }" }, {
      cookie: pair,
      "x-workspace-id": workspaceId,
      origin: "https://switchboard.test",
      ...CSRF,
    });
    assert.deepEqual(read.body, { data: { workspace: { name: "Acme" } } });
    // The plain name is not read on HTTPS: a cookie an insecure page could have set is no credential.
    const plain = await t.anon.post("/graphql", { query: "{ workspace { name } }" }, {
      cookie: pair.replace("__Host-", ""),
      "x-workspace-id": workspaceId,
      ...CSRF,
    });
    assert.equal(plain.body.errors[0].extensions.code, "UNAUTHENTICATED");
  } finally {
    await t.close();
  }
});

/** Opens graphql-ws on `port` with `headers` on the upgrade, sends connection_init: the first answer. */
async function connect(port: number, headers: Record<string, string>, payload: Record<string, unknown>) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/graphql`, {
    protocols: ["graphql-transport-ws"],
    headers,
  } as unknown as string[]);
  const answer = new Promise<string>((resolve) => {
    ws.onmessage = (e) => resolve(String(e.data));
    ws.onclose = (e) => resolve(`close ${e.code}`);
  });
  ws.onopen = () => ws.send(JSON.stringify({ type: "connection_init", payload }));
  const first = await answer;
  const closed = new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) resolve(null);
    else ws.onclose = resolve;
  });
  ws.close();
  await closed;
  return first;
}

Deno.test("graphql-ws takes the upgrade's cookie from this origin only; connection_init's authorization wins", async () => {
  const t = await startTestApp({ PORT: "0", HOST: "127.0.0.1" }, { workers: false });
  try {
    const { port } = await t.app.start();
    const own = `http://127.0.0.1:${port}`;
    const { workspaceId, owner } = await t.seed.workspace("Acme");
    const res = await fetch(`${own}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: own, ...CSRF },
      body: JSON.stringify({ email: owner.email, password: owner.password }),
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const cookie = res.headers.get("set-cookie")!.split(";")[0];
    const init = { "x-workspace-id": workspaceId };

    assert.equal(await connect(port, { cookie, origin: own }, init), `{"type":"connection_ack"}`);
    // Another origin, or none (browsers always send one with a WebSocket): 4403.
    assert.equal(await connect(port, { cookie, origin: "https://evil.example" }, init), "close 4403");
    assert.equal(await connect(port, { cookie }, init), "close 4403");
    // Without the cookie, or with its session logged out: 4401.
    assert.equal(await connect(port, { origin: own }, init), "close 4401");
    // A Bearer in connection_init is the credential whatever the upgrade's origin (not ambient).
    assert.equal(
      await connect(port, { cookie, origin: "https://evil.example" }, {
        ...init,
        authorization: `Bearer ${owner.token}`,
      }),
      `{"type":"connection_ack"}`,
    );
    const out = await fetch(`${own}/console/session`, {
      method: "DELETE",
      headers: { cookie, origin: own, ...CSRF },
    });
    assert.equal(out.status, 204);
    await out.body?.cancel();
    assert.equal(await connect(port, { cookie, origin: own }, init), "close 4401");
  } finally {
    await t.close();
  }
});
