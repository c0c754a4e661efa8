/** The first owner, made when the database has no user: from BOOTSTRAP_* when set, otherwise owner@localhost. */
import assert from "node:assert/strict";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createLogger, silentLogger } from "../src/shared/logger.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { Client, TEST_SECRETS_KEY } from "./_helpers/app.ts";

const JWT_SECRET = "test-secret-test-secret-test-secret-0123456789";
const SECRETS_KEY = TEST_SECRETS_KEY;

Deno.test("a database without users gets the BOOTSTRAP_* owner and workspace, once", async () => {
  const db = await createTestDatabase();
  const env = {
    DATABASE_URL: db.url,
    JWT_SECRET,
    SECRETS_KEY,
    BOOTSTRAP_OWNER_EMAIL: "boss@example.test",
    BOOTSTRAP_OWNER_PASSWORD: "boss-password-1",
    BOOTSTRAP_WORKSPACE_NAME: "Boss Co",
  };
  try {
    for (let start = 0; start < 2; start++) {
      const app = await buildApp(loadConfig(env), { logger: silentLogger });
      const login = await new Client(app).post("/api/auth/login", {
        email: "boss@example.test",
        password: "boss-password-1",
      });
      assert.equal(login.status, 200);
      assert.deepEqual(login.body.workspaces.map((w: { name: string; role: string }) => [w.name, w.role]), [
        ["Boss Co", "OWNER"],
      ]);
      assert.equal(await app.deps.db.user.count(), 1);
      await app.stop();
    }
  } finally {
    await db.drop();
  }
});

Deno.test("without BOOTSTRAP_* the first owner is owner@localhost with a printed password", async () => {
  const db = await createTestDatabase();
  const printed: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => printed.push(args.join(" "));
  try {
    const app = await buildApp(loadConfig({ DATABASE_URL: db.url, JWT_SECRET, SECRETS_KEY }), {
      logger: silentLogger,
    });
    console.log = log;
    const password = /owner@localhost \/ (\S+)/.exec(printed.join("\n"))?.[1];
    assert.ok(password, `no password in: ${printed.join("\n")}`);
    const login = await new Client(app).post("/api/auth/login", { email: "owner@localhost", password });
    assert.equal(login.status, 200);
    assert.equal(login.body.workspaces.length, 1);
    assert.equal(login.body.workspaces[0].role, "OWNER");
    await app.stop();
  } finally {
    console.log = log;
    await db.drop();
  }
});

Deno.test("in production the generated password goes to DATA_DIR/bootstrap-password (0600), never to stdout", async () => {
  const db = await createTestDatabase();
  const dataDir = await Deno.makeTempDir({ prefix: "switchboard-bootstrap-" });
  const printed: string[] = [];
  const logged: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => printed.push(args.join(" "));
  try {
    const app = await buildApp(
      loadConfig({ DATABASE_URL: db.url, JWT_SECRET, SECRETS_KEY, APP_ENV: "production", DATA_DIR: dataDir }),
      { logger: createLogger("debug", (line) => logged.push(line)) },
    );
    console.log = log;
    const file = `${dataDir}/bootstrap-password`;
    const password = (await Deno.readTextFile(file)).trim();
    assert.equal(password.length >= 12, true);
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    const output = printed.join("\n");
    assert.ok(output.includes(file), output);
    assert.ok(!output.includes(password), "the password must not be printed");
    assert.ok(!logged.join("\n").includes(password), "the password must not be logged");
    const login = await new Client(app).post("/api/auth/login", { email: "owner@localhost", password });
    assert.equal(login.status, 200);
    await app.stop();
  } finally {
    console.log = log;
    await db.drop();
    await Deno.remove(dataDir, { recursive: true });
  }
});
