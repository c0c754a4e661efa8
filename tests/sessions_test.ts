/**
 * Login sessions (docs/behaviour.md "Accounts, members and sessions"): each login JWT carries a `jti`
 * backed by a Session row; logout revokes it; a password change and "log out everywhere else" revoke
 * every other session;
 * revoked, expired or a deleted user's → 401. REST and GraphQL.
 */
import assert from "node:assert/strict";
import { Client, startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { assertProblem, assertStatus } from "./_helpers/problem.ts";

function payloadOf(jwt: string) {
  const part = jwt.split(".")[1].replaceAll("-", "+").replaceAll("_", "/");
  return JSON.parse(atob(part + "=".repeat((4 - part.length % 4) % 4)));
}
const jtiOf = (jwt: string): string => payloadOf(jwt).jti;
const decodeExp = (jwt: string): number => payloadOf(jwt).exp;

Deno.test("sessions", async (t) => {
  const clock = new ManualClock();
  const ta = await startTestApp({}, { clock });
  const { app, anon, seed } = ta;
  const db = app.deps.db;
  try {
    const { workspaceId, owner } = await seed.workspace("Acme");
    /** A fresh login of `user`: a client with its own session in the workspace. */
    const signIn = async (email: string, password: string) => {
      const res = await anon.post("/api/auth/login", { email, password });
      assertStatus(res, 200);
      return new Client(app, res.body.token, workspaceId);
    };
    const works = async (client: Client) => {
      assertStatus(await client.get("/api/auth/me"), 200);
      assertStatus(await client.get("/api/agents"), 200);
    };
    const refused = async (client: Client) => {
      assertProblem(await client.get("/api/auth/me"), 401, "UNAUTHENTICATED");
      assertProblem(await client.get("/api/agents"), 401, "UNAUTHENTICATED");
      assertProblem(await client.get("/api/workspaces"), 401, "UNAUTHENTICATED");
      const gql = await client.graphql(`{ viewer { user { id } } }`);
      assert.equal(gql.body.errors[0].extensions.code, "UNAUTHENTICATED");
      const members = await client.graphql(`{ members { edges { node { id } } } }`);
      assert.equal(members.body.errors[0].extensions.code, "UNAUTHENTICATED");
    };

    await t.step("a login JWT names its Session row in jti", async () => {
      const res = await anon.post("/api/auth/login", { email: owner.email, password: owner.password });
      const jti = jtiOf(res.body.token);
      const row = await db.session.findUniqueOrThrow({ where: { id: jti } });
      assert.equal(row.userId, owner.userId);
      assert.equal(row.revokedAt, null);
      assert.equal(row.expiresAt.getTime() / 1000, decodeExp(res.body.token));
      assert.ok(Math.abs(row.expiresAt.getTime() - (Date.now() + 12 * 3600_000)) < 60_000);
    });

    await t.step("logout: 204, that JWT answers 401, the user's other sessions still work", async () => {
      const one = await signIn(owner.email, owner.password);
      const two = await signIn(owner.email, owner.password);
      const res = await one.post("/api/auth/logout");
      assertStatus(res, 204);
      await refused(one);
      assertProblem(await one.post("/api/auth/logout"), 401, "UNAUTHENTICATED");
      await works(two);
      await works(owner.client);
    });

    await t.step("logout with an API token: 403 (revoke the token instead)", async () => {
      const created = await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "x" });
      const tokenClient = new Client(app, created.body.token, workspaceId);
      assertProblem(await tokenClient.post("/api/auth/logout"), 403, "FORBIDDEN");
      assertProblem(
        await tokenClient.post("/api/auth/password", { currentPassword: "a", newPassword: "long enough" }),
        403,
        "FORBIDDEN",
      );
    });

    await t.step(
      "password change: other sessions 401, this one works, the old password is gone",
      async () => {
        const user = await seed.member(workspaceId, "AGENT");
        const current = await signIn(user.email, user.password);
        const other = await signIn(user.email, user.password);
        const before = await db.user.findUniqueOrThrow({ where: { id: user.userId } });

        // Wrong current password: 400 INVALID_CURRENT_PASSWORD (not 401: the session itself is fine).
        assertProblem(
          await current.post("/api/auth/password", {
            currentPassword: "not it",
            newPassword: "brand new pw",
          }),
          400,
          "INVALID_CURRENT_PASSWORD",
        );
        assertProblem(
          await current.post("/api/auth/password", { currentPassword: user.password, newPassword: "short" }),
          400,
          "VALIDATION_FAILED",
          ["newPassword"],
        );
        assertProblem(await current.post("/api/auth/password", {}), 400, "VALIDATION_FAILED", [
          "currentPassword",
          "newPassword",
        ]);
        assert.equal(
          (await db.user.findUniqueOrThrow({ where: { id: user.userId } })).passwordHash,
          before.passwordHash,
        );
        await works(other);

        assertStatus(
          await current.post("/api/auth/password", {
            currentPassword: user.password,
            newPassword: "brand new pw",
          }),
          204,
        );
        await refused(other);
        await refused(user.client);
        await works(current);
        assertProblem(
          await anon.post("/api/auth/login", { email: user.email, password: user.password }),
          401,
          "INVALID_CREDENTIALS",
        );
        await works(await signIn(user.email, "brand new pw"));
      },
    );

    await t.step(
      "log out everywhere else: the user's other sessions 401 (REST and GraphQL), this one and others' stay",
      async () => {
        const user = await seed.member(workspaceId, "VIEWER");
        const here = await signIn(user.email, user.password);
        const other = await signIn(user.email, user.password);
        const bystander = await seed.member(workspaceId, "VIEWER");
        // An expired session of the user is not counted: it ended by itself.
        await db.session.create({
          data: { id: crypto.randomUUID(), userId: user.userId, expiresAt: new Date(Date.now() - 1000) },
        });
        const res = await here.post("/api/auth/logout-others");
        assertStatus(res, 200);
        // The seeded login and `other`.
        assert.deepEqual(res.body, { ended: 2 });
        await refused(other);
        await refused(user.client);
        await works(here);
        await works(bystander.client);
        await works(owner.client);
        assert.deepEqual((await here.post("/api/auth/logout-others")).body, { ended: 0 });

        const third = await signIn(user.email, user.password);
        const gql = await here.graphql(`mutation { logoutOtherSessions { ended } }`);
        assert.deepEqual(gql.body, { data: { logoutOtherSessions: { ended: 1 } } });
        await refused(third);
        await works(here);
        // An API token has no sessions to end.
        const created = await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "y" });
        const tokenClient = new Client(app, created.body.token, workspaceId);
        assertProblem(await tokenClient.post("/api/auth/logout-others"), 403, "FORBIDDEN");
        assertProblem(await anon.post("/api/auth/logout-others"), 401, "UNAUTHENTICATED");
      },
    );

    await t.step("a login deletes the user's expired session rows; the others stay", async () => {
      const user = await seed.member(workspaceId, "AGENT");
      const expired = await db.session.create({
        data: { id: crypto.randomUUID(), userId: user.userId, expiresAt: new Date(Date.now() - 1000) },
      });
      const live = jtiOf(user.token);
      await works(await signIn(user.email, user.password));
      assert.equal(await db.session.count({ where: { id: expired.id } }), 0);
      assert.equal(await db.session.count({ where: { id: live } }), 1);
      await works(user.client);
    });

    await t.step("moving the injected clock past the JWT lifetime does not end sessions", async () => {
      // Expiry is the JWT's `exp` on the system clock (auth_test covers an expired JWT).
      clock.advance(13 * 3600_000);
      await works(owner.client);
      clock.advance(-13 * 3600_000);
    });

    await t.step("a deleted user's JWT answers 401 everywhere, also for creating a workspace", async () => {
      const gone = await seed.member(workspaceId, "MANAGER");
      await works(gone.client);
      await db.user.delete({ where: { id: gone.userId } });
      await refused(gone.client);
      assertProblem(await gone.client.post("/api/workspaces", { name: "Orphan" }), 401, "UNAUTHENTICATED");
      assert.equal(await db.session.count({ where: { userId: gone.userId } }), 0);
    });

    await t.step("accepting an invite logs in with a session of its own", async () => {
      const invite = await owner.client.post(`/api/workspaces/${workspaceId}/invites`, {
        email: "newcomer@example.test",
        role: "VIEWER",
      });
      const token = new URL(invite.body.inviteUrl).pathname.split("/").pop()!;
      const accepted = await anon.post(`/invite/${token}`, { password: "long enough pw" });
      assertStatus(accepted, 200);
      const row = await db.session.findUniqueOrThrow({ where: { id: jtiOf(accepted.body.token) } });
      assert.equal(row.userId, accepted.body.user.id);
      const client = new Client(app, accepted.body.token, workspaceId);
      await works(client);
      assertStatus(await client.post("/api/auth/logout"), 204);
      await refused(client);
    });

    await t.step("GraphQL: logout and changePassword", async () => {
      const user = await seed.member(workspaceId, "VIEWER");
      const one = await signIn(user.email, user.password);
      const two = await signIn(user.email, user.password);
      const three = await signIn(user.email, user.password);

      const out = await one.graphql(`mutation { logout }`);
      assert.deepEqual(out.body, { data: { logout: true } });
      await refused(one);
      await works(two);

      const CHANGE = `mutation($input: ChangePasswordInput!) { changePassword(input: $input) }`;
      const wrong = await two.graphql(CHANGE, {
        input: { currentPassword: "nope", newPassword: "another pw 1" },
      });
      assert.equal(wrong.body.errors[0].extensions.code, "INVALID_CURRENT_PASSWORD");
      assert.equal(wrong.body.errors[0].extensions.status, 400);
      await works(three);
      const ok = await two.graphql(CHANGE, {
        input: { currentPassword: user.password, newPassword: "another pw 1" },
      });
      assert.deepEqual(ok.body, { data: { changePassword: true } });
      await refused(three);
      await works(two);
      const login = await anon.graphql(
        `mutation($input: LoginInput!) { login(input: $input) { token } }`,
        { input: { email: user.email, password: user.password } },
      );
      assert.equal(login.body.errors[0].extensions.code, "INVALID_CREDENTIALS");
      const anonOut = await anon.graphql(`mutation { logout }`);
      assert.equal(anonOut.body.errors[0].extensions.code, "UNAUTHENTICATED");
    });
  } finally {
    await ta.close();
  }
});
