/**
 * A template's parameters checked against its components and Meta's send payload built from them
 * (src/templates/parameters.ts). Templates are Meta's published examples (tests/_helpers/templates.ts);
 * the expected payloads are the shapes of Meta's "Send message templates" guide
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-templates):
 * `{ type: "header" | "body", parameters: [{ type: "text", text }] }`, NAMED parameters with
 * `parameter_name`, media as `{ type: "image", image: { link } }`, a location as
 * `{ type: "location", location: { latitude, longitude, name, address } }`, buttons as
 * `{ type: "button", sub_type: "url", index: "0", parameters: [{ type: "text", text }] }`, a coupon as
 * `{ type: "coupon_code", coupon_code }`, and an authentication template's code in its body and its
 * button.
 */
import assert from "node:assert/strict";
import { buildTemplateMessage, placeholdersOf } from "../src/templates/parameters.ts";
import {
  COUPON,
  HELLO_WORLD,
  ORDER_DELIVERY_UPDATE,
  ORDER_SHIPPED,
  SEASONAL_PROMOTION,
  stored,
  VERIFICATION_CODE,
} from "./_helpers/templates.ts";

/** The problems of a refused build. */
function problemsOf(result: ReturnType<typeof buildTemplateMessage>) {
  assert.equal(result.ok, false, JSON.stringify(result));
  return result.ok ? [] : result.problems;
}

Deno.test("placeholdersOf() lists each placeholder once, in order, positional or named", () => {
  assert.deepEqual(placeholdersOf("{{2}} and {{1}} then {{2}}"), ["2", "1"]);
  assert.deepEqual(placeholdersOf("Hi {{ first_name }}, order {{order_number}}"), [
    "first_name",
    "order_number",
  ]);
  assert.deepEqual(placeholdersOf("no parameters {1} {{}}"), []);
});

Deno.test("POSITIONAL: a text header and two body values become Meta's header and body components", () => {
  const built = buildTemplateMessage(stored(SEASONAL_PROMOTION), {
    header: "Summer Sale",
    body: ["25OFF", "15%"],
  });
  assert.deepEqual(built, {
    ok: true,
    template: {
      name: "seasonal_promotion_text_only",
      language: { code: "en_US" },
      components: [
        { type: "header", parameters: [{ type: "text", text: "Summer Sale" }] },
        { type: "body", parameters: [{ type: "text", text: "25OFF" }, { type: "text", text: "15%" }] },
      ],
    },
    content: "Shop now through the end of August and use code 25OFF to get 15% off of all merchandise.",
  });
  // A quick reply's payload is optional; given, it is the button's component.
  const withPayload = buildTemplateMessage(stored(SEASONAL_PROMOTION), {
    header: "Summer Sale",
    body: { "1": "25OFF", "2": "15%" },
    buttons: [null, "UNSUBSCRIBE_ALL"],
  });
  assert.ok(withPayload.ok);
  assert.deepEqual(withPayload.template.components?.at(-1), {
    type: "button",
    sub_type: "quick_reply",
    index: "1",
    parameters: [{ type: "payload", payload: "UNSUBSCRIBE_ALL" }],
  });
});

