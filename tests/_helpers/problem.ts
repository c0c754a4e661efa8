/** Assertions shared by the REST tests: problem+json error bodies and "nothing changed" snapshots. */
import assert from "node:assert/strict";
import type { App } from "../../src/app.ts";
import type { Reply } from "./app.ts";

/**
 * The reply is an RFC 9457 problem with this status and code. For VALIDATION_FAILED, `fields`
 * (when given) must each appear as a path in `errors`.
 */
export function assertProblem(res: Reply, status: number, code: string, fields?: string[]): void {
  const where = `${status} ${code} expected, got ${res.status} ${JSON.stringify(res.body)}`;
  assert.equal(res.status, status, where);
  assert.equal(res.headers.get("content-type"), "application/problem+json", where);
  const body = res.body;
  assert.equal(typeof body, "object", where);
  assert.equal(body.status, status, where);
  assert.equal(body.code, code, where);
  assert.equal(typeof body.type, "string", where);
  assert.equal(typeof body.title, "string", where);
  assert.ok(body.title.length > 0, where);
  assert.equal(typeof body.detail, "string", where);
  // Every problem names its request: `instance` is urn:request:<the response's x-request-id>.
  assert.equal(
    body.instance,
    `urn:request:${encodeURIComponent(res.headers.get("x-request-id") ?? "")}`,
    where,
  );
  const keys = Object.keys(body).filter((k) => k !== "instance").sort();
  if (code === "VALIDATION_FAILED") {
    assert.deepEqual(keys, ["code", "detail", "errors", "status", "title", "type"], where);
    assert.ok(Array.isArray(body.errors) && body.errors.length > 0, where);
    for (const e of body.errors) {
      assert.deepEqual(Object.keys(e).sort(), ["message", "path"], where);
      assert.equal(typeof e.path, "string", where);
      assert.equal(typeof e.message, "string", where);
    }
    const paths = body.errors.map((e: { path: string }) => e.path);
    for (const f of fields ?? []) assert.ok(paths.includes(f), `errors should name ${f}: ${where}`);
  } else {
    assert.deepEqual(keys, ["code", "detail", "status", "title", "type"], where);
  }
  if (status === 401) assert.equal(res.headers.get("www-authenticate"), "Bearer", where);
}

/** The reply is a success with this status (the body is shown when it is not). */
export function assertStatus(res: Reply, status: number): void {
  assert.equal(res.status, status, `expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  if (status === 204) assert.equal(res.body, null);
  else if (status < 300) assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
}

/** Row counts of every table the REST API writes. */
export async function counts(app: App): Promise<Record<string, number>> {
  const db = app.deps.db;
  const [users, workspaces, memberships, apiTokens, invites, agents, promptVersions, intents, webhooks] =
    await Promise.all([
      db.user.count(),
      db.workspace.count(),
      db.membership.count(),
      db.apiToken.count(),
      db.invite.count(),
      db.agent.count(),
      db.promptVersion.count(),
      db.intent.count(),
      db.eventWebhook.count(),
    ]);
  return { users, workspaces, memberships, apiTokens, invites, agents, promptVersions, intents, webhooks };
}

/** The tables `snapshot` reads, in its order; `SupervisorCreditDay` and `ConversationRead` have no id of their own. */
const SNAPSHOT_TABLES = [
  "User",
  "Workspace",
  "Membership",
  "ApiToken",
  "Invite",
  "Agent",
  "PromptVersion",
  "Intent",
  "EventWebhook",
  "Channel",
  "Contact",
  "Conversation",
  "Message",
  "WhatsAppTemplate",
  "SupervisorConversation",
  "SupervisorMessage",
  "SupervisorCreditDay",
  "ConversationRead",
  // Last: the approvals tests compare everything but this table.
  "PendingApproval",
];

/** Of a snapshot taken with `more` tables, what `snapshot(app)` alone reads. */
export function restTablesOf(snapshot: string): string {
  const end = snapshot.indexOf("\n");
  return end < 0 ? snapshot : snapshot.slice(0, end);
}

/**
 * Every row of every table the REST API writes, as JSON (lastUsedAt left out: token use updates it
 * in the background). Two equal snapshots mean nothing changed. `more` tables follow, by id, on a
 * line of their own (JSON text has no raw newline), so restTablesOf() finds the REST tables' part.
 * One statement, so one consistent read and one round trip: the fuzz and role tests take over a
 * thousand of these.
 */
export async function snapshot(app: App, more: string[] = []): Promise<string> {
  const tables = (names: string[]) =>
    names.map((table) => {
      const row = table === "ApiToken" ? `to_jsonb(t) - 'lastUsedAt'` : "to_jsonb(t)";
      const order = table === "SupervisorCreditDay"
        ? `t."workspaceId", t."day"`
        : table === "ConversationRead"
        ? `t."conversationId", t."userId"`
        : "t.id";
      return `(SELECT coalesce(jsonb_agg(${row} ORDER BY ${order}), '[]') FROM "${table}" t)`;
    }).join(", ");
  const extra = more.length ? ` || E'\\n' || json_build_array(${tables(more)})::text` : "";
  const [{ json }] = await app.deps.db.$queryRawUnsafe<Array<{ json: string }>>(
    `SELECT json_build_array(${tables(SNAPSHOT_TABLES)})::text${extra} AS json`,
  );
  return json;
}
