/**
 * `deno task admin reset-password EMAIL` beside a live server on the same database: the printed
 * password logs in, the old one does not, every session the user had answers 401, a lock-out by
 * failed guesses is lifted, and the password appears on the command's stdout alone. An unknown email
 * exits 1 with a clear line. The usage answers from the command line alone (no set-up, no app).
 */
import assert from "node:assert/strict";
import { startServerProcess, TEST_JWT_SECRET } from "./_helpers/server_process.ts";
import { TEST_SECRETS_KEY } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";

const root = new URL("..", import.meta.url).pathname;
const EMAIL = "owner@example.com";
const PASSWORD = "owner-password-1";

/** `deno task admin ...` as an operator runs it, configured by env. */
async function admin(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: root,
    // Empty is unset: nothing of the test's own environment stands in for what `env` leaves out.
    env: { DATA_DIR: "", LOG_LEVEL: "error", SECRETS_KEY_PREVIOUS: "", ...env },
    stdin: "null",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("admin reset-password beside a live server: new password printed once, sessions revoked", async () => {
  const db = await createTestDatabase();
  const server = await startServerProcess(db.url, {
    BOOTSTRAP_OWNER_EMAIL: EMAIL,
    BOOTSTRAP_OWNER_PASSWORD: PASSWORD,
  });
  const login = async (email: string, password: string) => {
    const res = await fetch(`${server.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    return { status: res.status, body: await res.json() };
  };
  const me = async (token: string) => {
    const res = await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    await res.body?.cancel();
    return res.status;
  };
  const env = { DATABASE_URL: db.url, JWT_SECRET: TEST_JWT_SECRET, SECRETS_KEY: TEST_SECRETS_KEY };
  try {
    const first = await login(EMAIL, PASSWORD);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const second = await login(EMAIL, PASSWORD);
    assert.equal(second.status, 200);
    assert.equal(await me(first.body.token), 200);
    // The owner guesses until the account is locked: even the right password is refused now.
    for (let i = 0; i < 11; i++) await login(EMAIL, `wrong-guess-${i}`);
    assert.equal((await login(EMAIL, PASSWORD)).status, 429);

    // Any spelling of the address an operator types.
    const reset = await admin(["reset-password", " Owner@Example.COM "], env);
    assert.equal(reset.code, 0, reset.stderr);
    const printed = JSON.parse(reset.stdout);
    assert.deepEqual(Object.keys(printed).sort(), ["email", "password", "revokedSessions"]);
    assert.equal(printed.email, EMAIL);
    assert.equal(printed.revokedSessions, 2);
    assert.match(printed.password, /^[A-Za-z0-9_-]{16}$/);
    assert.equal(reset.stderr, "");

    assert.equal(await me(first.body.token), 401);
    assert.equal(await me(second.body.token), 401);
    const again = await login(EMAIL, printed.password);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(await me(again.body.token), 200);
    assert.equal((await login(EMAIL, PASSWORD)).status, 401);
    assert.ok(!server.stderr().includes(printed.password), "the server's log never holds the password");

    const unknown = await admin(["reset-password", "nobody@example.com"], env);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stdout, "");
    assert.equal(unknown.stderr.trim(), 'NOT_FOUND: A user with email "nobody@example.com" not found.');
    assert.equal(await me(again.body.token), 200, "a failed reset changes nothing");
  } finally {
    await server.stop();
    await db.drop();
  }
});

Deno.test("admin --help and mistakes answer from the command line alone: no set-up, no app loaded", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(`${root}deno.json`)).tasks;
  assert.equal(tasks.admin, "deno run -A src/admin.ts", "the task runs no set-up before the command");
  // What src/admin.ts loads before it knows the command: nothing of the app (the database,
  // migrations, the job engine and the generated client come with src/admin_commands.ts).
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "src/admin.ts"],
    cwd: root,
    stdout: "piped",
  }).output();
  const graph = JSON.parse(new TextDecoder().decode(info.stdout));
  const statics = graph.modules.filter((m: { specifier: string }) => m.specifier.startsWith("file://"))
    .map((m: { specifier: string }) => m.specifier.slice(`file://${root}`.length));
  const entry = graph.modules.find((m: { specifier: string }) => m.specifier.endsWith("/src/admin.ts"));
  const staticDeps = (entry.dependencies ?? []).filter((d: { isDynamic?: boolean }) => !d.isDynamic)
    .map((d: { specifier: string }) => d.specifier);
  assert.deepEqual(staticDeps, ["node:util"]);
  assert.ok(statics.includes("src/admin_commands.ts"), "the commands are loaded on demand");

  // A configuration no command could run with: the usage does not need one.
  const broken = { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", JWT_SECRET: "" };
  const help = await admin(["--help"], broken);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^usage: deno task admin <command>/);
  assert.match(help.stdout, /reset-password EMAIL/);
  const none = await admin([], broken);
  assert.equal(none.code, 2);
  assert.match(none.stdout, /^usage:/);
  const unknown = await admin(["reset-pasword", EMAIL], broken);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^unknown command "reset-pasword"\nusage:/);
  const twoEmails = await admin(["reset-password", EMAIL, "b@example.com"], broken);
  assert.equal(twoEmails.code, 2);
  assert.match(twoEmails.stderr, /^reset-password takes one EMAIL\n/);
  const badOption = await admin(["create-user", "--emial", EMAIL], broken);
  assert.equal(badOption.code, 2);
  assert.match(badOption.stderr, /--emial/);
});
