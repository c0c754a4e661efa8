/**
 * Authentication (docs/api.md "Credentials and workspaces"): login, the login JWT and its
 * verification, the bearer and x-workspace-id rules, GET /api/auth/me.
 */
import assert from "node:assert/strict";
import { SignJWT } from "jose";
import { Client, startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus } from "./_helpers/problem.ts";

const SECRET = new TextEncoder().encode("test-secret-test-secret-test-secret-0123456789");
const ISSUER = "switchboard";
const AUDIENCE = "switchboard-api";

function b64url(value: unknown): string {
  return btoa(JSON.stringify(value)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function decodePayload(jwt: string): Record<string, unknown> {
  const part = jwt.split(".")[1].replaceAll("-", "+").replaceAll("_", "/");
  return JSON.parse(atob(part + "=".repeat((4 - part.length % 4) % 4)));
}

Deno.test("auth", async (t) => {
  const ta = await startTestApp();
  const { app, anon, seed } = ta;
  try {
    const { workspaceId, owner } = await seed.workspace("Acme");
    const other = await seed.workspace("Other");
    const jwt = (claims: Record<string, unknown> = {}) =>
      new SignJWT({ ...claims }).setProtectedHeader({ alg: "HS256", typ: "JWT" });
    // A live session of the owner: hand-made JWTs name it in `jti`, so only their stated flaw differs.
    const live = await app.deps.db.session.create({
      data: { id: crypto.randomUUID(), userId: owner.userId, expiresAt: new Date(Date.now() + 3600_000) },
    });

    await t.step("login answers exactly user, token and workspaces", async () => {
      const res = await anon.post("/api/auth/login", { email: owner.email, password: owner.password });
      assertStatus(res, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ["token", "user", "workspaces"]);
      assert.deepEqual(res.body.user, { id: owner.userId, name: "User 1", email: owner.email });
      assert.deepEqual(res.body.workspaces, [{ id: workspaceId, name: "Acme", role: "OWNER" }]);
      assert.equal(typeof res.body.token, "string");
      assert.equal(res.body.token.split(".").length, 3);
      const payload = decodePayload(res.body.token);
      assert.equal(payload.sub, owner.userId);
      assert.equal(payload.iss, ISSUER);
      assert.equal(payload.aud, AUDIENCE);
      assert.equal((payload.exp as number) - (payload.iat as number), 12 * 3600);
      // The token works at once.
      const me = await new Client(app, res.body.token).get("/api/auth/me");
      assertStatus(me, 200);
    });

    await t.step("login: the email is case-insensitive", async () => {
      const res = await anon.post("/api/auth/login", {
        email: owner.email.toUpperCase(),
        password: owner.password,
      });
      assertStatus(res, 200);
      assert.equal(res.body.user.id, owner.userId);
    });

    await t.step(
      "login: wrong password and unknown email answer the same 401 INVALID_CREDENTIALS",
      async () => {
        const wrong = await anon.post("/api/auth/login", {
          email: owner.email,
          password: "not the password",
        });
        assertProblem(wrong, 401, "INVALID_CREDENTIALS");
        const unknown = await anon.post("/api/auth/login", {
          email: "nobody@example.test",
          password: owner.password,
        });
        assertProblem(unknown, 401, "INVALID_CREDENTIALS");
        // The same answer, but for the request's own `instance`.
        assert.deepEqual({ ...unknown.body, instance: null }, { ...wrong.body, instance: null });
      },
    );

    await t.step("login: missing fields -> 400 VALIDATION_FAILED naming them", async () => {
      assertProblem(await anon.post("/api/auth/login", { email: owner.email }), 400, "VALIDATION_FAILED", [
        "password",
      ]);
      assertProblem(await anon.post("/api/auth/login", {}), 400, "VALIDATION_FAILED", ["email", "password"]);
      assertProblem(await anon.post("/api/auth/login"), 400, "VALIDATION_FAILED");
      assertProblem(
        await anon.post("/api/auth/login", { email: owner.email, password: owner.password, remember: true }),
        400,
        "VALIDATION_FAILED",
        ["remember"],
      );
    });

    await t.step(
      "a JWT signed by us with the test secret is accepted (control for the cases below)",
      async () => {
        const token = await jwt().setSubject(owner.userId).setJti(live.id).setIssuer(ISSUER).setAudience(
          AUDIENCE,
        )
          .setIssuedAt()
          .setExpirationTime("5m").sign(SECRET);
        assertStatus(await new Client(app, token, workspaceId).get("/api/agents"), 200);
      },
    );

    await t.step("forged, expired, alg none, wrong claims or algorithm -> 401 UNAUTHENTICATED", async () => {
      const base = () =>
        jwt().setSubject(owner.userId).setJti(live.id).setIssuer(ISSUER).setAudience(AUDIENCE).setIssuedAt();
      const otherSession = await app.deps.db.session.create({
        data: {
          id: crypto.randomUUID(),
          userId: other.owner.userId,
          expiresAt: new Date(Date.now() + 3600_000),
        },
      });
      const now = Math.floor(Date.now() / 1000);
      const bad: Record<string, string> = {
        "wrong signature": await base().setExpirationTime("5m").sign(
          new TextEncoder().encode("another-secret-another-secret-0123456789"),
        ),
        "expired": await base().setIssuedAt(now - 7200).setExpirationTime(now - 60).sign(SECRET),
        "no exp": await base().sign(SECRET),
        "wrong issuer": await base().setIssuer("someone-else").setExpirationTime("5m").sign(SECRET),
        "wrong audience": await base().setAudience("other-api").setExpirationTime("5m").sign(SECRET),
        "HS512": await new SignJWT({}).setProtectedHeader({ alg: "HS512" }).setSubject(owner.userId).setJti(
          live.id,
        )
          .setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime("5m").sign(SECRET),
        "alg none": `${b64url({ alg: "none", typ: "JWT" })}.${
          b64url({ sub: owner.userId, jti: live.id, iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 300 })
        }.`,
        "garbage": "not-a-jwt",
        "no jti": await jwt().setSubject(owner.userId).setIssuer(ISSUER).setAudience(AUDIENCE).setIssuedAt()
          .setExpirationTime("5m").sign(SECRET),
        "unknown jti": await base().setJti("no-such-session").setExpirationTime("5m").sign(SECRET),
        "another user's session": await base().setJti(otherSession.id).setExpirationTime("5m").sign(SECRET),
        "unknown api token": "sbt_doesnotexist0000000000000000000000000000",
        // Signed by us, yet claims no id could be: each must be a 401, never a database error.
        "NUL in sub": await base().setSubject(`${owner.userId}\u0000`).setExpirationTime("5m").sign(SECRET),
        "NUL in jti": await base().setJti(`${live.id}\u0000`).setExpirationTime("5m").sign(SECRET),
        "numeric sub": await jwt({ sub: 12345 }).setJti(live.id).setIssuer(ISSUER).setAudience(AUDIENCE)
          .setExpirationTime("5m").sign(SECRET),
        "object jti": await jwt({ jti: { id: live.id } }).setSubject(owner.userId).setIssuer(ISSUER)
          .setAudience(AUDIENCE).setExpirationTime("5m").sign(SECRET),
        "array sub": await jwt({ sub: [owner.userId] }).setJti(live.id).setIssuer(ISSUER).setAudience(
          AUDIENCE,
        )
          .setExpirationTime("5m").sign(SECRET),
        "10 kB jti": await base().setJti("j".repeat(10_000)).setExpirationTime("5m").sign(SECRET),
      };
      for (const [name, token] of Object.entries(bad)) {
        const res = await new Client(app, token, workspaceId).get("/api/agents");
        assert.equal(res.status, 401, name);
        assertProblem(res, 401, "UNAUTHENTICATED");
        assertProblem(await new Client(app, token).get("/api/auth/me"), 401, "UNAUTHENTICATED");
      }
    });

    await t.step("missing or malformed Authorization -> 401 UNAUTHENTICATED", async () => {
      assertProblem(await anon.in(workspaceId).get("/api/agents"), 401, "UNAUTHENTICATED");
      assertProblem(await anon.get("/api/auth/me"), 401, "UNAUTHENTICATED");
      assertProblem(await anon.get("/api/workspaces"), 401, "UNAUTHENTICATED");
      for (
        const authorization of [
          `Basic ${btoa("a:b")}`,
          "Bearer",
          "Bearer ",
          owner.token,
          `Token ${owner.token}`,
        ]
      ) {
        const res = await anon.in(workspaceId).get("/api/agents", { authorization });
        assertProblem(res, 401, "UNAUTHENTICATED");
      }
      // The scheme is case-insensitive.
      assertStatus(
        await anon.in(workspaceId).get("/api/agents", { authorization: `bearer ${owner.token}` }),
        200,
      );
    });

    await t.step("missing x-workspace-id on /api/agents -> 400 WORKSPACE_REQUIRED", async () => {
      const noWs = owner.client.in(undefined);
      assertProblem(await noWs.get("/api/agents"), 400, "WORKSPACE_REQUIRED");
      assertProblem(await noWs.post("/api/agents", { name: "X" }), 400, "WORKSPACE_REQUIRED");
      assertProblem(await noWs.get("/api/agents", { "x-workspace-id": "  " }), 400, "WORKSPACE_REQUIRED");
      assert.equal(await app.deps.db.agent.count(), 0);
    });

    await t.step("a workspace the user is not a member of -> 403 FORBIDDEN", async () => {
      assertProblem(await owner.client.in(other.workspaceId).get("/api/agents"), 403, "FORBIDDEN");
      assertProblem(
        await owner.client.in(other.workspaceId).post("/api/agents", { name: "X" }),
        403,
        "FORBIDDEN",
      );
      assertProblem(await owner.client.in("no-such-workspace").get("/api/agents"), 403, "FORBIDDEN");
      assertProblem(await owner.client.in("x".repeat(200)).get("/api/agents"), 403, "FORBIDDEN");
      assertProblem(await owner.client.get(`/api/workspaces/${other.workspaceId}/members`), 403, "FORBIDDEN");
      assert.equal(await app.deps.db.agent.count(), 0);
    });

    await t.step("authentication comes before the workspace header", async () => {
      assertProblem(await anon.get("/api/agents"), 401, "UNAUTHENTICATED");
    });

    await t.step("GET /api/auth/me: the user and the memberships", async () => {
      const res = await owner.client.get("/api/auth/me");
      assertStatus(res, 200);
      assert.deepEqual(res.body, {
        user: { id: owner.userId, name: "User 1", email: owner.email },
        workspaces: [{ id: workspaceId, name: "Acme", role: "OWNER" }],
      });
      const viewer = await seed.member(workspaceId, "VIEWER");
      const mine = await viewer.client.get("/api/auth/me");
      assert.deepEqual(mine.body.workspaces, [{ id: workspaceId, name: "Acme", role: "VIEWER" }]);
    });

    await t.step("GET /api/auth/me with an API token: no user, its own workspace as MANAGER", async () => {
      const created = await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "ci" });
      assertStatus(created, 201);
      const res = await new Client(app, created.body.token).get("/api/auth/me");
      assertStatus(res, 200);
      assert.deepEqual(res.body, {
        user: null,
        workspaces: [{ id: workspaceId, name: "Acme", role: "MANAGER" }],
      });
    });

    await t.step("a JWT of a user that no longer exists is refused", async () => {
      const gone = await seed.member(workspaceId, "MANAGER");
      await app.deps.db.user.delete({ where: { id: gone.userId } });
      assertProblem(await gone.client.get("/api/auth/me"), 401, "UNAUTHENTICATED");
      assertProblem(await gone.client.get("/api/agents"), 401, "UNAUTHENTICATED");
      assertProblem(await gone.client.post("/api/workspaces", { name: "Orphan" }), 401, "UNAUTHENTICATED");
    });

    await t.step(
      "an unknown route answers a problem+json 404, a known one with another method 405",
      async () => {
        assertProblem(await owner.client.get("/api/nothing-here"), 404, "NOT_FOUND");
        assertProblem(await owner.client.request("PATCH", "/api/agents"), 405, "METHOD_NOT_ALLOWED");
      },
    );
  } finally {
    await ta.close();
  }
});
