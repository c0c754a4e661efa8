/** Agents and their prompt versions (spec sections 2-4, decisions.md "Agents"). */
import type { ActorContext } from "../context.ts";
import type { Agent, Prisma } from "../generated/prisma/client.ts";
import { authorize } from "../auth/permissions.ts";
import { notFound } from "../shared/errors.ts";
import { assertId, parseInput } from "../shared/validation.ts";
import { type Page, pageArgs, parsePage, toPage } from "../shared/pagination.ts";
import type { GraphQuery } from "../shared/graph_query.ts";
import { renderSystemPrompt } from "./template.ts";
import { agentListPage } from "./counts.ts";
import {
  createAgentSchema,
  FLAG_DEFAULTS,
  replaceAgentSchema,
  revertPromptSchema,
  setStatusSchema,
  updatePromptSchema,
} from "./schemas.ts";

/** Every stored field of an agent, as GET /api/agents/{id} returns it. */
export const agentSelect = {
  id: true,
  name: true,
  status: true,
  template: true,
  model: true,
  jobName: true,
  jobSite: true,
  jobDescription: true,
  trainingContext: true,
  systemPrompt: true,
  temperature: true,
  enabledHumanTransfer: true,
  enabledReminder: true,
  splitMessages: true,
  enabledEmoji: true,
  signMessages: true,
  messageGroupingTime: true,
  maxDailyMessages: true,
  autoCloseMinutes: true,
  createdAt: true,
  updatedAt: true,
} as const satisfies Prisma.AgentSelect;
export type AgentView = Prisma.AgentGetPayload<{ select: typeof agentSelect }>;

export interface AgentListItem {
  id: string;
  name: string;
  status: string;
  template: string;
  model: string;
  _count: { conversations: number; intents: number; numbers: number };
}

/** Loads an agent of the actor's workspace or throws 404 (also for other workspaces' ids). */
export async function findAgentOr404<S extends Prisma.AgentSelect>(
  ctx: ActorContext,
  agentId: string,
  select: S,
): Promise<Prisma.AgentGetPayload<{ select: S }>> {
  const agent = await ctx.db.agent.findFirst({
    where: { id: assertId(agentId, "Agent"), workspaceId: ctx.actor.workspaceId },
    select,
  });
  if (!agent) throw notFound("Agent");
  return agent as Prisma.AgentGetPayload<{ select: S }>;
}

/** GET /api/agents (workspace:read): the spec's list fields with `_count`, one page. */
export async function listAgents(ctx: ActorContext, query: unknown): Promise<Page<AgentListItem>> {
  authorize(ctx.actor, "workspace:read");
  const page = parsePage(query);
  const rows = await agentListPage(ctx.db, {
    workspaceId: ctx.actor.workspaceId,
    take: page.limit + 1,
    after: page.after,
  });
  return toPage(rows, page, ({ createdAt: _, ...item }) => item);
}

/** GET /api/agents/{id} (workspace:read): every field. */
export function getAgent(ctx: ActorContext, agentId: string): Promise<AgentView> {
  authorize(ctx.actor, "workspace:read");
  return findAgentOr404(ctx, agentId, agentSelect);
}

/** POST /api/agents (agent:write): ACTIVE, with a systemPrompt generated from the template. */
export async function createAgent(ctx: ActorContext, input: unknown): Promise<AgentView> {
  authorize(ctx.actor, "agent:write");
  const data = parseInput(createAgentSchema, input);
  const template = data.template ?? "SUPORTE";
  return await ctx.db.agent.create({
    data: {
      ...data,
      template,
      model: data.model ?? ctx.config.openai.defaultModel,
      workspaceId: ctx.actor.workspaceId,
      systemPrompt: renderSystemPrompt(template, data),
    },
    select: agentSelect,
  });
}

/**
 * PUT /api/agents/{id} (agent:write): whole replacement. Omitted optional fields become null,
 * omitted flags return to their defaults, template and model to theirs; read-only fields are
 * ignored.
 */
