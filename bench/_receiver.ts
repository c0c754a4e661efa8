/** A webhook receiver in a process of its own (as another customer's host would be), for the benches. */

/** Starts a receiver on 127.0.0.1 that answers 200 after `hangMs`; `base` is its http://host:port. */
export async function startReceiver(hangMs = 0): Promise<{ base: string; child: Deno.ChildProcess }> {
  const code =
    `Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log("ready " + port) },
    async (req) => {
      await req.arrayBuffer();
      if (${hangMs} > 0) await new Promise((r) => setTimeout(r, ${hangMs}));
      return new Response("ok");
    });`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdout: "piped",
    stderr: "inherit",
  })
    .spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/ready (\d+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error("receiver exited");
    seen += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return { base: `http://127.0.0.1:${/ready (\d+)/.exec(seen)![1]}`, child };
}
