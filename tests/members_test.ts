/**
 * Members (docs/behaviour.md "Accounts, members and sessions"): PATCH and DELETE
 * /api/workspaces/{id}/members/{userId} and the GraphQL mutations over the same service. OWNER any
 * member; MANAGER only AGENT and VIEWER members, only to AGENT or VIEWER; AGENT and VIEWER 403; the
 * last OWNER stays (409 LAST_OWNER), also under concurrent requests.
 */
import assert from "node:assert/strict";
import type { Role } from "../src/auth/actor.ts";
import type { Db } from "../src/db/client.ts";
import { type Client, type Reply, startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus } from "./_helpers/problem.ts";

const CHANGE_ROLE = `mutation($userId: ID!, $role: Role!) {
  changeMemberRole(userId: $userId, input: { role: $role }) { id email role }
}`;
const REMOVE = `mutation($userId: ID!) { removeMember(userId: $userId) }`;

/** The two member operations over one transport, and how that transport shows an outcome. */
interface Transport {
  name: string;
  change(client: Client, workspaceId: string, userId: string, role: string): Promise<Reply>;
  remove(client: Client, workspaceId: string, userId: string): Promise<Reply>;
  /** Asserts the outcome: a status (200 / 204 on success) and, for errors, the code. */
  expect(res: Reply, status: number, code?: string): void;
}

const rest: Transport = {
  name: "REST",
  change: (c, ws, id, role) => c.patch(`/api/workspaces/${ws}/members/${id}`, { role }),
  remove: (c, ws, id) => c.delete(`/api/workspaces/${ws}/members/${id}`),
  expect(res, status, code) {
    if (code) assertProblem(res, status, code);
    else assertStatus(res, status);
  },
};

const graphql: Transport = {
  name: "GraphQL",
  change: (c, ws, id, role) => c.in(ws).graphql(CHANGE_ROLE, { userId: id, role }),
  remove: (c, ws, id) => c.in(ws).graphql(REMOVE, { userId: id }),
  expect(res, status, code) {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    if (code) {
      assert.equal(res.body.errors?.length, 1, JSON.stringify(res.body));
      assert.equal(res.body.errors[0].extensions.code, code, JSON.stringify(res.body));
      assert.equal(res.body.errors[0].extensions.status, status, JSON.stringify(res.body));
    } else {
      assert.equal(res.body.errors, undefined, JSON.stringify(res.body));
    }
  },
};

/** The member's role in the workspace, read from the database (null: not a member). */
async function roleOf(db: Db, workspaceId: string, userId: string): Promise<string | null> {
  const m = await db.membership.findUnique({ where: { userId_workspaceId: { userId, workspaceId } } });
  return m?.role ?? null;
}

