/**
 * The WhatsApp webhook payload (src/channels/whatsapp/inbound.ts), fed with the examples of Meta's
 * "messages webhook reference" pages (text, image, interactive, button, location, status, errors):
 * every known type becomes its record with its stored type and a placeholder content where it is
 * not text; unknown types and fields are kept or skipped, never thrown; a malformed message is
 * kept as OTHER with its raw JSON and a reason, never refusing its siblings.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { type InboundMessage, parseWebhookPayload, pricingOf } from "../src/channels/whatsapp/inbound.ts";

const PHONE_NUMBER_ID = "106540352242922";

type Json = Record<string, unknown>;
interface Payload {
  object: string;
  entry: Array<{ id: string; changes: Array<{ value: Json; field: string }> }>;
}

/** Meta's envelope around one `value` (the reference pages' shape). */
function envelope(value: Json, field = "messages"): Payload {
  return {
    object: "whatsapp_business_account",
    entry: [{
      id: "102290129340398",
      changes: [{
        value: {
          messaging_product: "whatsapp",
          metadata: { display_phone_number: "15550783881", phone_number_id: PHONE_NUMBER_ID },
          ...value,
        },
        field,
      }],
    }],
  };
}

const CONTACTS = [{ profile: { name: "Sheena Nelson" }, wa_id: "16505551234" }];

/** The first change's value, and its first message. */
const valueOf = (p: Payload) => p.entry[0].changes[0].value;
const messageOf = (p: Payload) => (valueOf(p).messages as Json[])[0];

/** One customer message of `type` with its part, as Meta sends it. */
function inbound(type: string, part: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return envelope({
    contacts: CONTACTS,
    messages: [{
      from: "16505551234",
      id: `wamid.${type}-1`,
      timestamp: "1749416383",
      type,
      ...(part === undefined ? {} : { [type]: part }),
      ...extra,
    }],
  });
}

function one(payload: unknown): InboundMessage {
  const result = parseWebhookPayload(payload);
  assert.equal(result.messages.length, 1, JSON.stringify(result.dropped));
  return result.messages[0];
}

Deno.test("parseWebhookPayload() reads Meta's text message example: ids, contact name, timestamp, content", () => {
  const m = one(inbound("text", { body: "Does it come in another color?" }));
  assert.deepEqual(m, {
    waMessageId: "wamid.text-1",
    phoneNumberId: PHONE_NUMBER_ID,
    from: "16505551234",
    contactName: "Sheena Nelson",
    timestamp: new Date("2025-06-08T20:59:43.000Z"),
    kind: "text",
    type: "TEXT",
    content: "Does it come in another color?",
    text: "Does it come in another color?",
    media: null,
    reply: null,
    location: null,
    unreadable: null,
    raw: messageOf(inbound("text", { body: "Does it come in another color?" })),
  });
});

Deno.test("parseWebhookPayload() keeps media as id and mime type with a placeholder content", () => {
  const image = one(inbound("image", {
    caption: "This is a caption",
    mime_type: "image/jpeg",
    sha256: "81d3bd8a8db4868c9520ed47186e8b7c5789e61ff79f7f834be6950b808a90d3",
    id: "2754859441498128",
  }));
  assert.equal(image.type, "IMAGE");
  assert.equal(image.content, "[image] This is a caption");
  assert.equal(image.text, null);
  assert.deepEqual(image.media, {
    id: "2754859441498128",
    mimeType: "image/jpeg",
    caption: "This is a caption",
    filename: null,
  });

  const audio = one(
    inbound("audio", {
      mime_type: "audio/ogg; codecs=opus",
      sha256: "x",
      id: "1003383421387256",
      voice: true,
    }),
  );
  assert.equal(audio.type, "AUDIO");
  assert.equal(audio.content, "[audio]");
  assert.deepEqual(audio.media, {
    id: "1003383421387256",
    mimeType: "audio/ogg; codecs=opus",
    caption: null,
    filename: null,
  });

  const doc = one(
    inbound("document", { filename: "invoice.pdf", mime_type: "application/pdf", sha256: "x", id: "9" }),
  );
  assert.equal(doc.type, "DOCUMENT");
  assert.equal(doc.content, "[document] invoice.pdf");
  assert.equal(doc.media?.filename, "invoice.pdf");

  const video = one(inbound("video", { mime_type: "video/mp4", id: "7" }));
  assert.equal(video.type, "OTHER");
  assert.equal(video.content, "[video]");
  assert.equal(video.media?.id, "7");

  const sticker = one(inbound("sticker", { mime_type: "image/webp", id: "8", animated: false }));
  assert.deepEqual([sticker.type, sticker.content], ["OTHER", "[sticker]"]);
});

