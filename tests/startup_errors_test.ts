/**
 * Start-up mistakes end with one line naming the variable to fix and exit code 78, never a stack
 * trace; nothing is created (no first-owner password printed) before the start can succeed.
 */
import assert from "node:assert/strict";
import { TEST_SECRETS_KEY } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { freePort, TEST_JWT_SECRET } from "./_helpers/server_process.ts";

const main = new URL("../src/main.ts", import.meta.url).pathname;

async function start(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-no-legacy-abort", main],
    env: { JWT_SECRET: TEST_JWT_SECRET, SECRETS_KEY: TEST_SECRETS_KEY, LOG_LEVEL: "warn", ...env },
    stdin: "null",
  }).output();
  // Deno colours its own messages: the escape sequences are not part of the line.
  // deno-lint-ignore no-control-regex
  const text = (b: Uint8Array) => new TextDecoder().decode(b).replace(/\x1b\[[0-9;]*m/g, "");
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

function assertOneLine(
  out: { code: number; stdout: string; stderr: string },
  variable: string,
  what: RegExp,
) {
  const all = `${out.stdout}${out.stderr}`;
  assert.equal(out.code, 78, all);
  const lines = all.split("\n").filter((l) => l.trim());
  assert.equal(lines.length, 1, all);
  assert.ok(lines[0].startsWith(`${variable}: `) || lines[0].includes(` ${variable}: `), lines[0]);
  assert.match(lines[0], what);
  assert.doesNotMatch(all, /^\s+at /m);
}

Deno.test("start-up mistakes: one line naming the variable, exit 78", async (t) => {
  const db = await createTestDatabase();
  try {
    const url = new URL(db.url);
    await t.step("database unreachable", async () => {
      const closed = `postgresql://u:secret-pw@127.0.0.1:${freePort()}/nothing`;
      const out = await start({ DATABASE_URL: closed, PORT: String(freePort()) });
      assertOneLine(out, "DATABASE_URL", /cannot reach the database at 127\.0\.0\.1:\d+/);
      assert.doesNotMatch(out.stderr, /secret-pw/);
    });
    await t.step("wrong password", async () => {
      const wrong = new URL(db.url);
      wrong.password = "not-the-password";
      const out = await start({ DATABASE_URL: wrong.href, PORT: String(freePort()) });
      assertOneLine(out, "DATABASE_URL", /refused the user name or password/);
      assert.doesNotMatch(out.stderr, /not-the-password/);
    });
    await t.step("unknown database", async () => {
      const unknown = new URL(db.url);
      unknown.pathname = "/no_such_database";
      const out = await start({ DATABASE_URL: unknown.href, PORT: String(freePort()) });
      assertOneLine(out, "DATABASE_URL", /"no_such_database" does not exist/);
    });
    await t.step("port in use", async () => {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      try {
        const port = (listener.addr as Deno.NetAddr).port;
        const out = await start({ DATABASE_URL: url.href, PORT: String(port) });
        assertOneLine(out, "PORT", new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
      } finally {
        listener.close();
      }
    });
    await t.step("port in use with a new data folder: no first-owner password printed", async () => {
      const dataDir = await Deno.makeTempDir({ prefix: "switchboard-busy-port-" });
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      try {
        const port = (listener.addr as Deno.NetAddr).port;
        const out = await start({ DATA_DIR: dataDir, DATABASE_URL: "", PORT: String(port) });
        assertOneLine(out, "PORT", /already in use/);
        assert.doesNotMatch(out.stdout + out.stderr, /password/i);
      } finally {
        listener.close();
        await Deno.remove(dataDir, { recursive: true });
      }
    });
    await t.step("a bad variable", async () => {
      const out = await start({ DATABASE_URL: url.href, PORT: "eighty" });
      assertOneLine(out, "PORT", /Invalid configuration/);
    });
  } finally {
    await db.drop();
  }
});
