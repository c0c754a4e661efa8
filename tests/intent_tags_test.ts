/**
 * Intent tags in model replies (src/conversations/intent_tags.ts): the self-closing tag form and the
 * forms models actually write (not self-closing, single quotes, entities, several tags, any case),
 * only known tags, positions for the replacement, missing required fields, the transfer tag, the
 * triggerOnTypes filter. Property tests (fast-check): parse(render(tags)) round-trips, and arbitrary
 * markup-heavy text never throws and yields ordered, non-overlapping spans that are tags.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decodeEntities,
  intentsForTypes,
  parseIntentTags,
  renderTag,
  replaceTags,
  type TagMatch,
} from "../src/conversations/intent_tags.ts";

const ORDER = { tag: "criar-pedido", requiredFields: [{ name: "produto" }, { name: "quantidade" }] };
const CALLBACK = { tag: "agendar-retorno", requiredFields: [{ name: "horario" }] };
const NO_FIELDS = { tag: "falar-com-financeiro", requiredFields: [] };
const INTENTS = [ORDER, CALLBACK, NO_FIELDS];

const kinds = (ms: TagMatch[]) => ms.map((m) => m.kind === "intent" ? m.intent.tag : `transfer:${m.reason}`);

Deno.test("parseIntentTags() reads the self-closing form with its fields and position", () => {
  const reply = 'Perfeito! <criar-pedido produto="pizza" quantidade="2"/> Já anotei.';
  const [m] = parseIntentTags(reply, INTENTS);
  assert.equal(m.kind, "intent");
  assert.ok(m.kind === "intent");
  assert.equal(m.intent, ORDER);
  assert.deepEqual(m.fields, { produto: "pizza", quantidade: "2" });
  assert.deepEqual(m.missing, []);
  assert.equal(reply.slice(m.start, m.end), '<criar-pedido produto="pizza" quantidade="2"/>');
});

Deno.test("parseIntentTags() takes non-self-closing tags, single quotes, bare values, spaces and any case", () => {
  const forms = [
    `<criar-pedido produto="pizza" quantidade="2"></criar-pedido>`,
    `<criar-pedido produto='pizza' quantidade='2'/>`,
    `<criar-pedido produto=pizza quantidade=2 />`,
    `<criar-pedido\n  produto = "pizza"\n  quantidade="2"\n/>`,
    `<Criar-Pedido PRODUTO="pizza" Quantidade="2"></CRIAR-PEDIDO >`,
    `<criar-pedido produto="pizza" quantidade="2">`,
  ];
  for (const form of forms) {
    const reply = `ok ${form} fim`;
    const ms = parseIntentTags(reply, INTENTS);
    assert.equal(ms.length, 1, form);
    const m = ms[0];
    assert.ok(m.kind === "intent");
    assert.deepEqual(m.fields, { produto: "pizza", quantidade: "2" }, form);
    assert.equal(reply.slice(m.start, m.end), form, form);
  }
});

Deno.test("parseIntentTags() decodes HTML entities in values (named, decimal, hex) and keeps unknown ones", () => {
  const reply =
    `<criar-pedido produto="Tom &amp; Jerry &lt;3 &quot;XL&quot; &#39;a&#39; &#x1F355; &#233; &copy;" quantidade="&#50;"/>`;
  const [m] = parseIntentTags(reply, INTENTS);
  assert.ok(m.kind === "intent");
  assert.deepEqual(m.fields, { produto: `Tom & Jerry <3 "XL" 'a' \u{1F355} é &copy;`, quantidade: "2" });
  // A quote of the other style and a `>` inside a value are part of the value.
  const [n] = parseIntentTags(`<criar-pedido produto="it's > 1" quantidade='say "2"'/>`, INTENTS);
  assert.ok(n.kind === "intent");
  assert.deepEqual(n.fields, { produto: "it's > 1", quantidade: 'say "2"' });
  // Numeric references that are not characters stay as written.
  assert.equal(decodeEntities("&#0; &#xD800; &#x110000; &#65;"), "&#0; &#xD800; &#x110000; A");
});

Deno.test("parseIntentTags() finds several tags in order and ignores unknown tags and markup", () => {
  const reply = [
    "<b>Olá</b> <br/>",
    '<agendar-retorno horario="amanhã 10h"/>',
    '<desconhecido x="1"/> 2 < 3 and a<b',
    '<criar-pedido produto="suco" quantidade="1"/>',
    "<falar-com-financeiro/>",
  ].join("\n");
  const ms = parseIntentTags(reply, INTENTS);
  assert.deepEqual(kinds(ms), ["agendar-retorno", "criar-pedido", "falar-com-financeiro"]);
  for (let i = 1; i < ms.length; i++) assert.ok(ms[i - 1].end <= ms[i].start);
});

Deno.test("parseIntentTags() reports missing and blank required fields and ignores extra attributes", () => {
  const [m] = parseIntentTags('<criar-pedido produto="pizza" quantidade="  " extra="x"/>', INTENTS);
  assert.ok(m.kind === "intent");
  assert.deepEqual(m.fields, { produto: "pizza" });
  assert.deepEqual(m.missing, ["quantidade"]);
  assert.deepEqual(m.attributes, { produto: "pizza", quantidade: "  ", extra: "x" });
  const [n] = parseIntentTags("<criar-pedido></criar-pedido>", INTENTS);
  assert.ok(n.kind === "intent");
  assert.deepEqual(n.missing, ["produto", "quantidade"]);
  // A repeated attribute: the first one counts.
  const [r] = parseIntentTags('<agendar-retorno horario="9h" horario="10h"/>', INTENTS);
  assert.ok(r.kind === "intent");
  assert.deepEqual(r.fields, { horario: "9h" });
});

Deno.test("parseIntentTags() reads the transfer tag with motivo, with inner text, or bare", () => {
  const cases: Array<[string, string | null]> = [
    ['<transferir motivo="cliente pediu um humano"/>', "cliente pediu um humano"],
    ["<transferir motivo='reembolso &gt; R$ 500'></transferir>", "reembolso > R$ 500"],
    ["<transferir>quer cancelar</transferir>", "quer cancelar"],
    ["<transferir/>", null],
    ["<transferir>", null],
    ["<TRANSFERIR />", null],
  ];
  for (const [reply, reason] of cases) {
    const ms = parseIntentTags(`Vou chamar alguém. ${reply}`, []);
    assert.equal(ms.length, 1, reply);
    assert.deepEqual(ms[0].kind === "transfer" ? ms[0].reason : "not a transfer", reason, reply);
  }
});

Deno.test("parseIntentTags() leaves broken tags as text", () => {
  for (
    const reply of [
      '<criar-pedido produto="pizza/>',
      "<criar-pedidoproduto='x'/>",
      "< criar-pedido/>",
      '<criar-pedido produto="a"quantidade="b"/>',
      "<criar-pedido =x/>",
      "<criar-pedido",
    ]
  ) {
    assert.deepEqual(parseIntentTags(reply, INTENTS), [], reply);
  }
});

Deno.test("replaceTags() puts each response message where its tag was, and removes silent ones without double spaces", () => {
  const reply =
    'Certo. <criar-pedido produto="pizza" quantidade="2"/> Mais algo? <agendar-retorno horario="10h"/>.';
  const [a, b] = parseIntentTags(reply, INTENTS);
  assert.equal(
    replaceTags(reply, [{ ...a, text: "Pedido 42 criado." }, { ...b, text: "" }]),
    "Certo. Pedido 42 criado. Mais algo?.",
  );
  assert.equal(replaceTags(reply, [{ ...b, text: "" }, { ...a, text: "" }]), "Certo. Mais algo?.");
  assert.equal(replaceTags("<transferir/> Até logo", [{ start: 0, end: 13, text: "" }]), "Até logo");
  assert.equal(replaceTags("Oi\n\n<transferir/>\n\nTchau", [{ start: 4, end: 17, text: "" }]), "Oi\n\nTchau");
});

Deno.test("intentsForTypes() keeps the intents whose triggerOnTypes include a type of the window", () => {
  const text = { tag: "a", triggerOnTypes: ["TEXT"] };
  const audio = { tag: "b", triggerOnTypes: ["AUDIO", "DOCUMENT"] };
  assert.deepEqual(intentsForTypes([text, audio], ["TEXT"]), [text]);
  assert.deepEqual(intentsForTypes([text, audio], new Set(["DOCUMENT", "TEXT"])), [text, audio]);
  assert.deepEqual(intentsForTypes([text, audio], ["IMAGE"]), []);
});

// ---- properties ----

const filler = fc.string({ maxLength: 30 }).filter((s) => !s.includes("<"));
const value = fc.string({ maxLength: 20, unit: "binary" });
const tagArb = fc.oneof(
  fc.record({
    intent: fc.constantFrom(ORDER, CALLBACK, NO_FIELDS),
    values: fc.array(value, { minLength: 2, maxLength: 2 }),
    selfClosing: fc.boolean(),
    quote: fc.constantFrom('"' as const, "'" as const),
  }).map(({ intent, values, selfClosing, quote }) => {
    const attributes = Object.fromEntries(intent.requiredFields.map((f, i) => [f.name, values[i]]));
    return { tag: intent.tag, attributes, text: renderTag(intent.tag, attributes, { selfClosing, quote }) };
  }),
  fc.record({ reason: value, quote: fc.constantFrom('"' as const, "'" as const) }).map((
    { reason, quote },
  ) => ({
    tag: "transferir",
    attributes: { motivo: reason },
    text: renderTag("transferir", { motivo: reason }, { quote }),
  })),
);

Deno.test("property: parse(render(tags)) gives back every tag, its attributes and its position", () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(filler, tagArb), { maxLength: 6 }), filler, (parts, tail) => {
      let reply = "";
      const expected: Array<{ start: number; end: number; tag: string; attributes: Record<string, string> }> =
        [];
      for (const [text, tag] of parts) {
        reply += text;
        expected.push({
          start: reply.length,
          end: reply.length + tag.text.length,
          tag: tag.tag,
          attributes: tag.attributes,
        });
        reply += tag.text;
      }
      reply += tail;
      const found = parseIntentTags(reply, INTENTS);
      assert.deepEqual(
        found.map((m) => ({
          start: m.start,
          end: m.end,
          tag: m.kind === "intent" ? m.intent.tag : "transferir",
          attributes: m.attributes,
        })),
        expected,
      );
      for (const m of found) {
        if (m.kind === "intent") {
          for (const f of m.intent.requiredFields) {
            const v: string = m.attributes[f.name];
            assert.equal(m.missing.includes(f.name), v.trim() === "");
            if (v.trim() !== "") assert.equal(m.fields[f.name], v);
          }
        } else {
          assert.equal(m.reason, m.attributes.motivo.trim() || null);
        }
      }
      // Removing every tag leaves exactly the fillers' text (up to the spaces next to the gaps and the ends).
      const stripped = replaceTags(reply, found.map((m) => ({ start: m.start, end: m.end, text: "" })));
      const squash = (s: string) => s.replace(/\s+/g, "");
      assert.equal(squash(stripped), squash(parts.map(([t]) => t).join("") + tail));
    }),
    { numRuns: 400 },
  );
});

const markup = fc.array(
  fc.constantFrom(
    "<",
    ">",
    "/",
    "/>",
    "</",
    '"',
    "'",
    "=",
    " ",
    "\n",
    "&",
    "&amp;",
    "&#",
    ";",
    "a",
    "criar-pedido",
    "transferir",
    "produto",
    "quantidade",
    "falar-com-financeiro",
    "\u{1F600}",
    "\ud800",
  ),
  { maxLength: 60 },
).map((xs) => xs.join(""));

Deno.test("property: arbitrary text never throws and yields ordered, non-overlapping tag spans", () => {
  fc.assert(
    fc.property(fc.oneof(markup, fc.string({ maxLength: 200, unit: "binary" })), (reply) => {
      const found = parseIntentTags(reply, INTENTS);
      let last = 0;
      for (const m of found) {
        assert.ok(m.start >= last && m.end > m.start && m.end <= reply.length);
        assert.equal(reply[m.start], "<");
        assert.equal(reply[m.end - 1], ">");
        last = m.end;
      }
      replaceTags(reply, found.map((m) => ({ ...m, text: "" })));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("parseIntentTags() stays linear on long adversarial replies", () => {
  const unclosed = "<criar-pedido>".repeat(20_000);
  assert.equal(parseIntentTags(unclosed, INTENTS).length, 20_000);
  const quotes = '<criar-pedido produto="'.repeat(20_000);
  assert.deepEqual(parseIntentTags(quotes, INTENTS), []);
});