export async function replaceAgent(ctx: ActorContext, agentId: string, input: unknown): Promise<AgentView> {
  authorize(ctx.actor, "agent:write");
  const data = parseInput(replaceAgentSchema, input);
  await findAgentOr404(ctx, agentId, { id: true });
  return await ctx.db.agent.update({
    where: { id: agentId },
    data: {
      name: data.name,
      template: data.template ?? "SUPORTE",
      model: data.model ?? ctx.config.openai.defaultModel,
      jobName: data.jobName ?? null,
      jobSite: data.jobSite ?? null,
      jobDescription: data.jobDescription ?? null,
      trainingContext: data.trainingContext ?? null,
      temperature: data.temperature ?? null,
      enabledHumanTransfer: data.enabledHumanTransfer ?? FLAG_DEFAULTS.enabledHumanTransfer,
      enabledReminder: data.enabledReminder ?? FLAG_DEFAULTS.enabledReminder,
      splitMessages: data.splitMessages ?? FLAG_DEFAULTS.splitMessages,
      enabledEmoji: data.enabledEmoji ?? FLAG_DEFAULTS.enabledEmoji,
      signMessages: data.signMessages ?? FLAG_DEFAULTS.signMessages,
      messageGroupingTime: data.messageGroupingTime ?? FLAG_DEFAULTS.messageGroupingTime,
      maxDailyMessages: data.maxDailyMessages ?? FLAG_DEFAULTS.maxDailyMessages,
      autoCloseMinutes: data.autoCloseMinutes ?? FLAG_DEFAULTS.autoCloseMinutes,
    },
    select: agentSelect,
  });
}

/** PATCH /api/agents/{id}/status (agent:write). */
export async function setAgentStatus(ctx: ActorContext, agentId: string, input: unknown): Promise<AgentView> {
  authorize(ctx.actor, "agent:write");
  const { status } = parseInput(setStatusSchema, input);
  await findAgentOr404(ctx, agentId, { id: true });
  return await ctx.db.agent.update({ where: { id: agentId }, data: { status }, select: agentSelect });
}

async function writePrompt(
  ctx: ActorContext,
  agentId: string,
  change: { systemPrompt: string; rationale: string; revertedFrom?: string },
): Promise<AgentView> {
  return await ctx.db.$transaction(async (tx) => {
    // The agent row first: inserting the version (its foreign key) and then updating the agent
    // would upgrade a lock a concurrent DELETE may be waiting on, a deadlock. Gone: 404 (P2025).
    const agent = await tx.agent.update({
      where: { id: agentId },
      data: { systemPrompt: change.systemPrompt },
      select: agentSelect,
    });
    await tx.promptVersion.create({
      data: {
        agentId,
        systemPrompt: change.systemPrompt,
        rationale: change.rationale,
        revertedFrom: change.revertedFrom,
        authorUserId: ctx.actor.userId,
        authorLabel: ctx.actor.label,
      },
    });
    return agent;
  });
}

/** PUT /api/agents/{id}/prompt (agent:write): sets the prompt and records a PromptVersion. */
export async function updatePrompt(ctx: ActorContext, agentId: string, input: unknown): Promise<AgentView> {
  authorize(ctx.actor, "agent:write");
  const change = parseInput(updatePromptSchema, input);
  await findAgentOr404(ctx, agentId, { id: true });
  return writePrompt(ctx, agentId, change);
}

export const promptVersionSelect = {
  id: true,
  agentId: true,
  systemPrompt: true,
  rationale: true,
  authorUserId: true,
  authorLabel: true,
  revertedFrom: true,
  createdAt: true,
} as const satisfies Prisma.PromptVersionSelect;
export type PromptVersionView = Prisma.PromptVersionGetPayload<{ select: typeof promptVersionSelect }>;

