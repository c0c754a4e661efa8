/**
 * The console's GraphQL is typed from schema.graphql (gql.tada, web/src/schema.ts): `gql.tada check`
 * validates every document against the schema, `deno check` types their variables and answers, and
 * Graphcache's keys are read from the same introspection. The two checks run here as `deno task
 * check` runs them, over web/ and over a small fixture of mistakes, so CI (which runs the tests
 * only) catches a console that no longer matches the schema.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { embeddedKeys } from "../web/src/schema.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const WEB_SRC = join(ROOT, "web/src");
const CONFIG = join(ROOT, "deno.json");
const GQL_TADA: string = JSON.parse(await Deno.readTextFile(CONFIG)).imports["gql.tada"];

async function run(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, output: text.decode(out.stdout) + text.decode(out.stderr) };
}

/** A temporary folder holding `files`, removed after `body`. */
async function withFixture<T>(files: Record<string, string>, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "console-types-" });
  try {
    for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
    return await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const SCHEMA_TS = new URL("../web/src/schema.ts", import.meta.url).href;

const gqlTadaCheck = (tsconfig: string, cwd: string) =>
  run(["run", "-A", "--config", CONFIG, GQL_TADA, "check", "--tsconfig", tsconfig], cwd);

Deno.test("gql.tada check: the console's documents match schema.graphql, a field it lacks is named", () =>
  withFixture({
    // The CLI's configuration as web/tsconfig.json has it, for the fixture alone (the CLI checks
    // only the files under a configuration's folder).
    "tsconfig.json": JSON.stringify({
      compilerOptions: { plugins: [{ name: "gql.tada/ts-plugin", schema: join(ROOT, "schema.graphql") }] },
    }),
    "fixture.ts": `import { graphql } from "${SCHEMA_TS}";
export const AGENTS = graphql(\`query FixtureAgents { agents(first: 1) { edges { node { id nickname } } } }\`);
`,
  }, async (dir) => {
    const [web, fixture] = await Promise.all([
      gqlTadaCheck(join(ROOT, "web/tsconfig.json"), ROOT),
      gqlTadaCheck(join(dir, "tsconfig.json"), dir),
    ]);
    assert.equal(web.code, 0, web.output);
    assert.match(web.output, /No problems found/);
    assert.equal(fixture.code, 1, fixture.output);
    assert.match(fixture.output, /✖ 1 problems \(1 errors, 0 warnings\)/);
    assert.match(
      fixture.output,
      /^fixture\.ts\n\s+2:\d+\terror\tCannot query field "nickname" on type "Agent"\./m,
    );
  }));

Deno.test("deno check: the console's variables and answers are typed from the schema", () =>
  withFixture({
    "fixture.ts": `import { graphql, type ResultOf, type VariablesOf } from "${SCHEMA_TS}";
const AGENT = graphql(\`query FixtureAgent($id: ID!) { agent(id: $id) { name status } }\`);
export const variables: VariablesOf<typeof AGENT> = { agentId: "a1" };
export const name: number = ({} as ResultOf<typeof AGENT>).agent.name;
export const status: "RUNNING" = ({} as ResultOf<typeof AGENT>).agent.status;
`,
  }, async (dir) => {
    const fixture = join(dir, "fixture.ts");
    const { code, output } = await run(["check", "--config", CONFIG, "web/", fixture], ROOT);
    assert.equal(code, 1, output);
    // Where each error is (the first location under its code): lines 3 to 5 of the fixture, nothing in web/.
    const places = output.split(/\bTS\d+ \[ERROR\]/).slice(1).map((block) => {
      const at = block.match(/at (file:\/\/\S+):(\d+):\d+/);
      assert.ok(at, block);
      return `${relative(dir, fileURLToPath(at[1]))}:${at[2]}`;
    });
    assert.deepEqual(places, ["fixture.ts:3", "fixture.ts:4", "fixture.ts:5"], output);
    assert.match(output, /'agentId' does not exist in type '\{ id: string/);
    assert.match(output, /Type 'string' is not assignable to type 'number'/);
    assert.match(output, /Type '"ACTIVE" \| "PAUSED"' is not assignable to type '"RUNNING"'/);
  }));

Deno.test("Graphcache's keys: object types without an id: ID! of their own are embedded, roots are not listed", () => {
  const keys = embeddedKeys();
  for (const type of ["PageInfo", "AgentConnection", "AgentEdge", "ApprovalEvent", "Session", "Viewer"]) {
    assert.equal(keys[type]?.(), null, type);
  }
  // Their `id` is a String! naming something else: the channel's media id, the membership's workspace.
  for (const type of ["MessageMedia", "WorkspaceMembership", "InvitedWorkspace"]) assert.ok(keys[type], type);
  for (const type of ["Agent", "Approval", "Conversation", "Message", "Query", "Mutation", "Subscription"]) {
    assert.equal(keys[type], undefined, type);
  }
  const tiny = {
    __schema: {
      queryType: { name: "Root" },
      mutationType: null,
      subscriptionType: null,
      types: [
        { kind: "OBJECT", name: "Root", fields: [] },
        { kind: "OBJECT", name: "Row", fields: [{ name: "id", type: nonNull("ID") }] },
        { kind: "OBJECT", name: "Loose", fields: [{ name: "id", type: { kind: "SCALAR", name: "ID" } }] },
        { kind: "OBJECT", name: "Named", fields: [{ name: "id", type: nonNull("String") }] },
        { kind: "INPUT_OBJECT", name: "RowInput" },
      ],
    },
  };
  assert.deepEqual(Object.keys(embeddedKeys(tiny)), ["Loose", "Named"]);
});

const nonNull = (name: string) => ({ kind: "NON_NULL", ofType: { kind: "SCALAR", name } });

Deno.test("every document the console sends is written with graphql(), its answer typed by it", async () => {
  const untyped: string[] = [];
  for await (const file of sources(WEB_SRC)) {
    const text = await Deno.readTextFile(file);
    const name = relative(ROOT, file);
    // A GraphQL text anywhere but as graphql()'s argument is a document the compiler does not see.
    const documents = /(.{0,12})[`"']\s*((query|mutation|subscription)\s*\w*\s*[({]|fragment\s+\w+\s+on\s)/gs;
    for (const m of text.matchAll(documents)) {
      if (!/graphql\(\s*$/.test(m[1])) untyped.push(`${name}: ${m[0].trim()}`);
    }
    for (const m of text.matchAll(/(?<!function )\b(useQuery|useMutation|useSubscription|plainGraphQL)</g)) {
      untyped.push(`${name}: ${m[0]}... (an answer typed by hand)`);
    }
  }
  assert.deepEqual(untyped, []);
});

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && entry.name !== "generated") yield* sources(path);
    else if (entry.isFile && /\.tsx?$/.test(entry.name)) yield path;
  }
}
