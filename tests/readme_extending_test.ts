/**
 * The README's "Extending it" is true as written. Its code block's three steps (a column in
 * prisma/schema.prisma, the migrate command, one line in the type's Pothos fields) are read from the
 * README and applied to a copy of the project in a temporary directory (the checkout is never
 * touched; node_modules is linked, so nothing is downloaded): the migrate command runs as a user
 * types it, then `deno task generate` (what `deno task start`'s set-up runs). The copy's server then
 * starts on a fresh test database, applies the written migration itself and, seen from outside,
 * shows the field in REST's write answer and reads, in GraphQL and in the OpenAPI document; the
 * copy's `deno task schema` step writes it into schema.graphql.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { createTestDatabase } from "./_helpers/db.ts";
import { freePort, TEST_JWT_SECRET } from "./_helpers/server_process.ts";
import { TEST_SECRETS_KEY } from "./_helpers/app.ts";
import { baseEnv, Output, README, ROOT } from "./_helpers/tour.ts";

/** The section's steps, as its code block says them. */
interface Steps {
  /** Step 1: the file, the model and the field line to add to it. */
  schemaFile: string;
  model: string;
  column: string;
  /** Step 2: the command that writes the migration, and the migration's name (its last word). */
  migrate: string;
  migrationName: string;
  /** Step 3: the file, the type and the line to add to its fields. */
  typesFile: string;
  type: string;
  fieldLine: string;
  /** The field's name, which steps 1 and 3 agree on. */
  field: string;
}

