/**
 * The outside world of the README walk-through, on 127.0.0.1, printing what reaches it:
 * - :9100 an OpenAI-compatible model (`OPENAI_BASE_URL=http://127.0.0.1:9100/v1`) scripted by the
 *   customer's last words: "order" → the `track-order` intent tag (the tag form of the intent `track_order`), "human" → the transfer tag,
 *   anything else → a greeting;
 * - :9101 the WhatsApp Graph API (`WHATSAPP_GRAPH_URL=http://127.0.0.1:9101`);
 * - :9102 the `track_order` intent's webhook, answering `{ "message": ... }`.
 *
 * Run: deno run -A examples/standins.ts
 */

type ChatMessage = { role: string; content: string };

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

const log = (who: string, what: unknown) => console.log(`[${who}]`, JSON.stringify(what));

Deno.serve(
  { hostname: "127.0.0.1", port: 9100, onListen: () => log("model", "listening on :9100") },
  async (req) => {
    const body = await req.json();
    const content = modelAnswer(body.messages ?? []);
    log("model", { answered: content });
    return Response.json({
      id: "chatcmpl-walkthrough",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 120, completion_tokens: 20, total_tokens: 140 },
    });
  },
);

let sent = 0;
Deno.serve(
  { hostname: "127.0.0.1", port: 9101, onListen: () => log("graph", "listening on :9101") },
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
  { hostname: "127.0.0.1", port: 9102, onListen: () => log("intent", "listening on :9102") },
  async (req) => {
    const body = await req.json();
    log("intent", body);
    return Response.json({ message: `Order ${body.fields?.orderNumber} ships tomorrow.` });
  },
);
