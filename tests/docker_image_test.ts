/**
 * The image's build context and health check, without a Docker engine: `.dockerignore` (read with
 * @balena/dockerignore, Docker's own matching rules) leaves out every path `.gitignore` names (git's
 * own `check-ignore` confirms each probe) and every local data directory, and keeps what the build
 * needs; the HEALTHCHECK's command answers 0 for a 200 from /healthz and 1 otherwise.
 */
import assert from "node:assert/strict";
import dockerignoreModule from "@balena/dockerignore";

// A CommonJS package whose types declare an ES default: the default import is the factory itself.
const dockerignore = dockerignoreModule as unknown as typeof dockerignoreModule.default;

const root = new URL("..", import.meta.url).pathname;
const read = (file: string) => Deno.readTextFileSync(`${root}${file}`);
const lines = (text: string) => text.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));

/** Paths a .gitignore pattern ignores: at the top and, for a pattern without a slash, deeper down. */
function probesOf(pattern: string): string[] {
  const dir = pattern.endsWith("/");
  const name = pattern.replace(/^\//, "").replace(/\/$/, "").replaceAll("*", "x");
  const anyDepth = !pattern.replace(/\/$/, "").includes("/");
  const places = anyDepth ? [name, `bench/postgraphile/${name}`] : [name];
  return places.map((p) => dir ? `${p}/file` : p);
}

/** Whether git ignores `path` under the checkout's .gitignore (the file need not exist). */
async function gitIgnores(path: string): Promise<boolean> {
  const out = await new Deno.Command("git", {
    args: ["check-ignore", "--no-index", "-q", path],
    cwd: root,
    stdout: "null",
    stderr: "null",
  }).output();
  return out.code === 0;
}

const docker = dockerignore({ ignorecase: false }).add(lines(read(".dockerignore")));

Deno.test(".dockerignore leaves out every path .gitignore names", async () => {
  const patterns = lines(read(".gitignore"));
  assert.ok(patterns.length >= 10);
  assert.deepEqual(patterns.filter((p) => p.startsWith("!")), [], "no negations to mirror");
  for (const pattern of patterns) {
    for (const probe of probesOf(pattern)) {
      assert.ok(await gitIgnores(probe), `${probe} is a path git ignores (${pattern})`);
      assert.ok(docker.ignores(probe), `.dockerignore leaves out ${probe} (.gitignore: ${pattern})`);
    }
  }
});

Deno.test(".dockerignore leaves out every local data directory and keeps what the build needs", () => {
  const local = [
    ".data/postgres/PG_VERSION", // the embedded PostgreSQL (DATA_DIR's default)
    ".data/secrets-key",
    ".data/bootstrap-password",
    ".data-tour/postgres/PG_VERSION", // the README tour's DATA_DIR
    ".tools/node_modules/.bin/deno",
    ".tools/pg5/node_modules/x", // the nested benchmark's PostGraphile
    "node_modules/.deno/x",
    "bench/postgraphile/node_modules/x",
    "bench/.tmp/x",
    ".deno/npm/x",
    "src/generated/prisma/client.ts",
    "web/dist/main.js",
    "web/src/generated/graphql-env.d.ts",
    "coverage/x.json",
    "server.log",
    ".env",
    ".git/HEAD",
    "docs/screenshots/agent.png",
  ];
  assert.deepEqual(local.filter((p) => !docker.ignores(p)), []);
  const needed = [
    "deno.json",
    "deno.lock",
    "Dockerfile",
    "src/main.ts",
    "src/admin.ts",
    "src/media/_document_worker.ts",
    "prisma/schema.prisma",
    "prisma/migrations/migration_lock.toml",
    "prisma.config.ts",
    "tools/schema_engine.ts",
    "tools/healthcheck.ts",
    "web/build.ts",
    "web/src/main.tsx",
    "web/tsconfig.json",
    "schema.graphql",
  ];
  assert.deepEqual(needed.filter((p) => docker.ignores(p)), []);
});

/** The HEALTHCHECK's command as the Dockerfile writes it, run here with `env`. */
async function healthcheck(env: Record<string, string>) {
  const line = read("Dockerfile").split("\n").find((l) =>
    l.trim().startsWith('CMD ["deno", "run", "--no-config"')
  );
  assert.ok(line, "the HEALTHCHECK's CMD");
  const [command, ...args] = JSON.parse(line.trim().slice("CMD ".length)) as string[];
  assert.equal(command, "deno");
  const out = await new Deno.Command(Deno.execPath(), { args, cwd: root, env, stdin: "null" }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("the HEALTHCHECK answers 0 for a 200 from /healthz and 1 for a 503 or no answer", async () => {
  const dockerfile = read("Dockerfile");
  assert.match(
    dockerfile,
    /\nHEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \\\n\s+CMD /,
  );
  let status = 200;
  const paths: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    paths.push(new URL(req.url).pathname);
    return Response.json({ status: status === 200 ? "ok" : "unavailable" }, { status });
  });
  try {
    const port = String(server.addr.port);
    // HOST as the image sets it: a wildcard bind, reached on loopback.
    const ok = await healthcheck({ PORT: port, HOST: "0.0.0.0" });
    assert.equal(ok.code, 0, ok.stderr);
    status = 503;
    const down = await healthcheck({ PORT: port, HOST: "127.0.0.1" });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /\/healthz answered 503/);
    assert.deepEqual(paths, ["/healthz", "/healthz"]);
  } finally {
    await server.shutdown();
  }
  const closed = await healthcheck({ PORT: String(server.addr.port), HOST: "0.0.0.0" });
  assert.equal(closed.code, 1);
  assert.match(closed.stderr, /\/healthz did not answer/);
});