Deno.test("a wrong count, a missing header, an extra button: every problem named, nothing built", () => {
  assert.deepEqual(problemsOf(buildTemplateMessage(stored(SEASONAL_PROMOTION), { body: ["25OFF"] })), [
    { path: "parameters.header", message: "the header's {{1}} needs a text value" },
    { path: "parameters.body", message: "the body takes 2 parameter(s) ({{1}}..{{2}}); 1 given" },
  ]);
  assert.deepEqual(
    problemsOf(
      buildTemplateMessage(stored(SEASONAL_PROMOTION), {
        header: "Sale",
        body: ["a", "b", "c"],
        buttons: [null, null, "x"],
      }),
    ),
    [
      { path: "parameters.body", message: "the body takes 2 parameter(s) ({{1}}..{{2}}); 3 given" },
      { path: "parameters.buttons.2", message: "the template has no button 2" },
    ],
  );
  // Meta's 132018: newlines, tabs and five spaces in a row are refused in a text parameter.
  assert.deepEqual(
    problemsOf(
      buildTemplateMessage(stored(SEASONAL_PROMOTION), { header: "Sale", body: ["a\nb", "c     d"] }),
    ),
    [
      { path: "parameters.body.0", message: "must not contain newlines or tabs (WhatsApp refuses them)" },
      {
        path: "parameters.body.1",
        message: "must not contain more than four spaces in a row (WhatsApp refuses them)",
      },
    ],
  );
  // Nothing to fill: values are refused, none is needed.
  assert.deepEqual(problemsOf(buildTemplateMessage(stored(HELLO_WORLD), { header: "x", body: ["y"] })), [
    { path: "parameters.header", message: "the template's header takes no parameter" },
    { path: "parameters.body", message: "the template's body takes no parameters" },
  ]);
  assert.deepEqual(buildTemplateMessage(stored(HELLO_WORLD)), {
    ok: true,
    template: { name: "hello_world", language: { code: "en_US" } },
    content: stored(HELLO_WORLD).components[1].text,
  });
});

Deno.test("NAMED: values by name with parameter_name, a LOCATION header; wrong names are problems", () => {
  const built = buildTemplateMessage(stored(ORDER_DELIVERY_UPDATE), {
    header: {
      latitude: 37.483307,
      longitude: 122.148981,
      name: "Pablo Morales",
      address: "1 Hacker Way, Menlo Park, CA 94025",
    },
    body: { order_number: "566701", customer_name: "Mark" },
  });
  assert.deepEqual(built, {
    ok: true,
    template: {
      name: "order_delivery_update",
      language: { code: "en_US" },
      components: [
        {
          type: "header",
          parameters: [{
            type: "location",
            location: {
              latitude: 37.483307,
              longitude: 122.148981,
              name: "Pablo Morales",
              address: "1 Hacker Way, Menlo Park, CA 94025",
            },
          }],
        },
        {
          type: "body",
          parameters: [
            { type: "text", parameter_name: "customer_name", text: "Mark" },
            { type: "text", parameter_name: "order_number", text: "566701" },
          ],
        },
      ],
    },
    content: "Good news Mark! Your order #566701 is on its way to the location above.",
  });
  assert.deepEqual(
    problemsOf(
      buildTemplateMessage(stored(ORDER_DELIVERY_UPDATE), {
        body: { customer_name: "Mark", order: "566701" },
      }),
    ),
    [
      {
        path: "parameters.header",
        message: "the template's LOCATION header needs { latitude, longitude, name?, address? }",
      },
      { path: "parameters.body.order_number", message: "the body's {{order_number}} needs a text value" },
      {
        path: "parameters.body.order",
        message: "the body has no {{order}} (it has {{customer_name}}, {{order_number}})",
      },
    ],
  );
  assert.deepEqual(
    problemsOf(buildTemplateMessage(stored(ORDER_DELIVERY_UPDATE), {
      header: { latitude: 1, longitude: 2 },
      body: ["Mark", "566701"],
    })),
    [{
      path: "parameters.body",
      message: 'the body takes named parameters: { "customer_name": "...", "order_number": "..." }',
    }],
  );
});

Deno.test("an IMAGE header's link and a URL button's suffix; a phone button takes nothing", () => {
  const built = buildTemplateMessage(stored(ORDER_SHIPPED), {
    header: { link: "https://www.luckyshrub.com/media/order.jpg" },
    body: ["Maria", "ORD-9271"],
    buttons: ["ORD-9271"],
  });
  assert.deepEqual(built, {
    ok: true,
    template: {
      name: "order_shipped",
      language: { code: "pt_BR" },
      components: [
        {
          type: "header",
          parameters: [{ type: "image", image: { link: "https://www.luckyshrub.com/media/order.jpg" } }],
        },
        { type: "body", parameters: [{ type: "text", text: "Maria" }, { type: "text", text: "ORD-9271" }] },
        { type: "button", sub_type: "url", index: "0", parameters: [{ type: "text", text: "ORD-9271" }] },
      ],
    },
    content: "Olá Maria, seu pedido ORD-9271 foi enviado.",
  });
  assert.deepEqual(
    problemsOf(buildTemplateMessage(stored(ORDER_SHIPPED), {
      header: "ftp://example.com/a.jpg",
      body: ["Maria", "ORD-9271"],
      buttons: { "1": "+15550051234" },
    })),
    [
      { path: "parameters.header.link", message: "must be an http(s) URL" },
      { path: "parameters.buttons.0", message: "the URL button's {{1}} needs a value (the URL's end)" },
      { path: "parameters.buttons.1", message: "the PHONE_NUMBER button takes no parameter" },
    ],
  );
});

