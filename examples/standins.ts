/**
 * The outside world of the README tour, on 127.0.0.1, printing what reaches it:
 * - :9100 an OpenAI-compatible model (`OPENAI_BASE_URL=http://127.0.0.1:9100/v1`). As an agent it
 *   answers by the customer's last message: "order" → the `track-order` intent tag (the tag form of
 *   the intent `track_order`), "human" → the transfer tag, a voice note asking for an appointment →
 *   the `agendar-consulta` tag with the date and name it heard (when the agent offers that intent),
 *   an image → what it sees, a document → a quote of its text, anything else → a greeting. As the
 *   supervisor (a request that offers tools) it finds the agent named in the manager's message and
 *   proposes a more formal prompt ("formal"), or lists its webhooks and proposes removing the first
 *   ("webhook"); as the judge of a replay, "same" for equal answers, else the shorter.
 *   `POST /v1/audio/transcriptions` hears every voice note as TRANSCRIPT and, like the
 *   real endpoint, refuses a file named `.oga`;
 * - :9101 the WhatsApp Graph API (`WHATSAPP_GRAPH_URL=http://127.0.0.1:9101`): sends, the media
 *   of MEDIA (`GET /{mediaId}` describes one, its `url` serves the bytes; both need the tour
 *   channel's access token) and the business account's TEMPLATES (`GET /{wabaId}/message_templates`,
 *   one per page). It plays Meta refusing a free-form text sent outside the customer's 24-hour
 *   window: a text that starts with "Good morning" (as if sent the next day) gets error 131047;
 * - :9102 the intents' webhooks, answering `{ "message": ... }`.
 *
 * Run: deno run -A examples/standins.ts (STANDINS_PORT=9200 moves them to :9200, :9201, :9202).
 */
import { createHash } from "node:crypto";

type Part = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };
type ChatMessage = { role: string; content: string | Part[] | null; tool_call_id?: string };
type ToolCall = { name: string; arguments: Record<string, unknown> };

/** What the transcription endpoint hears in any voice note. */
const TRANSCRIPT = "Hi, I would like to book an appointment on March 14. My name is Sheena Nelson.";

/** The access token of the tour's WhatsApp channel: the Graph stand-in refuses media without it. */
const ACCESS_TOKEN = "demo-access-token";

