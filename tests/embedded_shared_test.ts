/**
 * Operator commands beside a live server on the embedded PostgreSQL: `deno task admin ...` and the
 * `db:migrate:*` tasks attach to the server's database and leave it running; the server, which
 * started it, stops it when it stops itself.
 */
import assert from "node:assert/strict";
import { startServerProcess } from "./_helpers/server_process.ts";

const root = new URL("..", import.meta.url).pathname;

async function run(
  dataDir: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...args],
    cwd: root,
    env: { DATA_DIR: dataDir, DATABASE_URL: "", LOG_LEVEL: "error" },
    stdin: "null",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

async function postmasterRunning(dataDir: string): Promise<boolean> {
  try {
    const pid = Number((await Deno.readTextFile(`${dataDir}/postgres/postmaster.pid`)).split("\n")[0]);
    Deno.kill(pid, "SIGCONT"); // a no-op signal that fails when the process is gone
    return true;
  } catch {
    return false;
  }
}

Deno.test("admin and migrate commands beside a live server leave its embedded PostgreSQL running", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "switchboard-embedded-" });
  // As root the embedded PostgreSQL runs as the postgres user, which must reach the directory.
  await Deno.chmod(dataDir, 0o755);
  const server = await startServerProcess("", {
    DATA_DIR: dataDir,
    BOOTSTRAP_OWNER_EMAIL: "owner@example.com",
    BOOTSTRAP_OWNER_PASSWORD: "owner-password-1",
  });
  const login = async () =>
    await fetch(`${server.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "owner@example.com", password: "owner-password-1" }),
    });
  try {
    const first = await login();
    assert.equal(first.status, 200, await first.text());

    const help = await run(dataDir, ["src/admin.ts", "--help"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /create-user/);
    const created = await run(dataDir, [
      "src/admin.ts",
      "create-user",
      "--email",
      "second@example.com",
      "--password",
      "second-password-1",
    ]);
    assert.equal(created.code, 0, created.stderr);
    const status = await run(dataDir, ["tools/prisma_db.ts", "migrate", "status"]);
    assert.equal(status.code, 0, status.stderr + status.stdout);

    const health = await fetch(`${server.url}/healthz`);
    await health.body?.cancel();
    assert.equal(health.status, 200);
    const again = await login();
    assert.equal(again.status, 200, await again.text());
    assert.ok(await postmasterRunning(dataDir));
  } finally {
    await server.stop();
  }
  assert.equal(await postmasterRunning(dataDir), false, "the server that started it stopped it");
  await Deno.remove(dataDir, { recursive: true });
});
