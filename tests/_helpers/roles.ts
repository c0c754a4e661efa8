/**
 * Callers of the role matrix (tests/roles_test.ts, GraphQL and REST) and the allow-lists
 * of the role table, shared so that REST and GraphQL are held to the same lists.
 */
import assert from "node:assert/strict";
import type { App } from "../../src/app.ts";
import { Client, type Reply, type Seed } from "./app.ts";

/** A person of each role, and an API token (which acts as MANAGER). */
export type Who = "OWNER" | "MANAGER" | "AGENT" | "VIEWER" | "TOKEN";
export const EVERYONE: Who[] = ["OWNER", "MANAGER", "AGENT", "VIEWER", "TOKEN"];
/** agent:write and members:manage: OWNER, MANAGER and so the API token. */
export const WRITERS: Who[] = ["OWNER", "MANAGER", "TOKEN"];
/** A login JWT of any role (creating a workspace, logout, password). */
export const PEOPLE: Who[] = ["OWNER", "MANAGER", "AGENT", "VIEWER"];
export const OWNER_ONLY: Who[] = ["OWNER"];
/** supervisor:use: OWNER, MANAGER and so the API token (chatting needs no person; approving does). */
export const SUPERVISORS: Who[] = ["OWNER", "MANAGER", "TOKEN"];
/** usage:read (what the workspace's messages cost): OWNER, MANAGER and so the API token. */
export const USAGE_READERS: Who[] = ["OWNER", "MANAGER", "TOKEN"];

/** The answer of a GraphQL operation: `data` and `errors` as sent. */
export async function gql(c: Client, query: string, variables?: Record<string, unknown>): Promise<Reply> {
  return await c.graphql(query, variables);
}

/** The data of a GraphQL answer without errors (fails the test otherwise). */
// deno-lint-ignore no-explicit-any
export function gqlOk(res: Reply, where = ""): any {
  assert.equal(res.status, 200, `${where}: ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body.errors, undefined, `${where}: ${JSON.stringify(res.body.errors)}`);
  assert.notEqual(res.body.data, null, `${where}: no data`);
  return res.body.data;
}

/** The answer carries exactly one error, with this `extensions.code`; returns that error. */
// deno-lint-ignore no-explicit-any
export function gqlRefused(res: Reply, code: string, where = ""): any {
  const errors = res.body?.errors;
  assert.equal(errors?.length, 1, `${where}: one ${code} error expected, got ${JSON.stringify(res.body)}`);
  assert.equal(errors[0].extensions?.code, code, `${where}: ${JSON.stringify(errors)}`);
  return errors[0];
}

/** A workspace with a person of each role and an API token; `clientOf` acts as one of them there. */
export async function seedRoleCast(app: App, seed: Seed, name: string) {
  const { workspaceId, owner } = await seed.workspace(name);
  const users = {
    OWNER: owner,
    MANAGER: await seed.member(workspaceId, "MANAGER"),
    AGENT: await seed.member(workspaceId, "AGENT"),
    VIEWER: await seed.member(workspaceId, "VIEWER"),
  };
  const apiToken: string =
    (await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "roles" })).body.token;
  /** `ids.token`: the API token of another workspace the row made (else this workspace's). */
  const clientOf = (who: Who, ids: { workspaceId: string; token?: string }): Client =>
    who === "TOKEN"
      ? new Client(app, ids.token ?? apiToken, ids.workspaceId)
      : new Client(app, users[who].token, ids.workspaceId);
  return { workspaceId, owner, users, apiToken, clientOf };
}
