/**
 * Operator commands beside a live server on the embedded PostgreSQL: `deno task admin ...` and the
 * `db:migrate:*` tasks attach to the server's database and leave it running; the server, which
 * started it, stops it when it stops itself.
 */
import assert from "node:assert/strict";
import { freePort, startServerProcess } from "./_helpers/server_process.ts";

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

Deno.test("Ctrl-C in a terminal (SIGINT to the whole process group) stops cleanly: exit 0, no error logged", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "switchboard-ctrl-c-" });
  await Deno.chmod(dataDir, 0o755);
  const port = freePort();
  // setsid: the server leads a process group of its own, as a shell's foreground job does.
  const child = new Deno.Command("setsid", {
    args: [Deno.execPath(), "run", "-A", "--unstable-no-legacy-abort", `${root}src/main.ts`],
    cwd: root,
    env: { DATA_DIR: dataDir, DATABASE_URL: "", PORT: String(port), LOG_LEVEL: "info" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = Promise.all([child.stdout, child.stderr].map((s) => new Response(s).text()));
  try {
    await waitForHealth(`http://127.0.0.1:${port}`);
  } catch (e) {
    child.kill("SIGKILL");
    throw new Error(`${e}\n${(await output).join("\n")}`);
  }
  // What the terminal does on Ctrl-C: SIGINT to every process of the foreground group.
  const kill = await new Deno.Command("kill", { args: ["-INT", "--", `-${child.pid}`] }).output();
  assert.equal(kill.code, 0);
  const status = await child.status;
  const [stdout, stderr] = await output;
  assert.equal(status.code, 0, stdout + stderr);
  const errors = `${stdout}\n${stderr}`.split("\n").filter((l) =>
    /"level":"error"|uncaught|panicked/i.test(l)
  );
  assert.deepEqual(errors, []);
  assert.equal(await postmasterRunning(dataDir), false, "the server stopped its PostgreSQL last");
  await Deno.remove(dataDir, { recursive: true });
});

async function waitForHealth(url: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/healthz`);
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch { /* not listening yet */ }
    // A process' start-up seen from outside: nothing to wait on but its port.
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("the server did not become healthy");
}
