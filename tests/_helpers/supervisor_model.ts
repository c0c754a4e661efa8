/**
 * The supervisor's stand-in model: the OpenAI-compatible server of ./conversations.ts answering from
 * a script of replies. A turn's question (the person's last message) picks the first entry whose
 * word it contains; the entry's rounds of tool calls are answered one model call each, each made
 * from the tool answers heard so far, and then its reply. WALK_THROUGH is the script of the
 * README's supervisor walk-through, which the REST and the console tests of it share.
 */
import {
  type ModelAnswer,
  type ModelCall,
  type ScriptedToolCall,
  startModelServer,
} from "./conversations.ts";

/** The tool answers a call carried, by tool call id, parsed (a later one of an id wins). */
// deno-lint-ignore no-explicit-any
export type Heard = Map<string, any>;

export function toolResults(call: ModelCall): Heard {
  const out = new Map();
  for (const m of call.body.messages) if (m.role === "tool") out.set(m.tool_call_id, JSON.parse(m.content));
  return out;
}

export interface ScriptedTurn {
  /** A word of the question that picks this entry ("" for any question). */
  asked: string;
  /** The rounds of tool calls, each made from the tool answers heard so far. */
  rounds: Array<(heard: Heard) => ScriptedToolCall[]>;
  reply: string;
}

/** The model's answer to each call by the script; a question no entry picks gets `otherwise`. */
export function supervisorScript(turns: ScriptedTurn[], otherwise = "?"): (call: ModelCall) => ModelAnswer {
  return (call) => {
    const messages: Array<{ role: string; content: string; tool_calls?: unknown }> = call.body.messages;
    const asked = messages.findLastIndex((m) => m.role === "user");
    const turn = turns.find((t) => messages[asked].content.includes(t.asked));
    if (!turn) return { content: otherwise };
    // Each round so far is an assistant message with tool calls after the question.
    const round = messages.slice(asked).filter((m) => m.role === "assistant" && m.tool_calls).length;
    return round < turn.rounds.length
      ? { content: "", toolCalls: turn.rounds[round](toolResults(call)) }
      : { content: turn.reply };
  };
}

/** The prompt the walk-through asks for: one line, so a console diff shows it as one added line. */
export const FORMAL_PROMPT = "Você é Ana. Trate o cliente por senhor ou senhora, com linguagem formal.";
export const FORMAL_RATIONALE = "The manager asked for a more formal tone.";
export const PROPOSED_REPLY = "I proposed it; it waits for your approval.";

/** Finds the agent named Ana, as a model does before it names the agent's id. */
const findAna =
  (): ScriptedToolCall[] => [{ id: "find", name: "find_agent_by_name", arguments: { name: "ana" } }];
const ana = (heard: Heard): string => heard.get("find")[0].id;

/**
 * The walk-through: "... formal ..." proposes Ana's prompt FORMAL_PROMPT; "... webhook ..." proposes
 * to delete Ana's first webhook. Each first finds Ana by name; each answers PROPOSED_REPLY.
 */
export const WALK_THROUGH: ScriptedTurn[] = [
  {
    asked: "formal",
    rounds: [findAna, (heard) => [{
      id: "propose",
      name: "propose_change",
      arguments: {
        tool: "update_agent_prompt",
        target: { agentId: ana(heard) },
        change: { systemPrompt: FORMAL_PROMPT },
        rationale: FORMAL_RATIONALE,
      },
    }]],
    reply: PROPOSED_REPLY,
  },
  {
    asked: "webhook",
    rounds: [
      findAna,
      (heard) => [{ id: "hooks", name: "list_webhooks", arguments: { agentId: ana(heard) } }],
      (heard) => [{
        id: "propose",
        name: "propose_change",
        arguments: {
          tool: "delete_webhook",
          target: { webhookId: heard.get("hooks")[0].id },
          change: {},
          rationale: "Asked to remove it.",
        },
      }],
    ],
    reply: PROPOSED_REPLY,
  },
];

/** The walk-through's model server. */
export const startWalkThroughModel = () => startModelServer(supervisorScript(WALK_THROUGH, PROPOSED_REPLY));