/** GET /api/agents/{id}/prompt-versions (workspace:read): newest first. */
export async function listPromptVersions(
  ctx: ActorContext,
  agentId: string,
  query: unknown,
): Promise<Page<PromptVersionView>> {
  authorize(ctx.actor, "workspace:read");
  const page = parsePage(query);
  await findAgentOr404(ctx, agentId, { id: true });
  const rows = await ctx.db.promptVersion.findMany({
    ...pageArgs(page, "desc", { agentId }),
    select: promptVersionSelect,
  });
  return toPage(rows, page);
}

/** POST /api/agents/{id}/prompt-versions/{versionId}/revert (agent:write): itself a new version. */
export async function revertPrompt(
  ctx: ActorContext,
  agentId: string,
  versionId: string,
  input?: unknown,
): Promise<AgentView> {
  authorize(ctx.actor, "agent:write");
  const body = parseInput(revertPromptSchema, input ?? undefined);
  await findAgentOr404(ctx, agentId, { id: true });
  const version = await ctx.db.promptVersion.findFirst({
    where: { id: assertId(versionId, "Prompt version"), agentId },
    select: { id: true, systemPrompt: true },
  });
  if (!version) throw notFound("Prompt version");
  return writePrompt(ctx, agentId, {
    systemPrompt: version.systemPrompt,
    rationale: body?.rationale || `Reverted to version ${version.id}`,
    revertedFrom: version.id,
  });
}

/** DELETE /api/agents/{id} (agent:write): hard delete, cascading as spec section 4 rule 2 says. */
export async function deleteAgent(ctx: ActorContext, agentId: string): Promise<void> {
  authorize(ctx.actor, "agent:write");
  const { count } = await ctx.db.agent.deleteMany({
    where: { id: assertId(agentId, "Agent"), workspaceId: ctx.actor.workspaceId },
  });
  if (!count) throw notFound("Agent");
}

// ---- GraphQL reads ----

type AgentGraphQuery = GraphQuery<Prisma.AgentSelect, Prisma.AgentInclude, Prisma.AgentWhereUniqueInput>;

/** GraphQL `agents` (workspace:read): the workspace's agents with the nested selection of `query`. */
export async function findAgentsForGraph(ctx: ActorContext, query: AgentGraphQuery) {
  authorize(ctx.actor, "workspace:read");
  const listPage = asListPage(query);
  // The plain list (the fields of GET /api/agents) is the API's hottest read: it is served by the
  // same single statement as REST. Anything more goes through Prisma with the nested selection.
  if (listPage) {
    const rows = await agentListPage(ctx.db, { workspaceId: ctx.actor.workspaceId, ...listPage });
    // Each row holds every column `query` selects (asListPage checked), which is all Pothos reads.
    return rows as unknown as Agent[];
  }
  return await ctx.db.agent.findMany({
    ...query,
    where: { workspaceId: ctx.actor.workspaceId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

const LIST_COLUMNS = new Set(["id", "name", "status", "template", "model"]);

/** A forward page that asks only for the list columns, as agentListPage's arguments; else null. */
function asListPage(query: AgentGraphQuery): { take: number; afterId?: string } | null {
  const { select, include, take, skip = 0, cursor } = query;
  if (include || !select || !take || take < 0) return null;
  if (!Object.keys(select).every((k) => LIST_COLUMNS.has(k))) return null;
  if (cursor?.id && skip === 1) return { take, afterId: cursor.id };
  return !cursor && skip === 0 ? { take } : null;
}

/** GraphQL `agent(id)` (workspace:read): one agent with the nested selection of `query`; 404 otherwise. */
export async function findAgentForGraph(ctx: ActorContext, agentId: string, query: AgentGraphQuery) {
  authorize(ctx.actor, "workspace:read");
  const agent = await ctx.db.agent.findFirst({
    ...query,
    where: { id: assertId(agentId, "Agent"), workspaceId: ctx.actor.workspaceId },
  });
  if (!agent) throw notFound("Agent");
  return agent;
}
