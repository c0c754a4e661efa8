/**
 * The inbound benchmark's baseline: a bare Deno HTTP handler that reads the posted body and answers
 * 200 with an empty body (no framework, no database). Prints "ready <port>" once listening.
 */
Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`ready ${port}`),
}, async (req) => {
  await req.arrayBuffer();
  return new Response(null, { status: 200 });
});
