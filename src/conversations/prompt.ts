/**
 * The model's input for one reply (docs/behaviour.md "Replies"): one
 * system message (the agent's system prompt, its training context, its intents with their tag form,
 * the transfer tag when `enabledHumanTransfer` is on), then the conversation history, bounded, then
 * the customer messages of the grouping window as one user message; the agent's model and
 * temperature. Pure: the caller loads the rows, picks the intents that may fire for the window
 * (intentsForTypes) and hands the result to the OpenAI-compatible client as `messages`.
 * The added instructions are Portuguese, like the SUPORTE template and the `<transferir>` tag.
 */
import { TRANSFER_TAG } from "../intents/tag.ts";
import type { Agent } from "../generated/prisma/client.ts";

/** History sent with each reply: the last 30 messages (the supervisor's bound too) ... */
export const HISTORY_MAX_MESSAGES = 30;
/** ... and at most this many characters of them (about 3 000 tokens), oldest dropped first. */
export const HISTORY_MAX_CHARS = 12_000;
/** The window's own customer messages: the newest this many characters (a flood is cut from its start). */
export const PENDING_MAX_CHARS = 8_000;

/** The agent's columns the prompt is made of. */
export type PromptAgent = Pick<
  Agent,
  "name" | "systemPrompt" | "trainingContext" | "model" | "temperature" | "enabledHumanTransfer"
>;

export interface PromptIntent {
  name: string;
  tag: string;
  description: string;
  requiredFields: ReadonlyArray<{ name: string; type: string; description: string }>;
}

/** A stored message; `sender` as the Message view names it. */
export interface PromptMessage {
  sender: "CUSTOMER" | "AI" | "HUMAN" | "SYSTEM";
  content: string;
  /** An image the model sees after the message's text (a data: URL), when the agent has vision. */
  image?: { url: string };
}

/** A part of a user message with images: its text and its images, in order. */
export type ContentPart = { type: "text"; text: string } | { type: "image"; url: string };

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  /** The text (of a message with images, its text parts alone). */
  content: string;
  /** A user message with images: what the model gets instead of `content`. */
  parts?: ContentPart[];
}

export interface ReplyPrompt {
  model: string;
  /** Absent when the agent has none (the endpoint's default applies). */
  temperature?: number;
  messages: ChatMessage[];
}

export interface ReplyPromptInput {
  agent: PromptAgent;
  /** The intents that may fire for this window's message types. */
  intents: readonly PromptIntent[];
  /** The conversation before the window, oldest first (already answered or sent). */
  history: readonly PromptMessage[];
  /** The customer messages of the window, oldest first: answered together by this reply. */
  pending: readonly PromptMessage[];
  contactName?: string | null;
  /** The clock's now: the model is told the date and time (UTC). */
  now?: Date;
  limits?: { historyMessages?: number; historyChars?: number; pendingChars?: number };
}

/** The tag form the prompt teaches the model: `<intent-name field="<value>" .../>`. */
export function tagForm(intent: Pick<PromptIntent, "tag" | "requiredFields">): string {
  return `<${intent.tag}${intent.requiredFields.map((f) => ` ${f.name}="<value>"`).join("")}/>`;
}

function intentSection(intents: readonly PromptIntent[]): string | null {
  if (!intents.length) return null;
  const items = intents.map((intent) => {
    const lines = [`- ${intent.name}: ${intent.description}`, `  Tag: ${tagForm(intent)}`];
    for (const f of intent.requiredFields) {
      lines.push(`  ${f.name} (${f.type})${f.description ? `: ${f.description}` : ""}`);
    }
    return lines.join("\n");
  });
  return [
    "Ações disponíveis:",
    "Quando uma destas ações se aplicar, escreva a tag dela na resposta, exatamente na forma indicada, " +
    "com um atributo por campo obrigatório preenchido com o valor informado pelo cliente. " +
    "Se faltar algum campo, pergunte ao cliente antes de escrever a tag. " +
    "A tag será substituída pelo resultado da ação antes de a mensagem chegar ao cliente.",
    ...items,
  ].join("\n");
}

const TRANSFER_SECTION = [
  "Transferência para um atendente humano:",
  `Se o cliente pedir para falar com uma pessoa, ou se você não puder resolver, escreva <${TRANSFER_TAG} motivo="<motivo>"/> ` +
  "na resposta, com um resumo curto do motivo. A conversa passa para um atendente humano.",
].join("\n");

