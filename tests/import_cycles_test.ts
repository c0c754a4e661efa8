/**
 * No module of src/ (generated code aside) imports itself through others. The graph is the one Deno
 * resolves (`deno info --json`) from the entry points and from every module they do not reach, with
 * static imports and re-exports. Type-only imports count too: they cost nothing at run time, but a
 * cycle through them still ties the modules together (src/context.ts and a service it names,
 * say), and one value import added later makes it a cycle at load time.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = fromFileUrl(new URL("../", import.meta.url));
const SRC = join(ROOT, "src");
const SKIP = join(SRC, "generated");
const ENTRY_POINTS = ["src/main.ts", "src/admin.ts"];

interface Edge {
  to: string;
  /** Only `import type` / `export type ... from`: no import at run time. */
  typeOnly: boolean;
}

interface InfoDependency {
  isDynamic?: boolean;
  code?: { specifier?: string };
  type?: { specifier?: string };
}

interface Info {
  modules: Array<{ specifier: string; dependencies?: InfoDependency[] }>;
}

/** Paths relative to src/ of the modules under test (not generated). */
function ownModule(specifier: string | undefined): string | null {
  if (!specifier?.startsWith("file://")) return null;
  const path = fromFileUrl(specifier);
  if (!path.startsWith(`${SRC}/`) || path.startsWith(`${SKIP}/`)) return null;
  return relative(SRC, path);
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (path === SKIP) continue;
    if (entry.isDirectory) yield* sourceFiles(path);
    else if (entry.isFile && /\.tsx?$/.test(entry.name)) yield relative(SRC, path);
  }
}

async function denoInfo(file: string): Promise<Info> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", file],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, `deno info ${file} failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** Module → the modules of src/ it imports statically (dynamic `import()` loads lazily: left out). */
async function importGraph(): Promise<Map<string, Edge[]>> {
  const graph = new Map<string, Edge[]>();
  const add = (info: Info) => {
    for (const module of info.modules) {
      const from = ownModule(module.specifier);
      if (!from || graph.has(from)) continue;
      const edges = new Map<string, Edge>();
      for (const dep of module.dependencies ?? []) {
        if (dep.isDynamic) continue;
        const code = ownModule(dep.code?.specifier);
        const type = ownModule(dep.type?.specifier);
        if (code) edges.set(code, { to: code, typeOnly: false });
        if (type && !edges.has(type)) edges.set(type, { to: type, typeOnly: true });
      }
      graph.set(from, [...edges.values()].sort((a, b) => a.to.localeCompare(b.to)));
    }
  };
  for (const entry of ENTRY_POINTS) add(await denoInfo(entry));
  for (const file of [...sourceFiles(SRC)].sort()) {
    if (!graph.has(file)) add(await denoInfo(`src/${file}`));
  }
  return graph;
}

/** The strongly connected components with a cycle (Tarjan, iterative). */
function tangles(graph: Map<string, Edge[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  for (const root of [...graph.keys()].sort()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: root, i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.i < edges.length) {
        const to = edges[frame.i++].to;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      const selfImport = (graph.get(frame.node) ?? []).some((e) => e.to === frame.node);
      if (component.length > 1 || selfImport) found.push(component.sort());
    }
  }
  return found;
}

/** The shortest cycle through `start` inside `component`, as a path that ends where it starts. */
function shortestCycle(graph: Map<string, Edge[]>, component: Set<string>, start: string): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let at = 0; at < queue.length; at++) {
    const node = queue[at];
    for (const { to } of graph.get(node) ?? []) {
      if (!component.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let n = node; n !== start; n = cameFrom.get(n)!) path.unshift(n);
        path.unshift(start);
        return path;
      }
      if (cameFrom.has(to)) continue;
      cameFrom.set(to, node);
      queue.push(to);
    }
  }
  throw new Error(`no cycle through ${start}`);
}

/** Each component's distinct shortest cycles (one through each of its modules), as `a → b → a`. */
function describeCycles(graph: Map<string, Edge[]>): string[] {
  const lines: string[] = [];
  for (const component of tangles(graph)) {
    const members = new Set(component);
    const seen = new Set<string>();
    for (const start of component) {
      const path = shortestCycle(graph, members, start);
      // One rotation per cycle: the one that starts at its smallest module.
      const ring = path.slice(0, -1);
      const first = ring.indexOf([...ring].sort()[0]);
      const rotated = [...ring.slice(first), ...ring.slice(0, first)];
      const key = rotated.join(" ");
      if (seen.has(key)) continue;
      seen.add(key);
      const typeOnly = rotated.map((from, i) => [from, rotated[(i + 1) % rotated.length]])
        .filter(([from, to]) => graph.get(from)!.find((e) => e.to === to)!.typeOnly)
        .map(([from, to]) => `${from} → ${to}`);
      lines.push(
        [...rotated, rotated[0]].join(" → ") +
          (typeOnly.length ? `   (type-only: ${typeOnly.join(", ")})` : ""),
      );
    }
  }
  return lines;
}

Deno.test("no module of src/ imports itself through others, type-only imports included", async () => {
  const graph = await importGraph();
  const files = [...sourceFiles(SRC)];
  assert.ok(files.length > 50, `only ${files.length} modules under src/`);
  assert.deepEqual(files.filter((f) => !graph.has(f)), [], "modules missing from the import graph");
  assert.ok(graph.get("main.ts")!.length > 0, "src/main.ts imports nothing: the graph was not read");

  const cycles = describeCycles(graph);
  if (cycles.length) console.log(`Import cycles in src/:\n${cycles.map((c) => `  ${c}`).join("\n")}`);
  assert.deepEqual(cycles, [], "import cycles in src/ (printed above)");
});

Deno.test("the cycle finder reports each cycle once, from its smallest module, with its type-only edges", () => {
  const edge = (to: string, typeOnly = false): Edge => ({ to, typeOnly });
  const graph = new Map<string, Edge[]>([
    ["a.ts", [edge("b.ts")]],
    ["b.ts", [edge("a.ts", true), edge("c.ts")]],
    ["c.ts", [edge("d.ts")]],
    ["d.ts", [edge("b.ts")]],
    ["e.ts", [edge("a.ts"), edge("e.ts", true)]],
    ["f.ts", [edge("a.ts")]],
  ]);
  assert.deepEqual(describeCycles(graph), [
    "a.ts → b.ts → a.ts   (type-only: b.ts → a.ts)",
    "b.ts → c.ts → d.ts → b.ts",
    "e.ts → e.ts   (type-only: e.ts → e.ts)",
  ]);
});
