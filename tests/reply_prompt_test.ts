/**
 * The model's input for one reply (src/conversations/prompt.ts): the system message (prompt,
 * training context, intents with their tag form, the transfer tag only when enabled), the
 * history bounded by messages and characters, the window's customer messages as one user message,
 * the agent's model and temperature.
 */
import assert from "node:assert/strict";
import {
  buildReplyPrompt,
  HISTORY_MAX_CHARS,
  HISTORY_MAX_MESSAGES,
  type PromptAgent,
  type PromptMessage,
  systemMessage,
  tagForm,
} from "../src/conversations/prompt.ts";
import { renderSystemPrompt } from "../src/agents/template.ts";
import { parseIntentTags } from "../src/conversations/intent_tags.ts";

const AGENT: PromptAgent = {
  name: "Ana",
  systemPrompt: "Você é Ana, atendente da Pizzaria Roma.",
  trainingContext: "Abrimos das 18h às 23h.",
  model: "gpt-4o-mini",
  temperature: 0.3,
  enabledHumanTransfer: true,
};

const ORDER = {
  name: "Criar pedido",
  tag: "criar-pedido",
  description: "quando o cliente confirmar um pedido",
  requiredFields: [
    { name: "produto", type: "string", description: "o sabor da pizza" },
    { name: "quantidade", type: "number", description: "" },
  ],
};

const customer = (content: string): PromptMessage => ({ sender: "CUSTOMER", content });
const ai = (content: string): PromptMessage => ({ sender: "AI", content });

Deno.test("tagForm() is the self-closing tag, one attribute per required field, and parses back as the intent", () => {
  assert.equal(tagForm(ORDER), '<criar-pedido produto="<value>" quantidade="<value>"/>');
  assert.equal(tagForm({ tag: "falar-com-financeiro", requiredFields: [] }), "<falar-com-financeiro/>");
  const [m] = parseIntentTags(tagForm(ORDER), [ORDER]);
  assert.ok(m.kind === "intent");
  assert.deepEqual(m.fields, { produto: "<value>", quantidade: "<value>" });
});

Deno.test("systemMessage() holds the prompt, the training context, each intent with its tag form and fields, and the transfer tag", () => {
  const text = systemMessage({ agent: AGENT, intents: [ORDER] });
  const expected = [
    "Você é Ana, atendente da Pizzaria Roma.",
    "Contexto de treinamento:\nAbrimos das 18h às 23h.",
    "- Criar pedido: quando o cliente confirmar um pedido",
    '  Tag: <criar-pedido produto="<value>" quantidade="<value>"/>',
    "  produto (string): o sabor da pizza",
    "  quantidade (number)",
    '<transferir motivo="<motivo>"/>',
  ];
  let at = 0;
  for (const part of expected) {
    const found = text.indexOf(part, at);
    assert.ok(found >= 0, `missing or out of order: ${part}`);
    at = found + part.length;
  }
});

Deno.test("systemMessage() leaves out the transfer tag when enabledHumanTransfer is off, and the intents section when there are none", () => {
  const text = systemMessage({ agent: { ...AGENT, enabledHumanTransfer: false }, intents: [] });
  assert.ok(!text.includes("transferir"));
  assert.ok(!text.includes("Ações disponíveis"));
  assert.equal(
    text,
    "Você é Ana, atendente da Pizzaria Roma.\n\nContexto de treinamento:\nAbrimos das 18h às 23h.",
  );
});

Deno.test("systemMessage() does not repeat a training context the generated prompt already carries", () => {
  const generated = renderSystemPrompt("SUPORTE", {
    name: "Ana",
    trainingContext: "Abrimos das 18h às 23h.",
  });
  const text = systemMessage({ agent: { ...AGENT, systemPrompt: generated }, intents: [] });
  assert.equal(text.split("Abrimos das 18h às 23h.").length - 1, 1);
  const edited = systemMessage({
    agent: { ...AGENT, systemPrompt: generated, trainingContext: "Fechamos às 22h." },
    intents: [],
  });
  // An edited training context is sent beside the prompt's old one: the current text is what counts.
  assert.ok(edited.startsWith(generated));
  assert.ok(edited.includes("\n\nContexto de treinamento:\nFechamos às 22h.\n\n"));
  assert.equal(
    systemMessage({ agent: { ...AGENT, trainingContext: "  " }, intents: [] }).includes("Contexto"),
    false,
  );
});

