/**
 * A Graph API stand-in that lists a business account's message templates page by page, as Meta's
 * `GET /{waba-id}/message_templates` does (its reference's example: `data` with `name`,
 * `parameter_format`, `components`, `language`, `status`, `category`, `id`; `paging` with `cursors`
 * and `next` until the last page), and answers sends like startGraph.
 */
import { type Receiver, startReceiver } from "./receiver.ts";

/** Meta's example templates (its "Get templates" reference), with `n` to tell them apart. */
export function metaTemplate(n: number, overrides: Record<string, unknown> = {}) {
  return {
    name: `seasonal_promotion_${n}`,
    parameter_format: "POSITIONAL",
    components: [
      { type: "HEADER", format: "TEXT", text: "Our {{1}} is on!", example: { header_text: ["Summer Sale"] } },
      {
        type: "BODY",
        text: "Shop now through {{1}} and use code {{2}} to get {{3}} off of all merchandise.",
        example: { body_text: [["the end of August", "25OFF", "25%"]] },
      },
      { type: "FOOTER", text: "Use the buttons below to manage your marketing subscriptions" },
      {
        type: "BUTTONS",
        buttons: [
          { type: "QUICK_REPLY", text: "Unsubscribe from Promos" },
          { type: "QUICK_REPLY", text: "Unsubscribe from All" },
        ],
      },
    ],
    language: "en_US",
    status: "APPROVED",
    category: "MARKETING",
    id: String(546151681022936 + n),
    ...overrides,
  };
}

export interface TemplateGraph extends Receiver {
  /** What the stand-in lists now (change it between syncs). */
  templates: Record<string, unknown>[];
  /** The message_templates calls, in order (their URLs). */
  listCalls: URL[];
  /** The answer to the next list call instead of the page (then back to pages). */
  refuseNext: Response | null;
}

/**
 * Lists `templates` at most `pageSize` a page (or Meta's `limit` when smaller), the cursor being the
 * offset; anything else is a send, answered with a new wamid.
 */
export function startTemplateGraph(templates: Record<string, unknown>[], pageSize = 100): TemplateGraph {
  const listCalls: URL[] = [];
  const graph = startReceiver((call, index) => {
    const url = new URL(graph.url(call.path) + call.search);
    if (!url.pathname.endsWith("/message_templates")) {
      return Response.json({
        messaging_product: "whatsapp",
        contacts: [{ input: "16505551234", wa_id: "16505551234" }],
        messages: [{ id: `wamid.TEMPLATE${index}` }],
      });
    }
    listCalls.push(url);
    const refusal = (graph as TemplateGraph).refuseNext;
    if (refusal) {
      (graph as TemplateGraph).refuseNext = null;
      return refusal;
    }
    const limit = Math.min(pageSize, Number(url.searchParams.get("limit") ?? 25));
    const from = Number(atob(url.searchParams.get("after") ?? btoa("0")));
    const all = (graph as TemplateGraph).templates;
    const data = all.slice(from, from + limit);
    const after = from + data.length;
    const next = new URL(url);
    next.searchParams.set("after", btoa(String(after)));
    return Response.json({
      data,
      paging: {
        cursors: { before: btoa(String(from)), after: btoa(String(after)) },
        ...(after < all.length ? { next: next.href } : {}),
      },
    });
  }) as TemplateGraph;
  graph.templates = templates;
  graph.listCalls = listCalls;
  graph.refuseNext = null;
  return graph;
}
