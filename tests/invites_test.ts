/**
 * Invites: created by OWNER/MANAGER with an email and a role,
 * accepted once at /invite/{token} by a new or an existing user, expiring after 7 days (a manual
 * clock moves time).
 */
import assert from "node:assert/strict";
import { Client, startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { assertProblem, assertStatus, counts } from "./_helpers/problem.ts";

const DAY = 24 * 3600 * 1000;
const INVITE_KEYS = ["acceptedAt", "createdAt", "email", "expiresAt", "id", "role"];

function tokenOf(inviteUrl: string): string {
  const m = /^http:\/\/switchboard\.test\/invite\/([A-Za-z0-9_-]+)$/.exec(inviteUrl);
  assert.ok(m, `inviteUrl: ${inviteUrl}`);
  return m[1];
}

Deno.test("invites", async (t) => {
  const clock = new ManualClock(new Date("2030-01-15T10:00:00.000Z"));
  const ta = await startTestApp({}, { clock });
  const { app, anon, seed } = ta;
  const db = app.deps.db;
  try {
    const { workspaceId, owner } = await seed.workspace("Acme");
    const invites = `/api/workspaces/${workspaceId}/invites`;
    let newToken = "";
    const newEmail = "new.person@example.test";

    await t.step("create: 201 with inviteUrl = PUBLIC_URL/invite/<token>, expiring in 7 days", async () => {
      const res = await owner.client.post(invites, { email: "New.Person@Example.test", role: "AGENT" });
      assertStatus(res, 201);
      assert.deepEqual(Object.keys(res.body).sort(), [...INVITE_KEYS, "inviteUrl"].sort());
      newToken = tokenOf(res.body.inviteUrl);
      assert.equal(res.body.email, newEmail);
      assert.equal(res.body.role, "AGENT");
      assert.equal(res.body.acceptedAt, null);
      assert.equal(res.body.expiresAt, new Date(clock.now().getTime() + 7 * DAY).toISOString());
      const row = await db.invite.findUniqueOrThrow({ where: { id: res.body.id } });
      assert.notEqual(row.tokenHash, newToken);
    });

    await t.step("list: the invites, without token or hash", async () => {
      const res = await owner.client.get(invites);
      assertStatus(res, 200);
      assert.equal(res.body.nextCursor, null);
      assert.equal(res.body.data.length, 1);
      assert.deepEqual(Object.keys(res.body.data[0]).sort(), INVITE_KEYS);
      assert.ok(!JSON.stringify(res.body).includes(newToken));
    });

    await t.step("GET /invite/{token} (no credentials) shows email, role and workspace", async () => {
      const res = await anon.get(`/invite/${newToken}`);
      assertStatus(res, 200);
      assert.deepEqual(res.body, {
        email: newEmail,
        role: "AGENT",
        workspace: { id: workspaceId, name: "Acme" },
        expiresAt: new Date(clock.now().getTime() + 7 * DAY).toISOString(),
        existingUser: false,
      });
    });

    await t.step("unknown invite token -> 404", async () => {
      assertProblem(await anon.get("/invite/nope"), 404, "NOT_FOUND");
      assertProblem(
        await anon.post("/invite/nope", { name: "X", password: "long enough" }),
        404,
        "NOT_FOUND",
      );
      assertProblem(await anon.get(`/invite/${"x".repeat(300)}`), 404, "NOT_FOUND");
    });

    await t.step("accept: bad bodies -> 400 and nothing is created", async () => {
      const before = await counts(app);
      assertProblem(await anon.post(`/invite/${newToken}`, { name: "N" }), 400, "VALIDATION_FAILED", [
        "password",
      ]);
      assertProblem(
        await anon.post(`/invite/${newToken}`, { name: "N", password: "short" }),
        400,
        "VALIDATION_FAILED",
        [
          "password",
        ],
      );
      assertProblem(
        await anon.post(`/invite/${newToken}`, { name: "N", password: "long enough", role: "OWNER" }),
        400,
        "VALIDATION_FAILED",
        ["role"],
      );
      assert.deepEqual(await counts(app), before);
      assertStatus(await anon.get(`/invite/${newToken}`), 200);
    });

    await t.step("accept as a new user: answers like login, the user holds the invited role", async () => {
      const res = await anon.post(`/invite/${newToken}`, { name: "New Person", password: "a fine password" });
      assertStatus(res, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ["token", "user", "workspaces"]);
      assert.equal(res.body.user.name, "New Person");
      assert.equal(res.body.user.email, newEmail);
      assert.deepEqual(Object.keys(res.body.user).sort(), ["email", "id", "name"]);
      assert.deepEqual(res.body.workspaces, [{ id: workspaceId, name: "Acme", role: "AGENT" }]);
      // The returned token works, and the role is AGENT: reads yes, writes no.
      const client = new Client(app, res.body.token, workspaceId);
      assertStatus(await client.get("/api/agents"), 200);
      assertProblem(await client.post("/api/agents", { name: "X" }), 403, "FORBIDDEN");
      // The password works for login.
      const login = await anon.post("/api/auth/login", { email: newEmail, password: "a fine password" });
      assertStatus(login, 200);
      assert.equal(login.body.user.id, res.body.user.id);
      const invite = await db.invite.findFirstOrThrow({ where: { email: newEmail } });
      assert.equal(invite.acceptedAt?.toISOString(), clock.now().toISOString());
      assert.equal(invite.acceptedById, res.body.user.id);
    });

    await t.step("a second accept -> 409 INVITE_USED; so does viewing it", async () => {
      const before = await counts(app);
      assertProblem(
        await anon.post(`/invite/${newToken}`, { name: "Again", password: "another password" }),
        409,
        "INVITE_USED",
      );
      assertProblem(
        await anon.post(`/invite/${newToken}`, { password: "a fine password" }),
        409,
        "INVITE_USED",
      );
      assertProblem(await anon.get(`/invite/${newToken}`), 409, "INVITE_USED");
      assert.deepEqual(await counts(app), before);
    });

    await t.step("an existing user accepts with their password and gains the membership", async () => {
      const other = await seed.workspace("Elsewhere");
      const res = await owner.client.post(invites, { email: other.owner.email, role: "VIEWER" });
      assertStatus(res, 201);
      const token = tokenOf(res.body.inviteUrl);
      assert.equal((await anon.get(`/invite/${token}`)).body.existingUser, true);
      // Wrong password: 401, and the invite stays usable.
      const before = await counts(app);
      assertProblem(
        await anon.post(`/invite/${token}`, { password: "wrong password" }),
        401,
        "INVALID_CREDENTIALS",
      );
      assert.deepEqual(await counts(app), before);
      assertStatus(await anon.get(`/invite/${token}`), 200);
      const ok = await anon.post(`/invite/${token}`, { name: "Ignored", password: other.owner.password });
      assertStatus(ok, 200);
      assert.equal(ok.body.user.id, other.owner.userId);
      assert.equal(ok.body.user.name, "User 2"); // an existing user's name is not changed
      assert.deepEqual(
        ok.body.workspaces.map((w: { id: string; role: string }) => [w.id, w.role]).sort(),
        [[other.workspaceId, "OWNER"], [workspaceId, "VIEWER"]].sort(),
      );
      assertStatus(await other.owner.client.in(workspaceId).get("/api/agents"), 200);
      assertProblem(
        await other.owner.client.in(workspaceId).post("/api/agents", { name: "X" }),
        403,
        "FORBIDDEN",
      );
      const members = await owner.client.get(`/api/workspaces/${workspaceId}/members`);
      assert.equal(members.body.data.length, 3);
    });

    await t.step("MANAGER can invite but not an OWNER; OWNER can invite an OWNER", async () => {
      const manager = await seed.member(workspaceId, "MANAGER");
      const before = await counts(app);
      assertProblem(
        await manager.client.post(invites, { email: "boss@example.test", role: "OWNER" }),
        403,
        "FORBIDDEN",
      );
      assert.deepEqual(await counts(app), before);
      for (const role of ["MANAGER", "AGENT", "VIEWER"]) {
        assertStatus(await manager.client.post(invites, { email: `${role}@example.test`, role }), 201);
      }
      const res = await owner.client.post(invites, { email: "co-owner@example.test", role: "OWNER" });
      assertStatus(res, 201);
      const accepted = await anon.post(`/invite/${tokenOf(res.body.inviteUrl)}`, {
        password: "co-owner password",
      });
      assertStatus(accepted, 200);
      assert.equal(accepted.body.user.name, "co-owner"); // defaults to the local part of the email
      assert.deepEqual(accepted.body.workspaces, [{ id: workspaceId, name: "Acme", role: "OWNER" }]);
    });

    await t.step("AGENT and VIEWER cannot invite, list or withdraw invites", async () => {
      const any = (await owner.client.get(invites)).body.data[0];
      for (const role of ["AGENT", "VIEWER"] as const) {
        const m = await seed.member(workspaceId, role);
        const before = await counts(app);
        for (const r of ["OWNER", "MANAGER", "AGENT", "VIEWER"]) {
          assertProblem(await m.client.post(invites, { email: "x@example.test", role: r }), 403, "FORBIDDEN");
        }
        assertProblem(await m.client.get(invites), 403, "FORBIDDEN");
        assertProblem(await m.client.delete(`${invites}/${any.id}`), 403, "FORBIDDEN");
        assert.deepEqual(await counts(app), before);
      }
    });

    await t.step("create: bad email or role -> 400", async () => {
      const before = await counts(app);
      assertProblem(
        await owner.client.post(invites, { email: "not-an-email", role: "AGENT" }),
        400,
        "VALIDATION_FAILED",
        [
          "email",
        ],
      );
      assertProblem(
        await owner.client.post(invites, { email: "a@b.test", role: "ADMIN" }),
        400,
        "VALIDATION_FAILED",
        [
          "role",
        ],
      );
      assertProblem(await owner.client.post(invites, { email: "a@b.test" }), 400, "VALIDATION_FAILED", [
        "role",
      ]);
      assertProblem(await owner.client.post(invites, { role: "AGENT" }), 400, "VALIDATION_FAILED", ["email"]);
      assert.deepEqual(await counts(app), before);
    });

    await t.step("withdraw: DELETE -> 204, the link then answers 404; unknown id -> 404", async () => {
      const res = await owner.client.post(invites, { email: "withdrawn@example.test", role: "AGENT" });
      const token = tokenOf(res.body.inviteUrl);
      assertStatus(await owner.client.delete(`${invites}/${res.body.id}`), 204);
      assertProblem(await anon.get(`/invite/${token}`), 404, "NOT_FOUND");
      assertProblem(await anon.post(`/invite/${token}`, { password: "long enough" }), 404, "NOT_FOUND");
      assertProblem(await owner.client.delete(`${invites}/${res.body.id}`), 404, "NOT_FOUND");
      assertProblem(await owner.client.delete(`${invites}/unknown`), 404, "NOT_FOUND");
    });

    await t.step("expiry: valid until 7 days, then 409 INVITE_EXPIRED", async () => {
      const res = await owner.client.post(invites, { email: "late@example.test", role: "AGENT" });
      const token = tokenOf(res.body.inviteUrl);
      clock.advance(7 * DAY - 1);
      assertStatus(await anon.get(`/invite/${token}`), 200);
      clock.advance(1);
      const before = await counts(app);
      assertProblem(await anon.get(`/invite/${token}`), 409, "INVITE_EXPIRED");
      assertProblem(
        await anon.post(`/invite/${token}`, { name: "Late", password: "long enough" }),
        409,
        "INVITE_EXPIRED",
      );
      clock.advance(30 * DAY);
      assertProblem(
        await anon.post(`/invite/${token}`, { name: "Late", password: "long enough" }),
        409,
        "INVITE_EXPIRED",
      );
      assert.deepEqual(await counts(app), before);
      assert.equal(await db.user.count({ where: { email: "late@example.test" } }), 0);
    });
  } finally {
    await ta.close();
  }
});