Deno.test("systemMessage() tells the model the customer's name and the clock's date when given", () => {
  const text = systemMessage({
    agent: AGENT,
    intents: [],
    contactName: "Sheena",
    now: new Date("2026-11-22T10:00:00.000Z"),
  });
  assert.ok(text.endsWith("Nome do cliente: Sheena\nData e hora atuais (UTC): 2026-11-22T10:00:00.000Z"));
});

Deno.test("buildReplyPrompt() sends the history, then the window's customer messages as one user message, with the agent's model and temperature", () => {
  const prompt = buildReplyPrompt({
    agent: AGENT,
    intents: [ORDER],
    history: [
      customer("Oi"),
      ai("Olá! Como posso ajudar?"),
      { sender: "SYSTEM", content: "Conversa transferida" },
      { sender: "HUMAN", content: "Aqui é o João." },
    ],
    pending: [customer("Quero uma pizza"), customer("de calabresa"), customer("[audio]")],
  });
  assert.equal(prompt.model, "gpt-4o-mini");
  assert.equal(prompt.temperature, 0.3);
  assert.deepEqual(prompt.messages.slice(1), [
    { role: "user", content: "Oi" },
    { role: "assistant", content: "Olá! Como posso ajudar?\n[Atendente humano] Aqui é o João." },
    { role: "user", content: "Quero uma pizza\nde calabresa\n[audio]" },
  ]);
  assert.equal(prompt.messages[0].role, "system");
  assert.equal(prompt.messages[0].content, systemMessage({ agent: AGENT, intents: [ORDER] }));
  assert.equal(
    "temperature" in
      buildReplyPrompt({ agent: { ...AGENT, temperature: null }, intents: [], history: [], pending: [] }),
    false,
  );
});

Deno.test("buildReplyPrompt() keeps the newest 30 history messages", () => {
  const history = Array.from({ length: 50 }, (_, i) => (i % 2 ? ai(`a${i}`) : customer(`c${i}`)));
  const prompt = buildReplyPrompt({ agent: AGENT, intents: [], history, pending: [customer("agora")] });
  const sent = prompt.messages.slice(1, -1);
  assert.equal(HISTORY_MAX_MESSAGES, 30);
  assert.equal(sent.length, 30);
  assert.equal(sent[0].content, "c20");
  assert.equal(sent.at(-1)!.content, "a49");
  assert.deepEqual(prompt.messages.at(-1), { role: "user", content: "agora" });
});

Deno.test("buildReplyPrompt() keeps the newest history within the character bound, dropping whole messages", () => {
  const big = (i: number) => (i % 2 ? ai : customer)(`${i}`.padEnd(3000, "x"));
  const history = Array.from({ length: 6 }, (_, i) => big(i));
  const prompt = buildReplyPrompt({ agent: AGENT, intents: [], history, pending: [] });
  assert.equal(HISTORY_MAX_CHARS, 12_000);
  const sent = prompt.messages.slice(1);
  assert.deepEqual(sent.map((m) => m.content.slice(0, 1)), ["2", "3", "4", "5"]);
  const small = buildReplyPrompt({
    agent: AGENT,
    intents: [],
    history,
    pending: [],
    limits: { historyChars: 5999 },
  });
  assert.deepEqual(small.messages.slice(1).map((m) => m.content.slice(0, 1)), ["5"]);
});

Deno.test("buildReplyPrompt() keeps the newest part of a flood of customer messages, cut at a character", () => {
  const pending = [customer("a".repeat(9000)), customer("😀 fim")];
  const prompt = buildReplyPrompt({
    agent: AGENT,
    intents: [],
    history: [],
    pending,
    limits: { pendingChars: 100 },
  });
  const last = prompt.messages.at(-1)!;
  assert.equal(last.role, "user");
  assert.equal(last.content.length, 100);
  assert.ok(last.content.startsWith("…") && last.content.endsWith("\n😀 fim"));
  const cut = buildReplyPrompt({
    agent: AGENT,
    intents: [],
    history: [],
    pending: [customer("a😀b")],
    limits: { pendingChars: 3 },
  });
  assert.equal(cut.messages.at(-1)!.content, "…b");
});