Deno.test("parseWebhookPayload() takes interactive list and button replies and template buttons as TEXT with their title", () => {
  const list = one(inbound("interactive", {
    type: "list_reply",
    list_reply: { id: "priority_express", title: "Priority Mail Express", description: "Next Day to 2 Days" },
  }, { context: { from: "15550783881", id: "wamid.ctx" } }));
  assert.deepEqual([list.type, list.content, list.text], [
    "TEXT",
    "Priority Mail Express",
    "Priority Mail Express",
  ]);
  assert.deepEqual(list.reply, { id: "priority_express", title: "Priority Mail Express" });
  assert.equal(list.kind, "interactive");

  const button = one(
    inbound("interactive", { type: "button_reply", button_reply: { id: "cancel-button", title: "Cancel" } }),
  );
  assert.deepEqual(button.reply, { id: "cancel-button", title: "Cancel" });
  assert.equal(button.content, "Cancel");

  const template = one(inbound("button", { payload: "approve_67_schedule", text: "Approve" }));
  assert.deepEqual([template.type, template.kind, template.content], ["TEXT", "button", "Approve"]);
  assert.deepEqual(template.reply, { id: "approve_67_schedule", title: "Approve" });

  const flow = one(
    inbound("interactive", { type: "nfm_reply", nfm_reply: { response_json: "{}", body: "Sent" } }),
  );
  assert.deepEqual([flow.type, flow.content, flow.reply], ["OTHER", "[nfm_reply]", null]);
});

Deno.test("parseWebhookPayload() reads a location with its name and address", () => {
  const m = one(inbound("location", {
    address: "101 Forest Ave, Palo Alto, CA 94301",
    latitude: 37.44221496582,
    longitude: -122.16167449951,
    name: "Philz Coffee",
    url: "https://philzcoffee.com",
  }));
  assert.equal(m.type, "LOCATION");
  assert.equal(m.content, "[location] Philz Coffee, 101 Forest Ave, Palo Alto, CA 94301");
  assert.deepEqual(m.location, {
    latitude: 37.44221496582,
    longitude: -122.16167449951,
    name: "Philz Coffee",
    address: "101 Forest Ave, Palo Alto, CA 94301",
  });
  const bare = one(inbound("location", { latitude: -23.5, longitude: -46.6 }));
  assert.equal(bare.content, "[location] -23.5, -46.6");
});

Deno.test("parseWebhookPayload() keeps unknown message types and fields as OTHER with a placeholder, never throwing", () => {
  const reaction = one(inbound("reaction", { message_id: "wamid.x", emoji: "\u{1F44D}" }));
  assert.deepEqual([reaction.type, reaction.kind, reaction.content], ["OTHER", "reaction", "[reaction]"]);
  const future = one(inbound("hologram", { frames: 12 }, { brand_new_field: { deep: [1, 2] } }));
  assert.deepEqual([future.type, future.content], ["OTHER", "[hologram]"]);
  const unsupported = one(inbound("unsupported", undefined as never, {
    errors: [{ code: 131051, title: "Message type unknown", message: "Message type unknown" }],
  }));
  assert.deepEqual([unsupported.type, unsupported.content], ["OTHER", "[unsupported]"]);
  // A type that is not a plain word does not reach the placeholder as it came.
  const odd = one(inbound("Weird<Type>", {}));
  assert.equal(odd.content, "[unknown]");
  // A message without contacts has no name; with several contacts the sender's own is used.
  const payload = inbound("text", { body: "hi" });
  delete valueOf(payload).contacts;
  assert.equal(one(payload).contactName, null);
  const many = inbound("text", { body: "hi" });
  valueOf(many).contacts = [
    { profile: { name: "Other" }, wa_id: "1" },
    ...CONTACTS,
  ];
  assert.equal(one(many).contactName, "Sheena Nelson");
});