/** A one-page PDF whose text is `text` (ASCII, no parentheses), in plain PDF syntax. */
function pdf(text: string): Uint8Array<ArrayBuffer> {
  const content = `BT /F1 18 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets = objects.map((object, i) => {
    const at = out.length;
    out += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const at of offsets) out += `${String(at).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

/** The files the Graph stand-in holds, by media id (the ids the tour's webhook bodies name). */
const MEDIA: Record<string, { mimeType: string; bytes: Uint8Array<ArrayBuffer> }> = {
  // Any bytes do: the transcription stand-in hears TRANSCRIPT in every voice note.
  "voice-1": { mimeType: "audio/ogg; codecs=opus", bytes: new TextEncoder().encode("OggS a voice note") },
  // A 1x1 PNG.
  "photo-1": {
    mimeType: "image/png",
    bytes: Uint8Array.from(
      atob(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      ),
      (c) => c.charCodeAt(0),
    ),
  },
  "referral-1": {
    mimeType: "application/pdf",
    bytes: pdf("Referral for Sheena Nelson: dermatology, March 14."),
  },
};

/** The text of the customer's last message (its text parts when it has an image). */
function lastCustomerText(messages: ChatMessage[]): string {
  const content = messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
  if (typeof content === "string") return content;
  return (content ?? []).map((p) => p.type === "text" ? p.text : "").join("\n");
}

/** What the model sees in an image part: its type and size (a PNG's width and height). */
function describeImage(dataUrl: string): string {
  const [, type, base64] = /^data:image\/(\w+);base64,(.*)$/.exec(dataUrl) ?? [];
  if (!type) return "an image I cannot open";
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  if (type !== "png") return `a ${type.toUpperCase()} image`;
  const size = new DataView(bytes.buffer);
  return `a ${size.getUint32(16)}x${size.getUint32(20)} PNG image`;
}

function modelAnswer(messages: ChatMessage[]): string {
  const system = typeof messages[0]?.content === "string" ? messages[0].content : "";
  const last = messages.at(-1)?.content;
  const image = Array.isArray(last) ? last.find((p) => p.type === "image_url") : undefined;
  if (image) return `I can see your photo: ${describeImage(image.image_url.url)}.`;
  const said = lastCustomerText(messages);
  // `[audio] <transcript>`: the voice note as the server gives it to the model.
  if (said.startsWith("[audio]") && system.includes("<agendar-consulta ")) {
    const date = /\b[A-Z][a-z]+ \d{1,2}\b/.exec(said)?.[0] ?? "";
    const name = /my name is ([^.]+)/i.exec(said)?.[1] ?? "";
    return `One moment. <agendar-consulta date="${date}" name="${name}"/>`;
  }
  // `[document] <file name> <caption>`, then the document's text.
  if (said.startsWith("[document]")) {
    const [label, ...text] = said.split("\n");
    return `I read ${label.split(" ")[1]}: "${text.join(" ").trim()}"`;
  }
  const words = said.toLowerCase();
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
  const content = (m: ChatMessage | undefined) => typeof m?.content === "string" ? m.content : "";
  const request = content(messages.findLast((m) => m.role === "user")).toLowerCase();
  const last = messages.at(-1)!;
  const result = last.role === "tool" ? JSON.parse(content(last)) : null;
  if (result?.error) return `That did not work: ${result.error}`;
  if (result?.approval) return `I proposed it (approval ${result.approval.id}); it waits for your approval.`;
  if (last.role === "user") {
    // The agent's name: the last capitalised word after the first ("Make Ana more formal").
    const name = /\b([A-Z][a-z]+)\b(?!.*\b[A-Z][a-z]+\b)/.exec(content(last).replace(/^\w+/, ""))?.[1] ?? "";
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

/** `POST /v1/audio/transcriptions` (multipart: `file`, `model`), answered as the OpenAI API does. */
async function transcription(req: Request): Promise<Response> {
  const form = await req.formData();
  const file = form.get("file");
  if (!(file instanceof File)) return Response.json({ error: { message: "no file" } }, { status: 400 });
  log("model", { transcribing: file.name, type: file.type, bytes: file.size, model: form.get("model") });
  // Newer transcription models refuse the name `.oga` although the bytes are the same Ogg as `.ogg`.
  if (/\.oga$/i.test(file.name)) {
    return Response.json({ error: { message: "Unsupported file format oga" } }, { status: 400 });
  }
  return Response.json({ text: TRANSCRIPT });
}

/** A replay's judge (the supervisor's model comparing two answers, A and B), rather than an agent? */
const judging = (messages: ChatMessage[]) =>
  typeof messages[0]?.content === "string" && messages[0].content.startsWith("You compare two answers");

/** The judge: "same" for equal answers, else the shorter one, as a customer on a phone would. */
function judgement(messages: ChatMessage[]): string {
  const text = String(messages.at(-1)?.content ?? "");
  const answer = (label: string) =>
    new RegExp(`Answer ${label}:\\n([\\s\\S]*?)\\nActions of ${label}`).exec(text)?.[1] ?? "";
  const [a, b] = [answer("A"), answer("B")];
  if (a === b) return JSON.stringify({ better: "same", why: "Both answers say the same." });
  const better = a.length <= b.length ? "A" : "B";
  return JSON.stringify({ better, why: `${better} says it in fewer words.` });
}

Deno.serve(
  { hostname: "127.0.0.1", port: PORT, onListen: () => log("model", `listening on :${PORT}`) },
  async (req) => {
    if (new URL(req.url).pathname.endsWith("/audio/transcriptions")) return await transcription(req);
    const body = await req.json();
    const step = body.tools
      ? supervisorStep(body.messages)
      : judging(body.messages ?? [])
      ? judgement(body.messages)
      : modelAnswer(body.messages ?? []);
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

/** The tour's approved templates, as Meta's template reference describes them. */
const TEMPLATES = [
  {
    name: "order_update",
    parameter_format: "POSITIONAL",
    components: [
      {
        type: "BODY",
        text: "Hi {{1}}, your order {{2}} has shipped.",
        example: { body_text: [["Sheena", "A-1001"]] },
      },
    ],
    language: "en_US",
    status: "APPROVED",
    category: "UTILITY",
    id: "1022903212002015",
  },
  {
    name: "still_there",
    parameter_format: "NAMED",
    components: [
      {
        type: "BODY",
        text: "Hi {{first_name}}, we have an answer for you. Reply to continue the conversation.",
        example: { body_text_named_params: [{ param_name: "first_name", example: "Sheena" }] },
      },
    ],
    language: "en_US",
    status: "APPROVED",
    category: "UTILITY",
    id: "1022903212002016",
  },
];

let sent = 0;
Deno.serve(
  { hostname: "127.0.0.1", port: PORT + 1, onListen: () => log("graph", `listening on :${PORT + 1}`) },
  async (req) => {
    const path = new URL(req.url).pathname;
    if (req.method === "POST") {
      const body = await req.json();
      if (body.template) log("graph", { path, to: body.to, template: body.template });
      else log("graph", { path, to: body.to, text: body.text?.body });
      if (typeof body.text?.body === "string" && body.text.body.startsWith("Good morning")) {
        return Response.json({
          error: {
            message: "(#131047) Re-engagement message",
            type: "OAuthException",
            code: 131047,
            error_data: {
              messaging_product: "whatsapp",
              details:
                "Message failed to send because more than 24 hours have passed since the customer last replied to this number.",
            },
            fbtrace_id: "Az8or2yhqkZfEZ-_4Qn_Bam",
          },
        }, { status: 400 });
      }
      return Response.json({
        messaging_product: "whatsapp",
        contacts: [{ input: body.to, wa_id: body.to }],
        messages: [{ id: `wamid.walkthrough.${++sent}` }],
      });
    }
    if (req.headers.get("authorization") !== `Bearer ${ACCESS_TOKEN}`) {
      return Response.json({ error: { message: "Invalid OAuth access token.", code: 190 } }, { status: 401 });
    }
    // `GET /{wabaId}/message_templates`: one template a page, `paging.next` until the last.
    if (path.endsWith("/message_templates")) {
      const url = new URL(req.url);
      const at = Number(url.searchParams.get("after") ?? 0);
      const next = new URL(url);
      next.searchParams.set("after", String(at + 1));
      log("graph", { path, page: at + 1 });
      return Response.json({
        data: TEMPLATES.slice(at, at + 1),
        paging: {
          cursors: { before: String(at), after: String(at + 1) },
          ...(at + 1 < TEMPLATES.length ? { next: next.href } : {}),
        },
      });
    }
    // `GET /{mediaId}` describes a file; `GET /files/{mediaId}` (the description's url) is the file.
    const [, files, id] = /^\/(files\/)?([^/]+)$/.exec(path) ?? [];
    const media = MEDIA[id];
    if (!media) {
      return Response.json({ error: { message: "Unsupported get request.", code: 100, error_subcode: 33 } }, {
        status: 404,
      });
    }
    log("graph", { path, mimeType: media.mimeType });
    if (files) return new Response(media.bytes, { headers: { "content-type": media.mimeType } });
    return Response.json({
      messaging_product: "whatsapp",
      url: `http://127.0.0.1:${PORT + 1}/files/${id}`,
      mime_type: media.mimeType,
      sha256: createHash("sha256").update(media.bytes).digest("hex"),
      file_size: media.bytes.length,
      id,
    });
  },
);

Deno.serve(
  { hostname: "127.0.0.1", port: PORT + 2, onListen: () => log("intent", `listening on :${PORT + 2}`) },
  async (req) => {
    const body = await req.json();
    log("intent", body);
    const { fields } = body;
    if (body.intentName === "Agendar Consulta") {
      return Response.json({ message: `${fields.name}, you are booked for ${fields.date} at 10:00.` });
    }
    return Response.json({ message: `Order ${fields?.orderNumber} ships tomorrow.` });
  },
);