/** The one system message: prompt, training context (unless the prompt already holds it), intents, transfer. */
export function systemMessage(
  input: Pick<ReplyPromptInput, "agent" | "intents" | "contactName" | "now">,
): string {
  const { agent } = input;
  const training = agent.trainingContext?.trim();
  // Prompts generated from the template already carry the training context of their creation.
  const trainingSection = training && !agent.systemPrompt.includes(training)
    ? `Contexto de treinamento:\n${training}`
    : null;
  const facts = [
    input.contactName ? `Nome do cliente: ${input.contactName}` : null,
    input.now ? `Data e hora atuais (UTC): ${input.now.toISOString()}` : null,
  ].filter((l) => l !== null);
  return [
    agent.systemPrompt.trim(),
    trainingSection,
    intentSection(input.intents),
    agent.enabledHumanTransfer ? TRANSFER_SECTION : null,
    facts.length ? facts.join("\n") : null,
  ].filter((s) => s).join("\n\n");
}

/** A stored message as the model sees it; SYSTEM notes (transfers, closes) are not conversation. */
function asChat(m: PromptMessage): ChatMessage | null {
  switch (m.sender) {
    case "CUSTOMER":
      return { role: "user", content: m.content };
    case "AI":
      return { role: "assistant", content: m.content };
    case "HUMAN":
      // What a human attendant said was said by the business, but the model should know it was not itself.
      return { role: "assistant", content: `[Atendente humano] ${m.content}` };
    default:
      return null;
  }
}

/** The newest messages within both bounds, oldest first. */
function bounded(messages: ChatMessage[], maxMessages: number, maxChars: number): ChatMessage[] {
  const kept: ChatMessage[] = [];
  let chars = 0;
  for (let i = messages.length - 1; i >= 0 && kept.length < maxMessages; i--) {
    chars += messages[i].content.length;
    if (chars > maxChars) break;
    kept.push(messages[i]);
  }
  return kept.reverse();
}

/** Consecutive messages of one role as one (some OpenAI-compatible servers want turns to alternate). */
function merged(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const last = out.at(-1);
    if (last && last.role === m.role) {
      if (last.parts || m.parts) {
        last.parts = joinedParts([
          ...(last.parts ?? [{ type: "text", text: last.content }]),
          ...(m.parts ?? [{ type: "text", text: m.content }]),
        ]);
      }
      last.content += `\n${m.content}`;
    } else out.push({ ...m });
  }
  return out;
}

/** Adjacent text parts as one (lines joined). */
function joinedParts(parts: ContentPart[]): ContentPart[] {
  const out: ContentPart[] = [];
  for (const p of parts) {
    const last = out.at(-1);
    if (p.type === "text" && last?.type === "text") last.text += `\n${p.text}`;
    else out.push({ ...p });
  }
  return out;
}

/** The window's messages as parts: each one's text, then its image when it has one. */
function pendingParts(pending: readonly PromptMessage[]): ContentPart[] {
  return joinedParts(pending.flatMap((m): ContentPart[] => [
    ...(m.content ? [{ type: "text" as const, text: m.content }] : []),
    ...(m.image ? [{ type: "image" as const, url: m.image.url }] : []),
  ]));
}

/** The window's customer messages as one text, newest kept when over `max` characters. */
function pendingText(pending: readonly PromptMessage[], max: number): string {
  const text = pending.map((m) => m.content).join("\n");
  if (text.length <= max) return text;
  // Cut at a code point boundary, marking the cut.
  let start = text.length - (max - 1);
  if (/[\uDC00-\uDFFF]/.test(text[start] ?? "")) start++;
  return `…${text.slice(start)}`;
}

/** The model call's `model`, `temperature` and `messages` for one reply. */
export function buildReplyPrompt(input: ReplyPromptInput): ReplyPrompt {
  const limits = input.limits ?? {};
  const history = bounded(
    input.history.map(asChat).filter((m) => m !== null),
    limits.historyMessages ?? HISTORY_MAX_MESSAGES,
    limits.historyChars ?? HISTORY_MAX_CHARS,
  );
  const latest = pendingText(input.pending, limits.pendingChars ?? PENDING_MAX_CHARS);
  // Images go as parts of the window's user message, after the text of their own message.
  const parts = input.pending.some((m) => m.image) ? pendingParts(input.pending) : null;
  const messages = merged([
    { role: "system", content: systemMessage(input) },
    ...history,
    ...(latest || parts ? [{ role: "user" as const, content: latest, ...(parts ? { parts } : {}) }] : []),
  ]);
  const prompt: ReplyPrompt = { model: input.agent.model, messages };
  if (input.agent.temperature !== null) prompt.temperature = input.agent.temperature;
  return prompt;
}
