/**
 * The stand-ins of a reply, for the inbound and media benches, in the bench process: the model
 * (OpenAI-compatible chat completions answering "Yes, ref <token>." for each `tok:<token>:` of the
 * call's last message, at once or after `modelDelayMs`, and recording its own time per token) and
 * the Graph API's messages endpoint (recording when each token's reply arrived). Times are epoch ms
 * (performance.timeOrigin based), the poster's clock.
 */

export const epochMs = () => performance.timeOrigin + performance.now();
const TOKEN = /tok:([\w-]+):/g;
const REF = /ref ([\w-]+)/g;

/** The tokens a text names (`tok:<token>:`). */
export const tokensIn = (text: string) => [...text.matchAll(TOKEN)].map((m) => m[1]);

/** A call as a stand-in saw it: when its request came, and when its answer was ready. */
export interface Seen {
  in: number;
  out: number;
}

export class ReplyStandins {
  /** Per token, the model call that answered it. */
  readonly modelSeen = new Map<string, Seen>();
  /** Per token, when its reply reached the Graph API. */
  readonly graphSeen = new Map<string, number>();
  #graphWaiter: (() => void) | undefined;

  /** `modelDelayMs`: the model answers this long after the call came (its own time, subtracted). */
  constructor(private readonly modelDelayMs = 0) {}

  /** OpenAI-compatible chat completions: "ref <token>" for each message of the call. */
  model = async (req: Request): Promise<Response> => {
    const t0 = epochMs();
    const body = await req.json();
    const last = String(body.messages?.at(-1)?.content ?? "");
    const tokens = tokensIn(last);
    if (this.modelDelayMs > 0) await new Promise((r) => setTimeout(r, this.modelDelayMs));
    const answer = Response.json({
      id: "chatcmpl-bench",
      object: "chat.completion",
      created: 1,
      model: body.model,
      choices: [{
        index: 0,
        message: { role: "assistant", content: tokens.map((t) => `Yes, ref ${t}.`).join(" ") || "Yes." },
        finish_reason: "stop",
      }],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    });
    const t1 = epochMs();
    for (const t of tokens) this.modelSeen.set(t, { in: t0, out: t1 });
    return answer;
  };

  /** The Graph API's messages endpoint: records when each token's reply arrived, answers a wamid. */
  graphSend = async (req: Request): Promise<Response> => {
    const at = epochMs();
    const body = await req.json();
    for (const m of String(body.text?.body ?? "").matchAll(REF)) this.graphSeen.set(m[1], at);
    this.#graphWaiter?.();
    return Response.json({
      messaging_product: "whatsapp",
      contacts: [{ input: body.to, wa_id: body.to }],
      messages: [{ id: `wamid.out-${crypto.randomUUID()}` }],
    });
  };

  /** Until every token's reply reached the Graph API, or `timeoutMs`. */
  async waitForGraph(tokens: string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (tokens.some((t) => !this.graphSeen.has(t)) && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.#graphWaiter = resolve;
        setTimeout(resolve, 200);
      });
    }
    this.#graphWaiter = undefined;
  }
}
