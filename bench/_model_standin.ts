/**
 * An instant OpenAI-compatible stand-in for the supervisor benchmark, as its own process:
 * `PORT=… AGENT_ID=… deno run -A bench/_model_standin.ts`. A turn's first call (the last message
 * is the person's) asks for three tools: list_agents, get_agent and list_webhooks of AGENT_ID;
 * the next call answers in text. Usage is fixed (1200 prompt tokens, 1000 cached, 80 completion).
 */
const agentId = Deno.env.get("AGENT_ID") ?? "";
const usage = { prompt_tokens: 1200, completion_tokens: 80, prompt_tokens_details: { cached_tokens: 1000 } };

Deno.serve({
  hostname: "127.0.0.1",
  port: Number(Deno.env.get("PORT")),
  onListen: () => console.log("ready"),
}, async (req) => {
  const body = await req.json();
  const asked = body.messages?.at(-1)?.role === "user";
  const message = asked
    ? {
      role: "assistant",
      content: null,
      tool_calls: [
        ["list_agents", {}],
        ["get_agent", { agentId }],
        ["list_webhooks", { agentId }],
      ].map(([name, args], i) => ({
        id: `call_${i}`,
        type: "function",
        function: { name, arguments: JSON.stringify(args) },
      })),
    }
    : { role: "assistant", content: "Ana is active and has one webhook." };
  return Response.json({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1,
    model: body.model,
    choices: [{ index: 0, message, finish_reason: asked ? "tool_calls" : "stop" }],
    usage: { ...usage, total_tokens: 1280 },
  });
});