Deno.test("parseWebhookPayload() reads status callbacks: sent, delivered, read and failed with its errors", () => {
  const status = (s: string, extra: Record<string, unknown> = {}) => ({
    id: `wamid.out-${s}`,
    status: s,
    timestamp: "1750263773",
    recipient_id: "16505551234",
    ...extra,
  });
  const result = parseWebhookPayload(envelope({
    statuses: [
      status("sent", {
        conversation: { id: "c1", origin: { type: "service" } },
        pricing: { billable: true, pricing_model: "PMP", category: "service", type: "regular" },
      }),
      status("delivered"),
      status("read"),
      status("failed", {
        errors: [{
          code: 131026,
          title: "Message undeliverable",
          message: "Message undeliverable",
          error_data: { details: "Message Undeliverable." },
          href: "/documentation/business-messaging/whatsapp/support/error-codes",
        }],
      }),
      status("deleted"),
    ],
  }));
  assert.deepEqual(result.messages, []);
  assert.deepEqual(result.statuses.map((s) => s.status), ["sent", "delivered", "read", "failed"]);
  assert.deepEqual(result.statuses[3], {
    waMessageId: "wamid.out-failed",
    phoneNumberId: PHONE_NUMBER_ID,
    recipientId: "16505551234",
    status: "failed",
    errors: [{
      code: 131026,
      title: "Message undeliverable",
      message: "Message undeliverable",
      details: "Message Undeliverable.",
    }],
    timestamp: new Date(1750263773 * 1000),
    pricing: null,
  });
  assert.deepEqual(result.statuses[0].errors, []);
  assert.deepEqual(result.statuses[0].pricing, { category: "service", billable: true });
  assert.deepEqual(result.skipped, ['status "deleted" of wamid.out-deleted is not tracked']);
});

Deno.test("pricingOf() reads Meta's billable, or its pricing type when billable is left out", () => {
  // Meta's status webhook reference: per-message pricing (PMP) with `type`; `billable` deprecated.
  assert.deepEqual(
    pricingOf({ billable: false, pricing_model: "PMP", category: "utility", type: "regular" }),
    {
      category: "utility",
      billable: false,
    },
  );
  assert.deepEqual(pricingOf({ pricing_model: "PMP", category: "marketing", type: "regular" }), {
    category: "marketing",
    billable: true,
  });
  assert.deepEqual(pricingOf({ pricing_model: "PMP", category: "service", type: "free_customer_service" }), {
    category: "service",
    billable: false,
  });
  assert.deepEqual(pricingOf({ pricing_model: "PMP", category: "UTILITY", type: "free_entry_point" }), {
    category: "utility",
    billable: false,
  });
  assert.equal(pricingOf({ pricing_model: "PMP", type: "regular" }), null);
});

Deno.test("parseWebhookPayload() reports account errors and skips fields other than messages", () => {
  const result = parseWebhookPayload({
    object: "whatsapp_business_account",
    entry: [{
      id: "1",
      changes: [
        envelope({
          errors: [{
            code: 130429,
            title: "Rate limit hit",
            message: "Rate limit hit",
            error_data: { details: "Message failed to send because there were too many messages" },
          }],
        }).entry[0].changes[0],
        { field: "account_update", value: { event: "VERIFIED_ACCOUNT" } },
      ],
    }],
  });
  assert.deepEqual(result.accountErrors, [{
    code: 130429,
    title: "Rate limit hit",
    message: "Rate limit hit",
    details: "Message failed to send because there were too many messages",
  }]);
  assert.deepEqual(result.skipped, ['field "account_update" is not handled']);
});

Deno.test("parseWebhookPayload() keeps payload order across entries and changes", () => {
  const a = inbound("text", { body: "first" });
  const b = inbound("text", { body: "second" });
  messageOf(b).id = "wamid.2";
  const result = parseWebhookPayload({
    object: "whatsapp_business_account",
    entry: [...a.entry, ...b.entry],
  });
  assert.deepEqual(result.messages.map((m) => m.content), ["first", "second"]);
});