for (const transport of [rest, graphql]) {
  Deno.test(`members over ${transport.name}: the role matrix`, async (t) => {
    const ta = await startTestApp();
    const { seed } = ta;
    const db = ta.app.deps.db;
    try {
      const { workspaceId: ws, owner } = await seed.workspace("Acme");
      const member = (role: Role) => seed.member(ws, role);
      const manager = await member("MANAGER");
      const agent = await member("AGENT");
      const viewer = await member("VIEWER");

      await t.step("AGENT and VIEWER may change or remove nobody (403)", async () => {
        for (const who of [agent, viewer]) {
          transport.expect(await transport.change(who.client, ws, viewer.userId, "AGENT"), 403, "FORBIDDEN");
          transport.expect(await transport.remove(who.client, ws, viewer.userId), 403, "FORBIDDEN");
        }
        assert.equal(await roleOf(db, ws, viewer.userId), "VIEWER");
      });

      await t.step("MANAGER: AGENT and VIEWER members, to AGENT or VIEWER only", async () => {
        const res = await transport.change(manager.client, ws, agent.userId, "VIEWER");
        transport.expect(res, 200);
        if (transport === rest) {
          assert.deepEqual(Object.keys(res.body).sort(), ["email", "id", "joinedAt", "name", "role"]);
          assert.equal(res.body.id, agent.userId);
          assert.equal(res.body.role, "VIEWER");
        } else {
          assert.deepEqual(res.body.data.changeMemberRole, {
            id: agent.userId,
            email: agent.email,
            role: "VIEWER",
          });
        }
        transport.expect(await transport.change(manager.client, ws, agent.userId, "AGENT"), 200);
        assert.equal(await roleOf(db, ws, agent.userId), "AGENT");
        for (const role of ["MANAGER", "OWNER"]) {
          transport.expect(await transport.change(manager.client, ws, viewer.userId, role), 403, "FORBIDDEN");
        }
        const manager2 = await member("MANAGER");
        transport.expect(
          await transport.change(manager.client, ws, manager2.userId, "AGENT"),
          403,
          "FORBIDDEN",
        );
        transport.expect(await transport.remove(manager.client, ws, manager2.userId), 403, "FORBIDDEN");
        transport.expect(
          await transport.change(manager.client, ws, owner.userId, "VIEWER"),
          403,
          "FORBIDDEN",
        );
        transport.expect(await transport.remove(manager.client, ws, owner.userId), 403, "FORBIDDEN");
        assert.equal(await roleOf(db, ws, viewer.userId), "VIEWER");
        assert.equal(await roleOf(db, ws, manager2.userId), "MANAGER");
        assert.equal(await roleOf(db, ws, owner.userId), "OWNER");
        transport.expect(
          await transport.remove(manager.client, ws, viewer.userId),
          transport === rest ? 204 : 200,
        );
        assert.equal(await roleOf(db, ws, viewer.userId), null);
      });

      await t.step("OWNER: any member, any role", async () => {
        const other = await member("VIEWER");
        for (const role of ["MANAGER", "OWNER", "AGENT"]) {
          transport.expect(await transport.change(owner.client, ws, other.userId, role), 200);
          assert.equal(await roleOf(db, ws, other.userId), role);
        }
        const second = await member("MANAGER");
        transport.expect(await transport.change(owner.client, ws, second.userId, "OWNER"), 200);
        transport.expect(
          await transport.remove(owner.client, ws, second.userId),
          transport === rest ? 204 : 200,
        );
        assert.equal(await roleOf(db, ws, second.userId), null);
      });

      await t.step("unknown member, another workspace's member, bad role", async () => {
        const elsewhere = await seed.workspace("Elsewhere");
        transport.expect(
          await transport.change(owner.client, ws, elsewhere.owner.userId, "AGENT"),
          404,
          "NOT_FOUND",
        );
        transport.expect(await transport.remove(owner.client, ws, elsewhere.owner.userId), 404, "NOT_FOUND");
        transport.expect(await transport.change(owner.client, ws, "nobody", "AGENT"), 404, "NOT_FOUND");
        assert.equal(await roleOf(db, elsewhere.workspaceId, elsewhere.owner.userId), "OWNER");
        if (transport === rest) {
          assertProblem(
            await owner.client.patch(`/api/workspaces/${ws}/members/${agent.userId}`, { role: "KING" }),
            400,
            "VALIDATION_FAILED",
            ["role"],
          );
          assertProblem(
            await owner.client.patch(`/api/workspaces/${ws}/members/${agent.userId}`, {}),
            400,
            "VALIDATION_FAILED",
            ["role"],
          );
          // A foreign owner acting on this workspace's path: not a member here.
          assertProblem(
            await elsewhere.owner.client.delete(`/api/workspaces/${ws}/members/${agent.userId}`),
            403,
            "FORBIDDEN",
          );
        }
        assert.equal(await roleOf(db, ws, agent.userId), "AGENT");
      });

      await t.step("the last OWNER can neither be demoted nor removed (409 LAST_OWNER)", async () => {
        transport.expect(
          await transport.change(owner.client, ws, owner.userId, "MANAGER"),
          409,
          "LAST_OWNER",
        );
        transport.expect(await transport.remove(owner.client, ws, owner.userId), 409, "LAST_OWNER");
        transport.expect(await transport.change(owner.client, ws, owner.userId, "OWNER"), 200);
        assert.equal(await db.membership.count({ where: { workspaceId: ws, role: "OWNER" } }), 1);
      });

      await t.step("a removed member gets 403 at once", async () => {
        const leaving = await member("AGENT");
        assertStatus(await leaving.client.get("/api/agents"), 200);
        transport.expect(
          await transport.remove(owner.client, ws, leaving.userId),
          transport === rest ? 204 : 200,
        );
        assertProblem(await leaving.client.get("/api/agents"), 403, "FORBIDDEN");
        const gql = await leaving.client.graphql(`{ members { edges { node { id } } } }`);
        assert.equal(gql.body.errors[0].extensions.code, "FORBIDDEN");
      });
    } finally {
      await ta.close();
    }
  });
}

Deno.test("members: concurrent demotions never leave a workspace without an OWNER", async (t) => {
  const ta = await startTestApp();
  const { seed } = ta;
  const db = ta.app.deps.db;
  try {
    await t.step("two owners demoting each other: one wins, the other is refused", async () => {
      for (let round = 0; round < 5; round++) {
        const { workspaceId: ws, owner: a } = await seed.workspace(`Mutual ${round}`);
        const b = await seed.member(ws, "OWNER");
        const [ab, ba] = await Promise.all([
          a.client.patch(`/api/workspaces/${ws}/members/${b.userId}`, { role: "MANAGER" }),
          b.client.patch(`/api/workspaces/${ws}/members/${a.userId}`, { role: "MANAGER" }),
        ]);
        const statuses = [ab.status, ba.status].sort();
        // The loser is a MANAGER by the time its change runs, so it may not touch an OWNER.
        assert.deepEqual(statuses, [200, 403], JSON.stringify([ab.body, ba.body]));
        assertProblem(ab.status === 403 ? ab : ba, 403, "FORBIDDEN");
        assert.equal(await db.membership.count({ where: { workspaceId: ws, role: "OWNER" } }), 1);
      }
    });

    await t.step("two owners demoting or removing themselves at once: one is LAST_OWNER", async () => {
      for (let round = 0; round < 5; round++) {
        const { workspaceId: ws, owner: a } = await seed.workspace(`Self ${round}`);
        const b = await seed.member(ws, "OWNER");
        const [ra, rb] = await Promise.all([
          a.client.patch(`/api/workspaces/${ws}/members/${a.userId}`, { role: "VIEWER" }),
          b.client.delete(`/api/workspaces/${ws}/members/${b.userId}`),
        ]);
        const winners = [ra, rb].filter((r) => r.status < 300);
        const losers = [ra, rb].filter((r) => r.status >= 300);
        assert.equal(winners.length, 1, JSON.stringify([ra.body, rb.body]));
        assert.equal(losers.length, 1);
        assertProblem(losers[0], 409, "LAST_OWNER");
        assert.equal(await db.membership.count({ where: { workspaceId: ws, role: "OWNER" } }), 1);
      }
    });
  } finally {
    await ta.close();
  }
});
