/**
 * Abuse limits on login and invite acceptance (docs/behaviour.md "Accounts, members and sessions"):
 * 10 failures per email per 15 minutes, 100 attempts per client address per minute, 429
 * RATE_LIMITED with Retry-After, kept in PostgreSQL so every app instance shares them.
 */
import assert from "node:assert/strict";
import { type App, buildApp } from "../src/app.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { type Reply, startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { assertProblem, assertStatus } from "./_helpers/problem.ts";

/** A request as Deno.serve would hand it over, from `address` (none: unknown address). */
async function send(app: App, path: string, body: unknown, address?: string): Promise<Reply> {
  const res = await app.fetch(
    new Request(`http://test.local${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    address ? { remoteAddr: { transport: "tcp", hostname: address, port: 40_000 } } : undefined,
  );
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

const login = (app: App, email: string, password: string, address?: string) =>
  send(app, "/api/auth/login", { email, password }, address);

const GQL_LOGIN = `mutation($email: String!, $password: String!) {
  login(input: { email: $email, password: $password }) { token }
}`;

function assertRateLimited(res: Reply, retryAfter: number) {
  assertProblem(res, 429, "RATE_LIMITED");
  assert.equal(res.headers.get("retry-after"), String(retryAfter));
}

function assertGraphQLRateLimited(res: Reply, retryAfter: number) {
  assert.equal(res.status, 200);
  assert.equal(res.body.data, null);
  assert.equal(res.body.errors.length, 1);
  assert.equal(res.body.errors[0].extensions.code, "RATE_LIMITED");
  assert.equal(res.body.errors[0].extensions.status, 429);
  assert.equal(res.body.errors[0].extensions.retryAfter, retryAfter);
}

Deno.test("abuse limits", async (t) => {
  const clock = new ManualClock(new Date("2026-11-22T10:00:00.000Z"));
  const ta = await startTestApp({}, { clock });
  const { app, seed } = ta;
  let second: App | undefined;
  try {
    const victim = await seed.user();
    const bystander = await seed.user();
    const MIN = 60_000;

    await t.step("10 failures for one email, then 429 even with the right password", async () => {
      for (let i = 0; i < 10; i++) {
        assertProblem(await login(app, victim.email, "wrong password"), 401, "INVALID_CREDENTIALS");
      }
      assertRateLimited(await login(app, victim.email, victim.password), 900);
      // The email is compared case-insensitively, like login itself.
      assertRateLimited(await login(app, victim.email.toUpperCase(), victim.password), 900);
      clock.advance(5 * MIN);
      assertRateLimited(await login(app, victim.email, victim.password), 600);
    });

    await t.step("another email is unaffected", async () => {
      assertStatus(await login(app, bystander.email, bystander.password), 200);
    });

    await t.step("GraphQL login shares the per-email limit", async () => {
      const res = await send(app, "/graphql", {
        query: GQL_LOGIN,
        variables: { email: victim.email, password: victim.password },
      });
      assertGraphQLRateLimited(res, 600);
    });

    await t.step("invite acceptance shares the per-email limit", async () => {
      const a = await seed.workspace("A");
      const invite = await a.owner.client.post(`/api/workspaces/${a.workspaceId}/invites`, {
        email: victim.email,
        role: "AGENT",
      });
      assertStatus(invite, 201);
      const token = new URL(invite.body.inviteUrl).pathname.split("/").pop()!;
      assertRateLimited(await send(app, `/invite/${token}`, { password: victim.password }), 600);
      assert.equal(await app.deps.db.membership.count({ where: { userId: victim.userId } }), 0);
    });

    await t.step("a second app instance on the same database sees the same counters", async () => {
      second = await buildApp(app.deps.config, {
        clock,
        logger: silentLogger,
        bootstrap: false,
        workers: false,
      });
      assertRateLimited(await login(second, victim.email, victim.password), 600);
      assertStatus(await login(second, bystander.email, bystander.password), 200);
    });

    await t.step(
      "once the window has passed, the right password logs in and clears the failures",
      async () => {
        clock.advance(10 * MIN - 1000);
        assertRateLimited(await login(app, victim.email, victim.password), 1);
        clock.advance(1000);
        assertStatus(await login(app, victim.email, victim.password), 200);
        // A fresh count: nine failures and the right password still works.
        for (let i = 0; i < 9; i++) {
          assertProblem(await login(app, victim.email, "wrong password"), 401, "INVALID_CREDENTIALS");
        }
        assertStatus(await login(app, victim.email, victim.password), 200);
        assertProblem(await login(app, victim.email, "wrong password"), 401, "INVALID_CREDENTIALS");
      },
    );

    await t.step("100 attempts per address per minute: the 101st is refused, whatever it sends", async () => {
      const address = "203.0.113.7";
      for (let i = 0; i < 100; i++) {
        // Invalid bodies count as attempts too.
        assertProblem(await send(app, "/api/auth/login", {}, address), 400, "VALIDATION_FAILED");
      }
      assertRateLimited(await login(app, bystander.email, bystander.password, address), 60);
      assertRateLimited(await send(app, "/invite/whatever", { password: "long enough pw" }, address), 60);
      assertGraphQLRateLimited(
        await send(app, "/graphql", {
          query: GQL_LOGIN,
          variables: { email: bystander.email, password: bystander.password },
        }, address),
        60,
      );
      // Another address, or the same one on a second instance, is counted apart / together.
      assertStatus(await login(app, bystander.email, bystander.password, "203.0.113.8"), 200);
      assertRateLimited(await login(second!, bystander.email, bystander.password, address), 60);
      clock.advance(30 * 1000);
      assertRateLimited(await login(app, bystander.email, bystander.password, address), 30);
      clock.advance(30 * 1000);
      assertStatus(await login(app, bystander.email, bystander.password, address), 200);
    });

    await t.step("the GraphQL login counts against the address too", async () => {
      const address = "2001:db8::1";
      for (let i = 0; i < 100; i++) {
        const res = await send(app, "/graphql", {
          query: GQL_LOGIN,
          variables: { email: "not an email", password: "x" },
        }, address);
        assert.equal(res.body.errors[0].extensions.code, "VALIDATION_FAILED");
      }
      assertRateLimited(await login(app, bystander.email, bystander.password, address), 60);
    });

    await t.step("expired counters are deleted by later attempts", async () => {
      clock.advance(16 * MIN);
      assertStatus(await login(app, bystander.email, bystander.password, "198.51.100.1"), 200);
      const keys = (await app.deps.db.rateLimit.findMany()).map((r) => r.key);
      // Only the counter of this attempt's address is left (a success deletes the email's).
      assert.deepEqual(keys, ["addr:198.51.100.1"]);
    });

    await t.step("without a known address only the per-email limit applies", async () => {
      for (let i = 0; i < 150; i++) {
        assertProblem(await send(app, "/api/auth/login", {}), 400, "VALIDATION_FAILED");
      }
      assertStatus(await login(app, bystander.email, bystander.password), 200);
    });
  } finally {
    await second?.stop();
    await ta.close();
  }
});
