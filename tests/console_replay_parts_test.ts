/**
 * The pure parts of the console's replay view (web/): the word diff shows each answer whole, its
 * changed words marked and nothing of the other answer in it; cases are listed REGRESSED first;
 * effects are read liberally from the API's JSON.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { wordDiff } from "../web/src/diff.tsx";
import { caseRank, effectsOf } from "../web/src/screens/replay.tsx";

const join = (parts: { text: string }[]) => parts.map((p) => p.text).join("");

Deno.test("the word diff keeps each answer exact and marks only the words that differ", () => {
  const words = fc.constantFrom("Olá", "Prezado", "cliente,", "pedido", "123", "!", " ", "  ", "\n", "\n\n");
  const text = fc.array(words, { maxLength: 20 }).map((w) => w.join(""));
  fc.assert(
    fc.property(text, text, (before, after) => {
      const d = wordDiff(before, after);
      assert.equal(join(d.before), before);
      assert.equal(join(d.after), after);
      // Spacing alone is never marked; the unmarked runs are the same on both sides.
      for (const p of [...d.before, ...d.after]) if (p.changed) assert.match(p.text, /\S/);
      const same = (parts: typeof d.before) =>
        parts.filter((p) => !p.changed).map((p) => p.text.trim()).join("");
      assert.equal(same(d.before), same(d.after));
    }),
  );
  const d = wordDiff(
    "Vou verificar. Seu pedido está a caminho.",
    "Prezado cliente, seu pedido está a caminho.",
  );
  assert.deepEqual(d.before.filter((p) => p.changed).map((p) => p.text), ["Vou", "verificar.", "Seu"]);
  assert.deepEqual(d.after.filter((p) => p.changed).map((p) => p.text), ["Prezado", "cliente,", "seu"]);
});

Deno.test("cases REGRESSED, CHANGED, SAME, failed, then those still asked", () => {
  const cases = [
    { status: "PENDING", verdict: null },
    { status: "DONE", verdict: "SAME" },
    { status: "FAILED", verdict: null },
    { status: "DONE", verdict: "REGRESSED" },
    { status: "DONE", verdict: "CHANGED" },
  ] as const;
  assert.deepEqual(
    [...cases].sort((a, b) => caseRank(a) - caseRank(b)).map((c) => c.verdict ?? c.status),
    ["REGRESSED", "CHANGED", "SAME", "FAILED", "PENDING"],
  );
});

Deno.test("effects are read liberally: fields as text, a missing list as none", () => {
  assert.deepEqual(
    effectsOf({
      intents: [{ name: "Track Order", fields: { order: "123", items: 2, gift: true } }],
      transfer: null,
    }),
    {
      intents: [{ name: "Track Order", fields: [["order", "123"], ["items", "2"], ["gift", "true"]] }],
      transfer: null,
    },
  );
  assert.deepEqual(effectsOf({ transfer: "pediu um humano" }), { intents: [], transfer: "pediu um humano" });
  assert.deepEqual(effectsOf({ intents: [null, { name: "X" }] }), {
    intents: [{ name: "X", fields: [] }],
    transfer: null,
  });
  assert.equal(effectsOf(null), null);
  assert.equal(effectsOf("nothing"), null);
});
