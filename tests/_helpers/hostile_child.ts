/**
 * A child for the sandbox tests (src/media/_sandbox.ts) that misbehaves on purpose; the first
 * argument says how:
 * - loop: spins forever;
 * - heap: fills the V8 heap;
 * - buffers: fills array buffers (memory outside the V8 heap);
 * - print: writes to standard output without end;
 * - escape: tries to read a file, an environment variable and the network, and prints which
 *   attempts were refused;
 * - mammoth: gives the DOCX on standard input to mammoth with no zip check first (to show the
 *   memory limits alone stop a zip bomb).
 */
import { Buffer } from "node:buffer";

const mode = Deno.args[0];
if (mode === "loop") {
  for (;;) { /* spin */ }
} else if (mode === "heap") {
  const keep: string[][] = [];
  for (;;) keep.push(new Array(100_000).fill(`x${keep.length}`));
} else if (mode === "buffers") {
  const keep: Uint8Array[] = [];
  for (;;) {
    keep.push(new Uint8Array(8 * 1024 * 1024).fill(1));
    await new Promise((r) => setTimeout(r, 1));
  }
} else if (mode === "print") {
  const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
  for (;;) await Deno.stdout.write(chunk);
} else if (mode === "escape") {
  const refused: string[] = [];
  const attempt = async (what: string, f: () => unknown) => {
    try {
      await f();
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
        refused.push(what);
      } else refused.push(`${what} (${(e as Error).name})`);
    }
  };
  await attempt("read", () => Deno.readTextFile("/etc/hostname"));
  await attempt("env", () => Deno.env.get("HOME"));
  await attempt("net", () => fetch("http://127.0.0.1:47123/"));
  await attempt("run", () => new Deno.Command("/bin/sh", { args: ["-c", "true"] }).output());
  console.log(JSON.stringify(refused));
} else if (mode === "mammoth") {
  const { default: mammoth } = await import("mammoth");
  const bytes = await new Response(Deno.stdin.readable).bytes();
  const result = await mammoth.extractRawText({ buffer: Buffer.from(bytes) });
  console.log(result.value.length);
}
