/**
 * Reply shaping (src/conversations/shaping.ts): splitMessages at paragraph, then sentence, then
 * word boundaries, always within WhatsApp's 4096 characters (a 10 000-character reply included);
 * signMessages' prefix; enabledEmoji false strips emoji (ZWJ sequences, skin tones, flags,
 * keycaps, tag sequences) and nothing else. Property tests (fast-check): every part within the
 * limit, the non-whitespace content preserved in order, no surrogate pair broken, no emoji left.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { shapeReply, signaturePrefix, splitMessages, stripEmoji } from "../src/conversations/shaping.ts";
import { WHATSAPP_TEXT_LIMIT } from "../src/channels/whatsapp/graph_api.ts";

const squash = (s: string) => s.replace(/\s+/g, "");
const FLAGS = { name: "Ana", splitMessages: true, enabledEmoji: true, signMessages: false };

Deno.test("splitMessages() sends each paragraph as its own message when splitMessages is on", () => {
  assert.deepEqual(
    splitMessages("Olá! Tudo bem?\n\nTemos pizza e suco.\n \n\n  Algo mais?  \n", { split: true }),
    ["Olá! Tudo bem?", "Temos pizza e suco.", "Algo mais?"],
  );
  // Single newlines (lists) stay inside one message.
  assert.deepEqual(splitMessages("Opções:\n- pizza\n- suco", { split: true }), ["Opções:\n- pizza\n- suco"]);
});

Deno.test("splitMessages() keeps the reply whole when splitMessages is off and it fits", () => {
  const reply = "Olá! Tudo bem?\n\nTemos pizza e suco.";
  assert.deepEqual(splitMessages(reply, { split: false }), [reply]);
  assert.deepEqual(splitMessages("  \n\n ", { split: false }), []);
});

Deno.test("splitMessages() cuts a long paragraph at sentence boundaries, packing whole sentences", () => {
  const reply = "Primeira frase aqui. Segunda frase! Terceira frase? Quarta.";
  assert.deepEqual(splitMessages(reply, { split: false, maxLength: 40 }), [
    "Primeira frase aqui. Segunda frase!",
    "Terceira frase? Quarta.",
  ]);
});

Deno.test("splitMessages() packs paragraphs up to the limit when splitMessages is off", () => {
  const p = (n: number) => `${"x".repeat(n)}.`;
  const reply = [p(20), p(20), p(20)].join("\n\n");
  assert.deepEqual(splitMessages(reply, { split: false, maxLength: 50 }), [`${p(20)}\n\n${p(20)}`, p(20)]);
});

Deno.test("splitMessages() cuts words, then characters, only when a sentence or a word is over the limit", () => {
  assert.deepEqual(splitMessages("um dois tres quatro cinco", { split: false, maxLength: 10 }), [
    "um dois",
    "tres",
    "quatro",
    "cinco",
  ]);
  assert.deepEqual(splitMessages("abcdefghij", { split: false, maxLength: 4 }), ["abcd", "efgh", "ij"]);
  // An emoji is never cut in half: a surrogate pair (or a ZWJ family) stays in one piece.
  const emoji = "😀".repeat(5);
  const parts = splitMessages(emoji, { split: false, maxLength: 3 });
  assert.deepEqual(parts, ["😀", "😀", "😀", "😀", "😀"]);
  const family = "👩‍👩‍👧".repeat(3);
  assert.deepEqual(splitMessages(family, { split: false, maxLength: 10 }), ["👩‍👩‍👧", "👩‍👩‍👧", "👩‍👩‍👧"]);
});

Deno.test("splitMessages() keeps a 10 000-character reply within 4096 characters per message", () => {
  const sentence = "Esta é uma frase de exemplo com algumas palavras. ";
  const reply = sentence.repeat(200); // 10 000 characters, one paragraph
  assert.equal(reply.length, 10_000);
  for (const split of [true, false]) {
    const parts = splitMessages(reply, { split });
    assert.equal(parts.length, 3);
    for (const part of parts) {
      assert.ok(part.length <= WHATSAPP_TEXT_LIMIT);
      assert.ok(part.endsWith("palavras."), "cut at a sentence boundary");
    }
    assert.equal(squash(parts.join("")), squash(reply));
  }
  const noSpaces = "a".repeat(10_000);
  assert.deepEqual(splitMessages(noSpaces, { split: true }).map((p) => p.length), [4096, 4096, 1808]);
});

Deno.test("signaturePrefix() is the agent name in WhatsApp bold, without characters that break it", () => {
  assert.equal(signaturePrefix("Ana"), "*Ana*: ");
  assert.equal(signaturePrefix("  Ana *Bot*_\n da ~Loja~ "), "*Ana Bot da Loja*: ");
  assert.equal(signaturePrefix("**"), "");
});

Deno.test("shapeReply() applies emoji, split and sign flags, counting the signature in the limit", () => {
  assert.deepEqual(
    shapeReply("Oi! 😀\n\nTudo bem? 👍🏽", { ...FLAGS, enabledEmoji: false, signMessages: true }),
    ["*Ana*: Oi!", "*Ana*: Tudo bem?"],
  );
  assert.deepEqual(shapeReply("Oi! 😀\n\nTudo bem?", FLAGS), ["Oi! 😀", "Tudo bem?"]);
  assert.deepEqual(shapeReply("Oi!\n\nTudo bem?", { ...FLAGS, splitMessages: false }), ["Oi!\n\nTudo bem?"]);
  const long = shapeReply("a".repeat(5000), { ...FLAGS, signMessages: true });
  assert.deepEqual(long.map((m) => m.length), [4096, 918]);
  assert.ok(long.every((m) => m.startsWith("*Ana*: ")));
  assert.deepEqual(shapeReply("😀 ", { ...FLAGS, enabledEmoji: false, signMessages: true }), []);
});

Deno.test("stripEmoji() removes emoji of every form and keeps the text around them", () => {
  const cases: Array<[string, string]> = [
    ["Olá 😀 tudo bem?", "Olá tudo bem?"],
    ["Olá 😀, tudo bem?", "Olá, tudo bem?"],
    ["Família 👩‍👩‍👧 feliz", "Família feliz"],
    ["Tchau 👋🏽", "Tchau"],
    ["Brasil 🇧🇷 e Portugal 🇵🇹.", "Brasil e Portugal."],
    ["Inglaterra 🏴󠁧󠁢󠁥󠁮󠁧󠁿!", "Inglaterra!"],
    ["Tecla 1️⃣ e #️⃣ fim", "Tecla e fim"],
    ["Coração ❤️ e ❤ e ☺︎", "Coração e e"],
    ["😀😀😀", ""],
    ["Linha 😀\nOutra", "Linha\nOutra"],
    ["© 2024 Acme™ e ®", "© 2024 Acme™ e ®"],
    ["©️ emoji", "emoji"],
    ["Persa: می‌خواهم, Malaiala: ന്‍", "Persa: می‌خواهم, Malaiala: ന്‍"],
    ["Preço: 10 → 8 (50%) #1 *bold*", "Preço: 10 → 8 (50%) #1 *bold*"],
  ];
  for (const [input, expected] of cases) assert.equal(stripEmoji(input), expected, input);
});

// ---- properties ----

const emojiArb = fc.constantFrom("😀", "👍🏽", "👩‍👩‍👧", "🇧🇷", "1️⃣", "❤️", "🏴󠁧󠁢󠁥󠁮󠁧󠁿", "©️", "☺︎", "🍕");
const textArb = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ maxLength: 12 }) },
    { weight: 2, arbitrary: fc.constantFrom(" ", "\n", "\n\n", ". ", "! ", "? ", "\t") },
    { weight: 2, arbitrary: emojiArb },
    { weight: 1, arbitrary: fc.string({ maxLength: 8, unit: "grapheme" }) },
  ),
  { maxLength: 80 },
).map((xs) => xs.join(""));

/** True when a lone surrogate starts or ends a part (a pair cut in two). */
const cutPair = (s: string) => /^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(s);

