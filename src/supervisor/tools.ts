/**
 * The supervisor's tools: seven inspections that run at once
 * and `propose_change`, which only stores a PendingApproval (src/approvals/propose.ts). Every call
 * of the model is parsed with zod; an unknown tool, arguments that do not parse or fit, or an id
 * of another workspace (404, as everywhere) come back to the model as `{"error": ...}` and never
 * reach a write. Arguments are bounded in size and nesting before they are parsed.
 *
 * Inspections read through the same read capabilities as REST, in the caller's workspace, but
 * presented as a VIEWER sees them: webhook header values and credential-like URL values are masked
 * before anything is sent to the model's provider.
 */
import { z } from "zod";
import type { ActorContext } from "../context.ts";
import type { ToolCall, ToolSpec } from "../llm/client.ts";
import { checkIds, defineRead, type ReadCapability } from "../shared/capability.ts";
import { AppError } from "../shared/errors.ts";
import { readOne, viewOfRead } from "../reads/plan.ts";
import type { PageRequest } from "../reads/selection.ts";
import { restRead, restSelection } from "../reads/rest.ts";
import * as agentReads from "../agents/capabilities.ts";
import * as intentReads from "../intents/capabilities.ts";
import * as webhookReads from "../webhooks/capabilities.ts";
import * as conversationReads from "../conversations/capabilities.ts";
import { ConversationStatus, conversationView } from "../conversations/views.ts";
import { proposeChange, proposeChangeParameters } from "../approvals/propose.ts";
import { jsonDepth, storableJson } from "../shared/storable.ts";

/** A tool's answer to the model, and the approval it created (propose_change). */
export interface ToolOutcome {
  /** JSON text sent back as the tool message. */
  content: string;
  /** Set when the call was refused; the same text is in `content` as `{"error": ...}`. */
  error?: string;
  approval?: Record<string, unknown>;
}

/** Tool results longer than this are cut (the model's context is finite; a list can be long). */
const MAX_RESULT_CHARS = 20_000;
/**
 * The model's arguments are refused past these, before JSON.parse: the largest real call (a
 * proposal with a 100 000-character prompt) is far below the size and a few levels deep.
 */
export const MAX_ARGUMENT_CHARS = 256 * 1024;
export const MAX_ARGUMENT_DEPTH = 32;

const id = z.string().min(1).max(64);
const noArgs = z.strictObject({});
const agentArgs = z.strictObject({ agentId: id.describe("The agent's id.") });

/** The workspace's conversations, for list_recent_conversations without an agent (never a route). */
const workspaceConversations: ReadCapability = defineRead({
  name: "supervisorRecentConversations",
  summary: "The workspace's conversations (internal to the supervisor).",
  action: "workspace:read",
  params: {},
  from: { view: conversationView },
  filters: { status: ConversationStatus },
});

interface Inspection<S extends z.ZodType> {
  description: string;
  args: S;
  run(ctx: ActorContext, args: z.output<S>): Promise<unknown>;
}

const inspection = <S extends z.ZodType>(t: Inspection<S>) => t as Inspection<z.ZodType>;

const INSPECTIONS: Record<string, Inspection<z.ZodType>> = {
  list_agents: inspection({
    description: "All agents of the workspace: id, name, status, template, model and counts.",
    args: noArgs,
    run: (ctx) => rows(ctx, agentReads.agents, {}, { first: 500 }),
  }),
  get_agent: inspection({
    description: "One agent in full: system prompt, training context, behaviour flags.",
    args: agentArgs,
    run: async (ctx, { agentId }) => JSON.parse(await restRead(ctx, agentReads.agent, { agentId }, {})),
  }),
  find_agent_by_name: inspection({
    description: "Agents whose name contains the text (case-insensitive), in full; at most 5.",
    args: z.strictObject({ name: z.string().trim().min(1).max(200) }),
    run: async (ctx, { name }) => {
      const found = await ctx.db.agent.findMany({
        where: { workspaceId: ctx.actor.workspaceId, name: { contains: name, mode: "insensitive" } },
        select: { id: true },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        take: 5,
      });
      const agents = [];
      for (const { id: agentId } of found) {
        agents.push(JSON.parse(await restRead(ctx, agentReads.agent, { agentId }, {})));
      }
      return agents;
    },
  }),
  list_intents: inspection({
    description: "The agent's intents with their required fields and webhook.",
    args: agentArgs,
    run: (ctx, { agentId }) => rows(ctx, intentReads.intents, { agentId }, { first: 500 }),
  }),
  list_webhooks: inspection({
    description: "The agent's event webhooks (header values masked).",
    args: agentArgs,
    run: (ctx, { agentId }) => rows(ctx, webhookReads.webhooks, { agentId }, { first: 500 }),
  }),
  list_recent_conversations: inspection({
    description:
      "The most recent conversations, newest first: of one agent or of the whole workspace, optionally in one status.",
    args: z.strictObject({
      agentId: id.optional().describe("Only this agent's conversations."),
      status: ConversationStatus.schema.optional(),
      limit: z.int().min(1).max(50).default(10),
    }),
    run: async (ctx, { agentId, status, limit }) => {
      const where = status ? { status } : undefined;
      if (agentId) return rows(ctx, conversationReads.conversations, { agentId }, { first: limit, where });
      // The workspace's list is oldest first: its last page, turned around.
      return (await rows(ctx, workspaceConversations, {}, { last: limit, where })).reverse();
    },
  }),
  get_conversation_messages: inspection({
    description: "The last messages of one conversation, oldest first.",
    args: z.strictObject({
      conversationId: id,
      limit: z.int().min(1).max(200).default(50),
    }),
    run: (ctx, { conversationId, limit }) =>
      rows(ctx, conversationReads.conversationMessages, { conversationId }, { last: limit }),
  }),
};