Deno.test("a COPY_CODE button's coupon code, and an authentication template's code in body and button", () => {
  const coupon = buildTemplateMessage(stored(COUPON), { body: ["25OFF"], buttons: [null, "25OFF"] });
  assert.ok(coupon.ok);
  assert.deepEqual(coupon.template.components, [
    { type: "body", parameters: [{ type: "text", text: "25OFF" }] },
    {
      type: "button",
      sub_type: "copy_code",
      index: "1",
      parameters: [{ type: "coupon_code", coupon_code: "25OFF" }],
    },
  ]);
  assert.deepEqual(
    problemsOf(buildTemplateMessage(stored(COUPON), { body: ["25OFF"], buttons: [null, "25 OFF!"] })),
    [
      { path: "parameters.buttons.1", message: "a coupon code is 1 to 15 letters or digits" },
    ],
  );

  // The button carries the body's code unless given its own.
  const otp = buildTemplateMessage(stored(VERIFICATION_CODE), { body: ["123456"] });
  assert.deepEqual(otp, {
    ok: true,
    template: {
      name: "verification_code",
      language: { code: "en_US" },
      components: [
        { type: "body", parameters: [{ type: "text", text: "123456" }] },
        { type: "button", sub_type: "url", index: "0", parameters: [{ type: "text", text: "123456" }] },
      ],
    },
    content: "*123456* is your verification code. For your security, do not share this code.",
  });
  // The same template as some accounts list it: the OTP button as a URL whose end is the code.
  const asUrl = {
    ...stored(VERIFICATION_CODE),
    components: [
      VERIFICATION_CODE.components[0],
      {
        type: "BUTTONS",
        buttons: [{
          type: "URL",
          text: "Copy code",
          url: "https://www.whatsapp.com/otp/code/?otp_type=COPY_CODE&code=otp{{1}}",
        }],
      },
    ],
  };
  const built = buildTemplateMessage(asUrl, { body: ["654321"] });
  assert.ok(built.ok);
  assert.deepEqual(built.template.components?.[1], {
    type: "button",
    sub_type: "url",
    index: "0",
    parameters: [{ type: "text", text: "654321" }],
  });
  assert.deepEqual(problemsOf(buildTemplateMessage(stored(VERIFICATION_CODE), {})), [
    { path: "parameters.body", message: "the body takes 1 parameter(s) ({{1}}..{{1}}); 0 given" },
    { path: "parameters.buttons.0", message: "the code button needs the code (or the body's)" },
  ]);
});

Deno.test("components this cannot fill are problems, not guesses", () => {
  const carousel = {
    ...stored(HELLO_WORLD),
    components: [
      { type: "BODY", text: "Rare succulents for sale! {{1}}" },
      { type: "CAROUSEL", cards: [] },
      { type: "BUTTONS", buttons: [{ type: "CATALOG", text: "View catalog" }] },
    ],
  };
  assert.deepEqual(problemsOf(buildTemplateMessage(carousel, { body: ["Pablo"] })), [
    { path: "parameters", message: "the template's CAROUSEL component cannot be sent from here" },
    { path: "parameters.buttons.0", message: "the template's CATALOG button cannot be sent from here" },
  ]);
  const gif = {
    ...stored(HELLO_WORLD),
    components: [{ type: "HEADER", format: "GIF" }, { type: "BODY", text: "x" }],
  };
  assert.deepEqual(problemsOf(buildTemplateMessage(gif, { header: { link: "https://e.com/a.gif" } })), [
    { path: "parameters.header", message: "the template's GIF header cannot be sent from here" },
  ]);
});