Deno.test("property: every part is within the limit, non-empty, trimmed, and the parts keep the content in order", () => {
  fc.assert(
    fc.property(textArb, fc.integer({ min: 2, max: 60 }), fc.boolean(), (text, maxLength, split) => {
      const parts = splitMessages(text, { split, maxLength });
      for (const part of parts) {
        assert.ok(part.length <= maxLength, `${part.length} > ${maxLength}`);
        assert.ok(part.length > 0 && part === part.trim());
        assert.ok(!cutPair(part), JSON.stringify(part));
      }
      assert.equal(squash(parts.join("")), squash(text));
    }),
    { numRuns: 1000 },
  );
});

Deno.test("property: shapeReply() never exceeds the limit with a signature, and leaves no emoji when disabled", () => {
  const pictograph =
    /(?![\u00A9\u00AE\u2122])\p{Extended_Pictographic}|\p{Regional_Indicator}|\p{Emoji_Modifier}/u;
  fc.assert(
    fc.property(
      textArb,
      fc.string({ maxLength: 10 }),
      fc.integer({ min: 20, max: 80 }),
      (text, name, maxLength) => {
        const parts = shapeReply(
          text,
          { name, splitMessages: true, enabledEmoji: false, signMessages: true },
          {
            maxLength,
          },
        );
        for (const part of parts) {
          assert.ok(part.length <= maxLength);
          assert.ok(!pictograph.test(part), JSON.stringify(part));
        }
      },
    ),
    { numRuns: 1000 },
  );
});

Deno.test("property: stripEmoji() is idempotent and leaves emoji-free text unchanged", () => {
  fc.assert(
    fc.property(textArb, (text) => {
      const once = stripEmoji(text);
      assert.equal(stripEmoji(once), once);
    }),
    { numRuns: 1000 },
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 100, unit: "binary" }), (text) => {
      fc.pre(!/\p{Extended_Pictographic}|\p{Regional_Indicator}|\p{Emoji_Modifier}|\u20E3/u.test(text));
      assert.equal(stripEmoji(text), text);
    }),
    { numRuns: 300 },
  );
});
