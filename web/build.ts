/**
 * Builds the console into web/dist/: the app bundled for browsers (`deno bundle`, from the pinned
 * npm packages of deno.json) and its style sheet. `deno task setup` runs it, so `deno task start`
 * and `deno task test` always serve a console built from the sources at hand. The bundle imports
 * the schema's introspection (web/src/generated/, see web/src/schema.ts), which `deno task web:build`
 * writes first.
 */
const root = new URL("./", import.meta.url);
const dist = new URL("dist/", root);

/** Bundles web/src/main.tsx and copies the style sheet and the icon; throws with the bundler's output on failure. */
export async function buildConsole(): Promise<void> {
  await Deno.mkdir(dist, { recursive: true });
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform",
      "browser",
      "--minify",
      "--output",
      new URL("app.js", dist).pathname,
      new URL("src/main.tsx", root).pathname,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`the console did not build:\n${new TextDecoder().decode(out.stderr)}`);
  }
  for (const file of ["style.css", "favicon.svg"]) {
    await Deno.copyFile(new URL(`src/${file}`, root), new URL(file, dist));
  }
}

if (import.meta.main) await buildConsole();
