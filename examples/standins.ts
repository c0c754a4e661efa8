/**
 * The outside world of the README tour, on 127.0.0.1, printing what reaches it:
 * - :9100 an OpenAI-compatible model (`OPENAI_BASE_URL=http://127.0.0.1:9100/v1`). As an agent it
 *   answers by the customer's last words: "order" → the `track-order` intent tag (the tag form of
 *   the intent `track_order`), "human" → the transfer tag, anything else → a greeting. As the
 *   supervisor (a request that offers tools) it finds the agent named in the manager's message and
 *   proposes a more formal prompt ("formal"), or lists its webhooks and proposes removing the first
 *   ("webhook");
 * - :9101 the WhatsApp Graph API (`WHATSAPP_GRAPH_URL=http://127.0.0.1:9101`);
 * - :9102 the `track_order` intent's webhook, answering `{ "message": ... }`.
 *
 * Run: deno run -A examples/standins.ts (STANDINS_PORT=9200 moves them to :9200, :9201, :9202).
 */

type ChatMessage = { role: string; content: string; tool_call_id?: string };
type ToolCall = { name: string; arguments: Record<string, unknown> };

function lastCustomerWords(messages: ChatMessage[]): string {
  return messages.filter((m) => m.role === "user").at(-1)?.content.toLowerCase() ?? "";
}

function modelAnswer(messages: ChatMessage[]): string {
  const words = lastCustomerWords(messages);
  if (words.includes("order")) {
    return 'Let me check that for you. <track-order orderNumber="A-1001"/>';
  }
  if (words.includes("human")) {
    return 'Of course, a colleague will take over. <transferir motivo="asked for a person"/>';
  }
  return "Hello! How can I help you today?";
}

/** The supervisor's next step: tool calls to make, or its closing words. */
function supervisorStep(messages: ChatMessage[]): ToolCall | string {
  const request = messages.findLast((m) => m.role === "user")?.content.toLowerCase() ?? "";
  const last = messages.at(-1)!;
  const result = last.role === "tool" ? JSON.parse(last.content) : null;
  if (result?.error) return `That did not work: ${result.error}`;
  if (result?.approval) return `I proposed it (approval ${result.approval.id}); it waits for your approval.`;
  if (last.role === "user") {
    // The agent's name: the last capitalised word after the first ("Make Ana more formal").
    const name = /\b([A-Z][a-z]+)\b(?!.*\b[A-Z][a-z]+\b)/.exec(last.content.replace(/^\w+/, ""))?.[1] ?? "";
    return { name: "find_agent_by_name", arguments: { name } };
  }
  if (last.tool_call_id === "find_agent_by_name") {
    const agent = result[0];
    if (!agent) return "I found no agent of that name.";
    if (request.includes("webhook")) return { name: "list_webhooks", arguments: { agentId: agent.id } };
    return {
      name: "propose_change",
      arguments: {
        tool: "update_agent_prompt",
        target: { agentId: agent.id },
        change: { systemPrompt: `${agent.systemPrompt}\n\nAddress customers formally, as sir or madam.` },
        rationale: "The manager asked for a more formal tone.",
      },
    };
  }
  if (last.tool_call_id === "list_webhooks") {
    if (!result[0]) return "The agent has no webhooks.";
    return {
      name: "propose_change",
      arguments: {
        tool: "delete_webhook",
        target: { webhookId: result[0].id },
        change: {},
        rationale: "The manager asked to remove it.",
      },
    };
  }
  return "Done.";
}

const PORT = Number(Deno.env.get("STANDINS_PORT") || 9100);

const log = (who: string, what: unknown) => console.log(`[${who}]`, JSON.stringify(what));

Deno.serve(
  { hostname: "127.0.0.1", port: PORT, onListen: () => log("model", `listening on :${PORT}`) },
  async (req) => {
    const body = await req.json();
    const step = body.tools ? supervisorStep(body.messages) : modelAnswer(body.messages ?? []);
    log("model", typeof step === "string" ? { answered: step } : { called: step });
    const message = typeof step === "string" ? { role: "assistant", content: step } : {
      role: "assistant",
      content: null,
      // The call's id names the tool, so the next step knows whose result it reads.
      tool_calls: [{
        id: step.name,
        type: "function",
        function: { name: step.name, arguments: JSON.stringify(step.arguments) },
      }],
    };
    return Response.json({
      id: "chatcmpl-walkthrough",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message, finish_reason: typeof step === "string" ? "stop" : "tool_calls" }],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 40,
        total_tokens: 1240,
        prompt_tokens_details: { cached_tokens: 1000 },
      },
    });
  },
);

let sent = 0;
Deno.serve(
  { hostname: "127.0.0.1", port: PORT + 1, onListen: () => log("graph", `listening on :${PORT + 1}`) },
  async (req) => {
    const body = await req.json();
    log("graph", { path: new URL(req.url).pathname, to: body.to, text: body.text?.body });
    return Response.json({
      messaging_product: "whatsapp",
      contacts: [{ input: body.to, wa_id: body.to }],
      messages: [{ id: `wamid.walkthrough.${++sent}` }],
    });
  },
);

Deno.serve(
  { hostname: "127.0.0.1", port: PORT + 2, onListen: () => log("intent", `listening on :${PORT + 2}`) },
  async (req) => {
    const body = await req.json();
    log("intent", body);
    return Response.json({ message: `Order ${body.fields?.orderNumber} ships tomorrow.` });
  },
);
