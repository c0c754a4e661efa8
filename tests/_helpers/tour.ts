/**
 * The README's tour as a test plays it (tests/readme_tour_test.ts, and the console's walk-through
 * of docs/console.md, which starts from the tour's first blocks): its marked shell blocks, the
 * stand-ins' and server's settings moved to free ports, children whose output is waited on, and a
 * shell fed blocks as a user pastes them.
 *
 * Blocks are marked by an HTML comment on the line before their fence: in README.md
 * `<!-- tour:standins -->` (terminal 1), `<!-- tour:server -->` (terminal 2) and `<!-- tour -->`
 * (terminal 3, in order); in docs/console.md `<!-- console -->` (terminal 3, after the tour's first
 * blocks).
 */
import assert from "node:assert/strict";
import { freePort } from "./server_process.ts";

export const ROOT = new URL("../..", import.meta.url).pathname;
export const README = await Deno.readTextFile(`${ROOT}README.md`);
export const DEFAULT_BASE = "BASE=http://127.0.0.1:8080";
const STANDIN_PORTS = [9100, 9101, 9102];

export interface Block {
  kind: string;
  text: string;
}

/**
 * The marked `sh` blocks of `markdown` (`<!-- tour -->`, `<!-- tour:server -->`, `<!-- console -->`...),
 * as pasted: a block indented under a list item loses that indentation.
 */
export function tourBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const re = /^( *)<!-- ((?:tour|console)(?::[a-z]+)?) -->\n\1```sh\n([\s\S]*?)^\1```$/gm;
  for (const m of markdown.matchAll(re)) {
    const indent = m[1];
    const text = m[3].split("\n").map((l) => l.startsWith(indent) ? l.slice(indent.length) : l).join("\n");
    blocks.push({ kind: m[2], text });
  }
  return blocks;
}

const readmeBlocks = tourBlocks(README);
/** Terminal 3's blocks of the README, in order. */
export const client = readmeBlocks.filter((b) => b.kind === "tour").map((b) => b.text);
export const serverBlock = readmeBlocks.find((b) => b.kind === "tour:server")?.text ?? "";
export const standinsBlock = readmeBlocks.find((b) => b.kind === "tour:standins")?.text ?? "";

/** The environment the server block gives `deno task start`. */
export function serverEnv(block: string, ports: number[]): Record<string, string> {
  const command = block.replace(/\\\n/g, " ").split("\n").find((l) => l.includes("deno task start"));
  assert.ok(command, "a line that runs deno task start");
  const env: Record<string, string> = {};
  for (const word of command.trim().split(/\s+/)) {
    const m = /^([A-Z_]+)=(.*)$/.exec(word);
    if (!m) break;
    env[m[1]] = withPorts(m[2], ports);
  }
  assert.ok(env.BOOTSTRAP_OWNER_EMAIL && env.BOOTSTRAP_OWNER_PASSWORD, "the tour's first owner");
  return env;
}

export function withPorts(text: string, ports: number[]): string {
  return STANDIN_PORTS.reduce((t, p, i) => t.replaceAll(`127.0.0.1:${p}`, `127.0.0.1:${ports[i]}`), text);
}

/** Three consecutive free loopback ports. */
export function freePorts(): number[] {
  for (;;) {
    const base = freePort();
    if (base > 65000) continue;
    try {
      const held = [base, base + 1, base + 2].map((port) => Deno.listen({ hostname: "127.0.0.1", port }));
      held.forEach((l) => l.close());
      return [base, base + 1, base + 2];
    } catch { /* taken: try another */ }
  }
}

/** A child's output as it grows, with a wait for a pattern. */
export class Output {
  text = "";
  ended = false;
  done: Promise<void>;
  #waiters: Array<() => void> = [];
  constructor(stream: ReadableStream<Uint8Array<ArrayBuffer>>) {
    this.done = stream.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({
        write: (chunk) => {
          this.text += chunk;
          this.#wake();
        },
      }),
    ).catch(() => {}).finally(() => {
      this.ended = true;
      this.#wake();
    });
  }
  #wake() {
    this.#waiters.splice(0).forEach((w) => w());
  }
  async waitFor(pattern: RegExp, timeoutMs: number, what: string): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(this.text);
      if (m) return m;
      if (this.ended || Date.now() > deadline) throw new Error(`${what}: no ${pattern} in:\n${this.text}`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        timer = setTimeout(resolve, deadline - Date.now() + 1);
      });
      clearTimeout(timer);
    }
  }
}

export interface Child {
  process: Deno.ChildProcess;
  stdout: Output;
  stderr: Output;
  stop(): Promise<void>;
}

export function spawn(args: string[], env: Record<string, string>, options: { stdin?: boolean } = {}): Child {
  const process = new Deno.Command(args[0], {
    args: args.slice(1),
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: options.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = new Output(process.stdout);
  const stderr = new Output(process.stderr);
  let exited = false;
  const status = process.status.then(() => void (exited = true));
  return {
    process,
    stdout,
    stderr,
    async stop() {
      if (options.stdin) await process.stdin.close().catch(() => {});
      if (!exited) {
        try {
          process.kill("SIGTERM");
        } catch { /* gone */ }
      }
      await status;
      await stdout.done;
      await stderr.done;
    },
  };
}

const DENO_DIR = Deno.execPath().replace(/\/[^/]+$/, "");
export const baseEnv = (): Record<string, string> => ({
  PATH: `${DENO_DIR}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
  HOME: Deno.env.get("HOME") ?? "/tmp",
  ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
});

/**
 * A shell fed blocks as pasted: each ends with a marker line carrying its exit status, and `run`
 * answers what the block printed (failing on a non-zero status).
 */
export class Shell {
  readonly child: Child;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #n = 0;
  constructor(shell = "bash") {
    this.child = spawn([shell], baseEnv(), { stdin: true });
    this.#writer = this.child.process.stdin.getWriter();
  }
  async run(text: string, timeoutMs = 60_000): Promise<string> {
    const i = this.#n++;
    const from = this.child.stdout.text.length;
    await this.#writer.write(new TextEncoder().encode(`${text}\nprintf '\\n__BLOCK_${i} %s\\n' "$?"\n`));
    const done = await this.child.stdout.waitFor(
      new RegExp(`__BLOCK_${i} (\\d+)\\n`),
      timeoutMs,
      `block ${i}`,
    );
    const output = this.child.stdout.text.slice(from, done.index);
    assert.equal(
      done[1],
      "0",
      `exit status of:\n${text}\nprinted:\n${output}\nstderr:\n${this.child.stderr.text}`,
    );
    return output;
  }
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.child.stop();
  }
}