Deno.test("parseWebhookPayload() keeps malformed messages as OTHER with their raw JSON and a reason", () => {
  const unread = (payload: Payload) => {
    const m = one(payload);
    assert.equal(m.type, "OTHER", JSON.stringify(payload));
    assert.deepEqual(m.raw, messageOf(payload));
    assert.equal(typeof m.unreadable, "string");
    return [m.content, m.unreadable];
  };
  assert.deepEqual(unread(inbound("text", undefined as never)), [
    "[text]",
    "text.body is missing or not a string",
  ]);
  assert.deepEqual(unread(inbound("text", { body: 12 })), ["[text]", "text.body is missing or not a string"]);
  assert.deepEqual(unread(inbound("image", { mime_type: "image/png" })), [
    "[image]",
    "image.id is missing or not an id",
  ]);
  assert.deepEqual(unread(inbound("location", { latitude: 91, longitude: 0 })), [
    "[location]",
    "location.latitude or longitude is missing or out of range",
  ]);
  assert.deepEqual(unread(inbound("interactive", undefined as never)), [
    "[interactive]",
    "interactive is missing or not an object",
  ]);
  assert.deepEqual(unread(inbound("text", { body: "hi" }, { errors: [{ code: 131051 }] })), [
    "[text]",
    "it carries errors",
  ]);
  // Readable despite odd fields: the timestamp, the characters PostgreSQL cannot store, no id.
  const late = one(inbound("text", { body: "hi" }, { timestamp: "yesterday" }));
  assert.deepEqual([late.type, late.timestamp], ["TEXT", null]);
  assert.equal(one(inbound("text", { body: "a\u0000b\ud800" })).content, "a\uFFFDb\uFFFD");
  const noId = one(inbound("text", { body: "hi" }, { id: "" }));
  assert.match(noId.waMessageId, /^sha256:[0-9a-f]{64}$/);
  assert.equal(one(inbound("text", { body: "hi" }, { id: "" })).waMessageId, noId.waMessageId);
  // No metadata: the number is unknown (the channel of the URL takes it).
  const noMetadata = inbound("text", { body: "hi" });
  delete valueOf(noMetadata).metadata;
  assert.equal(one(noMetadata).phoneNumberId, null);
  // A bad change costs nothing to a good one beside it.
  const mixed = inbound("text", { body: "fine" });
  mixed.entry[0].changes.push(inbound("text", { body: 1 }).entry[0].changes[0]);
  assert.deepEqual(parseWebhookPayload(mixed).messages.map((m) => m.type), ["TEXT", "OTHER"]);
  // What has no sender, or is no payload at all, is dropped with where and why.
  assert.deepEqual(parseWebhookPayload(null).dropped.map((d) => d.path), ["entry"]);
  assert.deepEqual(
    parseWebhookPayload({ object: "whatsapp_business_account" }).dropped.map((d) => d.reason),
    [
      "no entries",
    ],
  );
  const senderless = inbound("text", { body: "hi" });
  delete messageOf(senderless).from;
  valueOf(senderless).contacts = [];
  assert.deepEqual(parseWebhookPayload(senderless).dropped.map((d) => [d.path, d.reason]), [
    ["entry.0.changes.0.value.messages.0", "no readable sender (from)"],
  ]);
});

Deno.test("parseWebhookPayload() never throws on arbitrary JSON, nor on mutated real payloads", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const r = parseWebhookPayload(value);
      assert.ok(Array.isArray(r.messages) && Array.isArray(r.dropped));
    }),
    { numRuns: 500 },
  );
  const base = inbound("text", { body: "hi" });
  fc.assert(
    fc.property(
      fc.jsonValue(),
      fc.constantFrom("from", "id", "timestamp", "type", "text", "context"),
      (junk, key) => {
        const payload = structuredClone(base);
        messageOf(payload)[key] = junk;
        const r = parseWebhookPayload(payload);
        // The sender and the id stay readable, so the message is always kept, read or as OTHER.
        if (key !== "from") assert.equal(r.messages.length, 1);
        for (const m of r.messages) assert.equal(typeof m.content, "string");
      },
    ),
    { numRuns: 500 },
  );
});
