/**
 * Runs one module in a separate, bounded Deno process: the same `deno` executable, no permissions,
 * a V8 heap limit, a resident-memory watchdog, a wall-clock deadline and a cap on what it may
 * print. Whatever the module does (loops, allocates, crashes), the caller gets an outcome and this
 * process is untouched.
 *
 * Why a process and not a Web Worker: Deno workers share the process's V8 flags and have no heap
 * limit of their own; a worker that exhausts the heap aborts the whole process ("Fatal JavaScript
 * out of memory"), and one that keeps allocating grows the process without bound.
 */
import { fileURLToPath } from "node:url";

/** Limits of one run. */
export interface SandboxLimits {
  /** Wall-clock deadline from spawn; the process is killed (SIGKILL) when it passes. */
  timeoutMs: number;
  /** V8 old-space limit of the child (`--max-old-space-size`): past it V8 aborts the child. */
  maxHeapMb: number;
  /**
   * Resident memory at which the child is killed. Catches what the heap limit does not count
   * (array buffers, native allocations). Checked every SANDBOX_RSS_POLL_MS from /proc (Linux);
   * elsewhere only the heap limit applies.
   */
  maxRssMb: number;
  /** Bytes of standard output kept; past it the child is killed. */
  maxStdoutBytes: number;
}

export type SandboxOutcome =
  | { kind: "exited"; code: number; stdout: Uint8Array; stderr: string }
  | { kind: "timeout"; stderr: string }
  | { kind: "memory"; via: "heap" | "rss"; stderr: string }
  | { kind: "output"; stderr: string };

/** How often the child's resident memory is read. */
export const SANDBOX_RSS_POLL_MS = 20;
const STDERR_TAIL = 4096;
const PAGE_SIZE = 4096;

/** Environment passed on: what Deno needs to find its cache, nothing of the app (no secrets). */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" };
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

async function residentMb(pid: number): Promise<number | null> {
  try {
    const statm = await Deno.readTextFile(`/proc/${pid}/statm`);
    return (Number(statm.split(" ")[1]) * PAGE_SIZE) / (1024 * 1024);
  } catch {
    return null;
  }
}

/**
 * Runs `module` with `args`, writes `stdin` to it and returns how it ended. `denoFlags` are extra
 * `deno run` flags (never permissions: the child has none).
 */
export async function runSandboxed(
  module: URL,
  options: { args: string[]; stdin: Uint8Array; denoFlags?: string[] } & SandboxLimits,
): Promise<SandboxOutcome> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--cached-only",
      "--frozen",
      `--config=${CONFIG}`,
      `--v8-flags=--max-old-space-size=${Math.max(16, Math.floor(options.maxHeapMb))}`,
      ...(options.denoFlags ?? []),
      module.href,
      ...options.args,
    ],
    clearEnv: true,
    env: childEnv(),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();

  let ended: "timeout" | "rss" | "output" | null = null;
  let exited = false;
  child.status.then(() => exited = true);
  const kill = (why: "timeout" | "rss" | "output") => {
    if (exited) return; // a late watchdog reading must not relabel a normal exit
    ended ??= why;
    try {
      child.kill("SIGKILL");
    } catch {
      // already exited
    }
  };
  const deadline = setTimeout(() => kill("timeout"), Math.max(1, options.timeoutMs));
  let polling = false;
  const watchdog = setInterval(async () => {
    if (polling) return;
    polling = true;
    const rss = await residentMb(child.pid);
    polling = false;
    if (rss !== null && rss > options.maxRssMb) kill("rss");
  }, SANDBOX_RSS_POLL_MS);

  const feed = (async () => {
    const writer = child.stdin.getWriter();
    try {
      await writer.write(options.stdin);
      await writer.close();
    } catch {
      // the child exited or was killed before reading everything
    }
  })();
  const stdout = (async () => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of child.stdout) {
      size += chunk.length;
      if (size > options.maxStdoutBytes) {
        kill("output");
        continue; // drain until the pipe closes
      }
      chunks.push(chunk);
    }
    const out = new Uint8Array(Math.min(size, options.maxStdoutBytes));
    let at = 0;
    for (const c of chunks) out.set(c, at), at += c.length;
    return out;
  })();
  const stderr = (async () => {
    let tail = "";
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL);
    }
    return tail;
  })();

  try {
    const [status, out, err] = await Promise.all([child.status, stdout, stderr, feed]);
    if (ended === "timeout") return { kind: "timeout", stderr: err };
    if (ended === "rss") return { kind: "memory", via: "rss", stderr: err };
    if (ended === "output") return { kind: "output", stderr: err };
    if (/out of memory|heap limit/i.test(err) && status.code !== 0) {
      return { kind: "memory", via: "heap", stderr: err };
    }
    return { kind: "exited", code: status.code, stdout: out, stderr: err };
  } finally {
    clearTimeout(deadline);
    clearInterval(watchdog);
  }
}
