/**
 * A real app on a real database of its own, called through `app.fetch` (no port), with a small
 * HTTP client and a seed for users of each role.
 */
import { type App, buildApp, type BuildOptions } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { silentLogger } from "../../src/shared/logger.ts";
import { decodeKey, SecretBox } from "../../src/shared/secret_box.ts";
import { createUser } from "../../src/workspaces/mod.ts";
import type { Role } from "../../src/auth/actor.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";

export interface TestApp {
  app: App;
  db: TestDatabase;
  /** A client without credentials. */
  anon: Client;
  seed: Seed;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

export class Client {
  constructor(
    readonly app: App,
    readonly token?: string,
    readonly workspaceId?: string,
  ) {}

  /** The same client acting in another workspace (x-workspace-id). */
  in(workspaceId: string | undefined): Client {
    return new Client(this.app, this.token, workspaceId);
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const h = new Headers(headers);
    if (this.token && !h.has("authorization")) h.set("authorization", `Bearer ${this.token}`);
    if (this.workspaceId && !h.has("x-workspace-id")) h.set("x-workspace-id", this.workspaceId);
    let payload: BodyInit | undefined;
    if (typeof body === "string" || body instanceof Uint8Array) payload = body as BodyInit;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined && !h.has("content-type")) h.set("content-type", "application/json");
    const res = await this.app.fetch(
      new Request(`http://test.local${path}`, { method, headers: h, body: payload }),
    );
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch { /* not JSON: keep the text */ }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  get = (path: string, headers?: Record<string, string>) => this.request("GET", path, undefined, headers);
  post = (path: string, body?: unknown, headers?: Record<string, string>) =>
    this.request("POST", path, body, headers);
  put = (path: string, body?: unknown, headers?: Record<string, string>) =>
    this.request("PUT", path, body, headers);
  patch = (path: string, body?: unknown, headers?: Record<string, string>) =>
    this.request("PATCH", path, body, headers);
  delete = (path: string, headers?: Record<string, string>) =>
    this.request("DELETE", path, undefined, headers);

  /** A GraphQL operation; returns the whole response body ({ data, errors }). */
  async graphql(query: string, variables?: Record<string, unknown>): Promise<Reply> {
    return await this.post("/graphql", { query, variables });
  }
}

export interface SeededUser {
  userId: string;
  email: string;
  password: string;
  token: string;
  /** A client for this user in the seeded workspace. */
  client: Client;
}

export class Seed {
  private n = 0;
  constructor(private readonly app: App) {}

  /** A new workspace with its OWNER (logged in). */
  async workspace(name = "Acme"): Promise<{ workspaceId: string; owner: SeededUser }> {
    const owner = await this.user();
    const created = await new Client(this.app, owner.token).post("/api/workspaces", { name });
    if (created.status !== 201) {
      throw new Error(`seed workspace: ${created.status} ${JSON.stringify(created.body)}`);
    }
    const workspaceId = created.body.id as string;
    return { workspaceId, owner: { ...owner, client: new Client(this.app, owner.token, workspaceId) } };
  }

  /** A user with no membership, logged in. */
  async user(): Promise<SeededUser> {
    const email = `user${++this.n}-${crypto.randomUUID().slice(0, 8)}@example.test`;
    const password = "correct horse battery";
    const user = await createUser(this.app.deps, { email, password, name: `User ${this.n}` });
    const login = await new Client(this.app).post("/api/auth/login", { email, password });
    return {
      userId: user.id,
      email,
      password,
      token: login.body.token,
      client: new Client(this.app, login.body.token),
    };
  }

  /** A user holding `role` in the workspace, logged in, with a client set to that workspace. */
  async member(workspaceId: string, role: Role): Promise<SeededUser> {
    const user = await this.user();
    await this.app.deps.db.membership.create({ data: { userId: user.userId, workspaceId, role } });
    return { ...user, client: new Client(this.app, user.token, workspaceId) };
  }

  /** An agent created through the API by `client` (a MANAGER or OWNER). */
  async agent(client: Client, fields: Record<string, unknown> = {}) {
    const res = await client.post("/api/agents", { name: "Ana", jobName: "Acme", ...fields });
    if (res.status !== 201) throw new Error(`seed agent: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

export const RECEIVER_ALLOWLIST = "127.0.0.1/32";
/** JWT_SECRET of test apps. */
export const TEST_JWT_SECRET = "test-secret-test-secret-test-secret-0123456789";
/** SECRETS_KEY of test apps: 32 fixed bytes, base64. */
export const TEST_SECRETS_KEY = btoa("switchboard-test-secrets-key-32b");

/**
 * The configuration of an app on the test database at `databaseUrl` (a second instance, or one
 * built with options of its own): the test secrets, APP_ENV test, receivers on 127.0.0.1 allowed.
 * `env` adds to it or overrides it (an empty string unsets).
 */
export function testConfig(databaseUrl: string, env: Record<string, string> = {}) {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    SECRETS_KEY: TEST_SECRETS_KEY,
    OUTBOUND_ALLOWLIST: RECEIVER_ALLOWLIST,
    APP_ENV: "test",
    ...env,
  });
}
/** The secret box of test apps, for rows a test inserts itself. */
export const testSecretBox = () => new SecretBox(decodeKey(TEST_SECRETS_KEY)!);

/** Starts a test app on a fresh database. Close it at the end of the test. */
export async function startTestApp(
  env: Record<string, string> = {},
  options: BuildOptions = {},
): Promise<TestApp> {
  const db = await createTestDatabase();
  const config = testConfig(db.url, {
    PUBLIC_URL: "http://switchboard.test",
    // The agent replies only in tests that ask for it (they set the windows they need): elsewhere a
    // customer message would otherwise end in a model call, or a transfer when there is no key.
    GROUPING_FAST_MS: "600000",
    GROUPING_MEDIUM_MS: "600000",
    GROUPING_SLOW_MS: "600000",
    ...env,
  });
  const app = await buildApp(config, { logger: silentLogger, bootstrap: false, ...options });
  return {
    app,
    db,
    anon: new Client(app),
    seed: new Seed(app),
    async close() {
      await app.stop();
      await db.drop();
    },
  };
}
