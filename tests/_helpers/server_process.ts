/**
 * A real server process (`src/main.ts`, what `deno task start` runs after its set-up step) on a test
 * database, for tests that kill a process or run several against one database.
 */
import { freePort } from "../../src/db/embedded.ts";
import { RECEIVER_ALLOWLIST, TEST_SECRETS_KEY } from "./app.ts";

export { freePort };

export const TEST_JWT_SECRET = "test-secret-test-secret-test-secret-0123456789";

export interface ServerProcess {
  child: Deno.ChildProcess;
  /** The port it listens on (127.0.0.1). */
  port: number;
  url: string;
  /** What it wrote to stderr so far (for failure messages). */
  stderr(): string;
  /** Resolves when its stderr closed (after it exited). */
  reading: Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop), then waits for the exit; a no-op when it already ended. */
  stop(): Promise<void>;
}

/**
 * Starts `src/main.ts` with DATABASE_URL set and the test secrets, on a free port, and resolves once
 * it listens (its own "listening" log line; with a LOG_LEVEL that hides it, once `/healthz` answers
 * 200). `env` adds or replaces variables (an OPENAI_BASE_URL, a role switch...). A port another
 * process took between its choice and the bind (files run in parallel) is chosen again.
 */
export async function startServerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
  options: { readyTimeoutMs?: number } = {},
): Promise<ServerProcess> {
  for (let tries = 1;; tries++) {
    try {
      return await startOnce(databaseUrl, env, options);
    } catch (error) {
      if (!(error instanceof PortTaken) || tries === 3) throw error;
    }
  }
}

/** The chosen port was taken by another process before the server bound it. */
class PortTaken extends Error {}

async function startOnce(
  databaseUrl: string,
  env: Record<string, string>,
  options: { readyTimeoutMs?: number },
): Promise<ServerProcess> {
  const port = freePort();
  const logLevel = env.LOG_LEVEL ?? "info";
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-no-legacy-abort", new URL("../../src/main.ts", import.meta.url).pathname],
    env: {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      JWT_SECRET: TEST_JWT_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
      OUTBOUND_ALLOWLIST: RECEIVER_ALLOWLIST,
      APP_ENV: "test",
      ...env,
      LOG_LEVEL: logLevel,
    },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const reading = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (stderr += chunk) }),
  ).catch(() => {});
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const url = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    child,
    port,
    url,
    stderr: () => stderr,
    reading,
    async kill() {
      if (!exited) {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }
      await status;
      await reading;
    },
    async stop() {
      if (!exited) {
        try {
          child.kill("SIGTERM");
        } catch { /* already gone */ }
      }
      await status;
      await reading;
    },
  };
  // Its own line says it bound the port; a 200 from /healthz could be another process' on it.
  const logsListening = logLevel === "debug" || logLevel === "info";
  const listening = () => stderr.includes(`"msg":"listening","url":"${url}"`);
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  while (true) {
    if (exited) {
      await reading;
      if (stderr.includes("is already in use")) throw new PortTaken(stderr);
      throw new Error(`the server exited before it was ready:\n${stderr}`);
    }
    if (logsListening) {
      if (listening()) return server;
    } else {
      try {
        const res = await fetch(`${url}/healthz`);
        await res.body?.cancel();
        if (res.status === 200) return server;
      } catch { /* not listening yet */ }
    }
    if (Date.now() > deadline) {
      await server.kill();
      throw new Error(`the server was not ready in time:\n${stderr}`);
    }
    // Polling a process' start-up: there is no event to wait on from outside it.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