const PROPOSE = "propose_change";

/** The tools offered to the model. */
export const TOOL_SPECS: readonly ToolSpec[] = [
  ...Object.entries(INSPECTIONS).map(([name, t]) => ({
    name,
    description: t.description,
    parameters: jsonSchema(t.args),
  })),
  {
    name: PROPOSE,
    description:
      "Proposes one change (prompt, training, active/paused, intents, webhooks) as a pending approval. Nothing changes until an OWNER or MANAGER approves it.",
    parameters: proposeChangeParameters,
  },
];

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}

/**
 * Runs one call of the model with the caller's rights. Refusals (unknown tool, bad JSON, arguments
 * that do not fit, 4xx of a read or of the proposal) are answered to the model, never thrown.
 */
export async function runTool(
  ctx: ActorContext,
  call: ToolCall,
  origin: { supervisorMessageId: string | null },
): Promise<ToolOutcome> {
  const isPropose = call.name === PROPOSE;
  const tool = Object.hasOwn(INSPECTIONS, call.name) ? INSPECTIONS[call.name] : undefined;
  if (!tool && !isPropose) {
    return refused(
      `Unknown tool "${call.name}". The tools are: ${TOOL_SPECS.map((t) => t.name).join(", ")}.`,
    );
  }
  const read = readArguments(call.arguments);
  if (!read.ok) return refused(read.error);
  const raw = read.value;
  try {
    if (isPropose) {
      const approval = await proposeChange(ctx, raw, origin);
      // The model hears that it waits, not the before/after (which may hold opened header values).
      const { id, tool, status, expiresAt } = approval;
      return {
        content: JSON.stringify({
          approval: { id, tool, status, expiresAt },
          note: "Nothing has changed yet: an OWNER or MANAGER must approve this.",
        }),
        approval: approval as unknown as Record<string, unknown>,
      };
    }
    const parsed = tool!.args.safeParse(raw);
    if (!parsed.success) {
      return refused(`Invalid arguments: ${parsed.error.issues.map(describeIssue).join("; ")}`);
    }
    return { content: cut(JSON.stringify(await tool!.run(asViewer(ctx), parsed.data))) };
  } catch (error) {
    // 4xx: the caller's (here the model's) mistake, told to it. Anything else is a bug, logged; the
    // model hears that the call failed, so whatever it sent, the turn still ends with an answer.
    if (error instanceof AppError && error.status < 500) return refused(error.message);
    ctx.logger.error("supervisor tool failed", { tool: call.name, error });
    return refused("The tool failed on our side; it was not run.");
  }
}

export type ReadArguments =
  | { ok: true; value: unknown }
  /** `bounds`: over MAX_ARGUMENT_CHARS or MAX_ARGUMENT_DEPTH (not even kept as text). */
  | { ok: false; error: string; bounds: boolean };

/**
 * The model's argument text as a value: size and nesting checked before parsing, then parsed,
 * with what PostgreSQL cannot store (NUL, unpaired surrogates) replaced in every string and key.
 */
export function readArguments(text: string): ReadArguments {
  if (text.length > MAX_ARGUMENT_CHARS) {
    return {
      ok: false,
      error: `The arguments are longer than ${MAX_ARGUMENT_CHARS} characters.`,
      bounds: true,
    };
  }
  if (jsonDepth(text) > MAX_ARGUMENT_DEPTH) {
    return {
      ok: false,
      error: `The arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels.`,
      bounds: true,
    };
  }
  try {
    return { ok: true, value: text.trim() === "" ? {} : storableJson(JSON.parse(text)) };
  } catch {
    return { ok: false, error: "The arguments are not valid JSON.", bounds: false };
  }
}

/** The caller's workspace, presented as a VIEWER sees it (no header values for the model's provider). */
const asViewer = (ctx: ActorContext): ActorContext => ({ ...ctx, actor: { ...ctx.actor, role: "VIEWER" } });

/** A refusal as the model receives it. */
export function refused(message: string): ToolOutcome {
  return { content: JSON.stringify({ error: message }), error: message };
}

const describeIssue = (i: z.core.$ZodIssue) =>
  `${i.path.length ? i.path.join(".") : "(arguments)"}: ${i.message}`;

function cut(text: string): string {
  if (text.length <= MAX_RESULT_CHARS) return text;
  return JSON.stringify({ truncated: true, partialJson: text.slice(0, MAX_RESULT_CHARS) });
}

/** The rows of a page of `read` as REST shows them (masking as the actor's role says). */
async function rows(
  ctx: ActorContext,
  read: ReadCapability,
  params: Record<string, unknown>,
  page: PageRequest,
): Promise<unknown[]> {
  const node = restSelection(viewOfRead(read).view, read.rest?.fields);
  const json = await readOne(ctx, {
    key: "v",
    read,
    params: checkIds(params, read.params),
    page,
    shape: { kind: "rest", node },
  });
  return (JSON.parse(json) as { data: unknown[] }).data;
}
