/** Starting the bench's helper processes: each prints a line with "ready" once it serves. */

/** Runs `cmd args` and waits for its "ready" line; the process and what it printed up to then. */
export async function spawnReady(
  cmd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ child: Deno.ChildProcess; line: string }> {
  const child = new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "inherit" }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${cmd} ${args.join(" ")} exited before it was ready`);
    seen += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return { child, line: seen };
}

/** The app server of the benches: it runs with the flags `deno task start` gives src/main.ts (deno.json). */
const APP_SERVER = "bench/serve_app.ts";
const APP_SERVER_FLAGS = ["--v8-flags=--no-memory-reducer"];

/** A Deno script of the bench, as a separate process with all permissions. */
export const denoScript = (script: string): [string, string[]] => [
  Deno.execPath(),
  ["run", "-A", "--unstable-no-legacy-abort", ...(script === APP_SERVER ? APP_SERVER_FLAGS : []), script],
];
