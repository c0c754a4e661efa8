/**
 * A Graph API stand-in that lists a business account's message templates page by page, as Meta's
 * `GET /{waba-id}/message_templates` does (its reference's example: `data` with `name`,
 * `parameter_format`, `components`, `language`, `status`, `category`, `id`; `paging` with `cursors`
 * and `next` until the last page), and answers sends like startGraph.
 *
 * And templates to send, stored as the sync stores them, built from Meta's published examples (not
 * from our own payloads):
 * - components and their placeholders: "Template components",
 *   https://developers.facebook.com/documentation/business-messaging/whatsapp/templates/components
 *   (HEADER TEXT `Our new sale starts {{sale_start_date}}!`, media headers, URL buttons with `example`);
 * - the location template: "Location templates",
 *   https://developers.facebook.com/documentation/business-messaging/whatsapp/templates/utility-templates/location-templates/
 *   (`Good news {{customer_name}}! Your order #{{order_number}} is on its way to the location above.`);
 * - the coupon template: "Sending Coupon Code Templates",
 *   https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-templates/coupon-templates
 *   (`{ type: "button", sub_type: "COPY_CODE", index, parameters: [{ type: "coupon_code", coupon_code }] }`);
 * - the authentication template: Meta's fixed body `*{{1}}* is your verification code.` and its
 *   one-time password button, sent with the code in the body and in the button
 *   ("Sending Authentication Message Templates with One-Time Password Buttons").
 */
import { type Receiver, startReceiver } from "./receiver.ts";
import type { App } from "../../src/app.ts";
import type { Prisma } from "../../src/generated/prisma/client.ts";

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

export interface TemplateFixture {
  name: string;
  language: string;
  category: string;
  status: string;
  parameter_format: "POSITIONAL" | "NAMED";
  components: Array<Record<string, unknown>>;
}

/** POSITIONAL: a TEXT header with {{1}}, a body with {{1}} and {{2}}, a footer, two quick replies. */
export const SEASONAL_PROMOTION: TemplateFixture = {
  name: "seasonal_promotion_text_only",
  language: "en_US",
  category: "MARKETING",
  status: "APPROVED",
  parameter_format: "POSITIONAL",
  components: [
    { type: "HEADER", format: "TEXT", text: "Our {{1}} is on!", example: { header_text: ["Summer Sale"] } },
    {
      type: "BODY",
      text: "Shop now through the end of August and use code {{1}} to get {{2}} off of all merchandise.",
      example: { body_text: [["25OFF", "15%"]] },
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
};

/** NAMED: Meta's location template (a LOCATION header, two named body parameters, a quick reply). */
export const ORDER_DELIVERY_UPDATE: TemplateFixture = {
  name: "order_delivery_update",
  language: "en_US",
  category: "UTILITY",
  status: "APPROVED",
  parameter_format: "NAMED",
  components: [
    { type: "HEADER", format: "LOCATION" },
    {
      type: "BODY",
      text: "Good news {{customer_name}}! Your order #{{order_number}} is on its way to the location above.",
      example: {
        body_text_named_params: [
          { param_name: "customer_name", example: "Mark" },
          { param_name: "order_number", example: "566701" },
        ],
      },
    },
    { type: "FOOTER", text: "To stop receiving delivery updates, tap the button below." },
    { type: "BUTTONS", buttons: [{ type: "QUICK_REPLY", text: "Stop Delivery Updates" }] },
  ],
};

/** POSITIONAL: an IMAGE header, a body, a URL button whose url ends with {{1}}, a phone button. */
export const ORDER_SHIPPED: TemplateFixture = {
  name: "order_shipped",
  language: "pt_BR",
  category: "UTILITY",
  status: "APPROVED",
  parameter_format: "POSITIONAL",
  components: [
    { type: "HEADER", format: "IMAGE", example: { header_handle: ["4::aW1hZ2UvanBlZw==:ARb..."] } },
    {
      type: "BODY",
      text: "Olá {{1}}, seu pedido {{2}} foi enviado.",
      example: { body_text: [["Maria", "ORD-9271"]] },
    },
    {
      type: "BUTTONS",
      buttons: [
        {
          type: "URL",
          text: "Rastrear pedido",
          url: "https://www.luckyshrub.com/track/{{1}}",
          example: ["https://www.luckyshrub.com/track/ORD-9271"],
        },
        { type: "PHONE_NUMBER", text: "Ligar", phone_number: "+15550051234" },
      ],
    },
  ],
};

/** A body without parameters and nothing else (Meta's hello_world). */
export const HELLO_WORLD: TemplateFixture = {
  name: "hello_world",
  language: "en_US",
  category: "UTILITY",
  status: "APPROVED",
  parameter_format: "POSITIONAL",
  components: [
    { type: "HEADER", format: "TEXT", text: "Hello World" },
    {
      type: "BODY",
      text:
        "Welcome and congratulations!! This message demonstrates your ability to send a WhatsApp message " +
        "notification from the Cloud API, hosted by Meta. Thank you for taking the time to test with us.",
    },
    { type: "FOOTER", text: "WhatsApp Business Platform sample message" },
  ],
};

/** A coupon: a body with {{1}}, a quick reply and a COPY_CODE button. */
export const COUPON: TemplateFixture = {
  name: "coupon_code_fall2023_25off",
  language: "en_US",
  category: "MARKETING",
  status: "APPROVED",
  parameter_format: "POSITIONAL",
  components: [
    {
      type: "BODY",
      text: "Shop now through November and use code {{1}} to get 25% off of all merchandise!",
      example: { body_text: [["25OFF"]] },
    },
    {
      type: "BUTTONS",
      buttons: [
        { type: "QUICK_REPLY", text: "Unsubscribe" },
        { type: "COPY_CODE", text: "Copy offer code", example: "25OFF" },
      ],
    },
  ],
};

/** An authentication template: Meta's fixed body, the expiry footer and the copy-code OTP button. */
export const VERIFICATION_CODE: TemplateFixture = {
  name: "verification_code",
  language: "en_US",
  category: "AUTHENTICATION",
  status: "APPROVED",
  parameter_format: "POSITIONAL",
  components: [
    {
      type: "BODY",
      text: "*{{1}}* is your verification code. For your security, do not share this code.",
      add_security_recommendation: true,
      example: { body_text: [["123456"]] },
    },
    { type: "FOOTER", text: "This code expires in 10 minutes.", code_expiration_minutes: 10 },
    { type: "BUTTONS", buttons: [{ type: "OTP", otp_type: "COPY_CODE", text: "Copy code" }] },
  ],
};

/** The stored shape of a fixture (the WhatsAppTemplate row's columns). */
export const stored = (t: TemplateFixture) => ({
  name: t.name,
  language: t.language,
  category: t.category,
  status: t.status,
  components: t.components,
  parameterFormat: t.parameter_format,
});

/** Stores `templates` on the channel as the sync would (until the sync is there to call). */
export async function storeTemplates(
  app: App,
  channel: { id: string; workspaceId: string },
  templates: TemplateFixture[],
) {
  await app.deps.db.whatsAppTemplate.createMany({
    data: templates.map((t) => ({
      ...stored(t),
      components: t.components as Prisma.InputJsonArray,
      workspaceId: channel.workspaceId,
      channelId: channel.id,
      metaId: `${t.name}-${t.language}`,
    })),
  });
}