/** The steps of README.md's "## Extending it" code block; fails when the block no longer has these three. */
function extendingSteps(readme: string): Steps {
  const section = /^## Extending it\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  assert.ok(section, 'README.md has a section "## Extending it"');
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(block, "the section has a ts code block");
  const lines = block.trimEnd().split("\n");
  assert.equal(lines.length, 4, `three steps and the line of the third, nothing more:\n${block}`);
  const step1 = /^\/\/ 1\. ([^\s,]+), model (\w+): +(\S.*?)\s*$/.exec(lines[0]);
  assert.ok(step1, `step 1 names a file, a model and a field: ${lines[0]}`);
  const step2 = /^\/\/ 2\. (deno task \S+ (\w+)) +\(writes the migration\)$/.exec(lines[1]);
  assert.ok(step2, `step 2 is a deno task that writes the migration: ${lines[1]}`);
  const step3 = /^\/\/ 3\. ([^\s,]+), in (\w+)'s fields:$/.exec(lines[2]);
  assert.ok(step3, `step 3 names a file and a type: ${lines[2]}`);
  const field = /^(\w+): t\.\w+\("(\w+)"/.exec(lines[3]);
  assert.ok(field, `step 3's line exposes a field: ${lines[3]}`);
  assert.equal(field[1], field[2], "step 3 exposes the field under its column's name");
  assert.equal(step1[3].split(/\s+/)[0], field[1], "steps 1 and 3 name one field");
  return {
    schemaFile: step1[1],
    model: step1[2],
    column: step1[3],
    migrate: step2[1],
    migrationName: step2[2],
    typesFile: step3[1],
    type: step3[2],
    fieldLine: lines[3],
    field: field[1],
  };
}

/** `schema` with `column` as the first field of `model`. */
function addToModel(schema: string, model: string, column: string): string {
  const open = new RegExp(`^model ${model} \\{\\n`, "m").exec(schema);
  assert.ok(open, `model ${model} {`);
  const at = open.index + open[0].length;
  return `${schema.slice(0, at)}  ${column}\n${schema.slice(at)}`;
}

/** `source` with `line` as the first of the fields of `builder.prismaObject("<type>", ...)`. */
function addToFields(source: string, type: string, line: string): string {
  const declared = source.indexOf(`builder.prismaObject("${type}",`);
  assert.ok(declared >= 0, `builder.prismaObject("${type}", ...) is declared there`);
  const fields = /^( *)fields: \(t\) => \(\{\n/m.exec(source.slice(declared));
  assert.ok(fields, `${type}'s fields: (t) => ({`);
  const at = declared + fields.index + fields[0].length;
  return `${source.slice(0, at)}${fields[1]}  ${line}\n${source.slice(at)}`;
}

/** Runs `args` in `cwd` to its end (at most two minutes) and answers what it printed; fails unless it exits 0. */
async function run(args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const out = await new Deno.Command(args[0], {
    args: args.slice(1),
    cwd,
    // JITI_FS_CACHE: Prisma's config loader would cache the copy's prisma.config.ts in the linked node_modules.
    env: { ...baseEnv(), NO_COLOR: "1", JITI_FS_CACHE: "false", ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `${args.join(" ")} in ${cwd}:\n${text}`);
  return text;
}

/** The block of `type <name> {` in SDL. */
function sdlType(sdl: string, name: string): string {
  const m = new RegExp(`^type ${name} (?:implements \\w+ )?\\{\\n[\\s\\S]*?^\\}$`, "m").exec(sdl);
  assert.ok(m, `type ${name} in the printed schema`);
  return m[0];
}

const OWNER = { email: "owner@extending.test", password: "correct horse battery" };

Deno.test("the README's Extending it: its three steps, read from its code block", () => {
  const steps = extendingSteps(README);
  assert.equal(steps.schemaFile, "prisma/schema.prisma");
  assert.match(steps.migrate, /^deno task db:migrate:new \w+$/);
  assert.ok(steps.typesFile.startsWith("src/graphql/types/"), steps.typesFile);
});

Deno.test("the README's Extending it, applied to a copy of the project, adds the field everywhere it says", async () => {
  const steps = extendingSteps(README);
  const copy = await Deno.makeTempDir({ prefix: "switchboard-extending-" });
  const db = await createTestDatabase();
  let server: { child: Deno.ChildProcess; stdout: Output; stderr: Output } | undefined;
  try {
    // The project as `deno task start` needs it (web/ is the console: the server runs without it).
    await run(
      ["cp", "-r", "src", "prisma", "tools", "deno.json", "deno.lock", "prisma.config.ts", `${copy}/`],
      ROOT,
    );
    await Deno.symlink(`${ROOT}node_modules`, `${copy}/node_modules`);

    // Step 1.
    const schemaPath = `${copy}/${steps.schemaFile}`;
    await Deno.writeTextFile(
      schemaPath,
      addToModel(await Deno.readTextFile(schemaPath), steps.model, steps.column),
    );

    // Step 2, as typed, against the test database (Prisma diffs the schema with a shadow database).
    const before = new Set([...Deno.readDirSync(`${copy}/prisma/migrations`)].map((e) => e.name));
    const migrated = await run(["sh", "-c", steps.migrate], copy, { DATABASE_URL: db.url });
    const written = [...Deno.readDirSync(`${copy}/prisma/migrations`)].map((e) => e.name)
      .filter((name) => !before.has(name));
    assert.deepEqual(
      written.map((name) => name.replace(/^\d{14}_/, "")),
      [steps.migrationName],
      `one migration written:\n${migrated}`,
    );
    const sql = await Deno.readTextFile(`${copy}/prisma/migrations/${written[0]}/migration.sql`);
    assert.match(sql, new RegExp(`ALTER TABLE "${steps.model}" ADD COLUMN\\s+"${steps.field}" TEXT;`), sql);

    // Step 3, then the generated client and Pothos types, as `deno task start` makes them.
    const typesPath = `${copy}/${steps.typesFile}`;
    await Deno.writeTextFile(
      typesPath,
      addToFields(await Deno.readTextFile(typesPath), steps.type, steps.fieldLine),
    );
    await run([Deno.execPath(), "task", "generate"], copy);

    // Nothing applied the migration yet: the server's start-up does.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const column = () =>
      client.query(
        `SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = $2`,
        [steps.model, steps.field],
      );
    try {
      assert.equal((await column()).rowCount, 0, "the column before the server started");

      const port = freePort();
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--unstable-no-legacy-abort", "src/main.ts"],
        cwd: copy,
        env: {
          ...baseEnv(),
          DATABASE_URL: db.url,
          JWT_SECRET: TEST_JWT_SECRET,
          SECRETS_KEY: TEST_SECRETS_KEY,
          PORT: String(port),
          HOST: "127.0.0.1",
          APP_ENV: "test",
          LOG_LEVEL: "info",
          BOOTSTRAP_OWNER_EMAIL: OWNER.email,
          BOOTSTRAP_OWNER_PASSWORD: OWNER.password,
        },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      server = { child, stdout: new Output(child.stdout), stderr: new Output(child.stderr) };
      // `deno task schema`'s first command, in the copy, while the server starts.
      const printing = run([Deno.execPath(), "run", "-A", "src/graphql/print_schema.ts"], copy);
      printing.catch(() => {}); // awaited below; a failure is reported there
      await server.stderr.waitFor(/"msg":"listening"/, 120_000, "the copy's server");
      assert.equal((await column()).rowCount, 1, "the column after the server started");

      const base = `http://127.0.0.1:${port}`;
      const call = async (
        method: string,
        path: string,
        body?: unknown,
        headers: Record<string, string> = {},
      ) => {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { "content-type": "application/json", ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : null };
      };
      const login = await call("POST", "/api/auth/login", OWNER);
      assert.equal(login.status, 200, JSON.stringify(login.body));
      const auth = {
        authorization: `Bearer ${login.body.token}`,
        "x-workspace-id": login.body.workspaces[0].id,
      };

      // REST's write answer.
      const created = await call("POST", "/api/agents", { name: "Ana", jobName: "Acme" }, auth);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.ok(steps.field in created.body, `${steps.field} in ${JSON.stringify(created.body)}`);
      assert.equal(created.body[steps.field], null);
      const id = created.body.id;

      // The reads (the planner's one statement) show what the column holds.
      await client.query(`UPDATE "${steps.model}" SET "${steps.field}" = 'x' WHERE id = $1`, [id]);
      const read = await call("GET", `/api/agents/${id}`, undefined, auth);
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.equal(read.body[steps.field], "x");
      const graphql = await call("POST", "/graphql", {
        query: `query ($id: ID!) { agent(id: $id) { id ${steps.field} } }`,
        variables: { id },
      }, auth);
      assert.deepEqual(graphql, { status: 200, body: { data: { agent: { id, [steps.field]: "x" } } } });

      // The OpenAPI document: a nullable string, like the other optional texts of the type.
      const openapi = await call("GET", "/api/openapi.json");
      assert.equal(openapi.status, 200);
      const properties = openapi.body.components.schemas[steps.type].properties;
      assert.ok(properties[steps.field], `${steps.field} in ${Object.keys(properties)}`);
      assert.deepEqual(properties[steps.field], properties.jobName);

      // schema.graphql: the checkout's, with the one line more in the type.
      await printing;
      const printed = await Deno.readTextFile(`${copy}/schema.graphql`);
      const type = sdlType(printed, steps.type);
      const line = `\n  ${steps.field}: String\n`;
      assert.ok(type.includes(line), type);
      assert.equal(
        printed.replace(type, type.replace(line, "\n")),
        await Deno.readTextFile(`${ROOT}schema.graphql`),
        "the printed schema differs from the checkout's by that line only",
      );
    } finally {
      await client.end();
    }
  } finally {
    if (server) {
      try {
        server.child.kill("SIGTERM");
      } catch { /* already gone */ }
      await server.child.status;
      await server.stdout.done;
      await server.stderr.done;
    }
    await db.drop();
    await Deno.remove(copy, { recursive: true });
  }
});
