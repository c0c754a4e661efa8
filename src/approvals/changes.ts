/**
 * The nine changes the supervisor may propose, each declared
 * once: its target, its `change` arguments (the REST schemas of the domain it changes), the
 * `before` snapshot of what it replaces, the `after` of what it writes, and how it executes, which
 * is always through the domain's own service function, the one REST and GraphQL call.
 *
 * Snapshots are plain JSON. A webhook's header values and the credential-like query values of
 * webhook and intent URLs are sealed in the stored snapshot (the secret box, as in their tables)
 * and opened to compare and execute; signing secrets are never part of a snapshot.
 */
import { z } from "zod";
import type { ActorContext } from "../context.ts";
import type { Tx } from "../db/client.ts";
import { notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { openUrlSecrets, sealUrlSecrets } from "../shared/url_secrets.ts";
import * as agents from "../agents/service.ts";
import * as intents from "../intents/service.ts";
import * as webhooks from "../webhooks/service.ts";
import { createAgentSchema, setStatusSchema, updatePromptSchema } from "../agents/schemas.ts";
import { createIntentSchema, updateIntentSchema } from "../intents/schemas.ts";
import { createWebhookSchema, updateWebhookSchema } from "../webhooks/schemas.ts";
import type { ApprovalTool } from "./views.ts";

export type Snapshot = Record<string, unknown>;
export type TargetKey = "agentId" | "intentId" | "webhookId";

/** The target of a change as resolved in the actor's workspace. */
export interface ResolvedTarget {
  targetType: "AGENT" | "INTENT" | "WEBHOOK";
  /** The intent or webhook changed, or the agent; null for a create. */
  targetId: string | null;
  agentId: string;
  /** What the change replaces, plain (null for a create). */
  before: Snapshot | null;
}

/** What execution needs of a stored approval (snapshots plain). */
export interface Proposal {
  targetId: string | null;
  agentId: string;
  before: Snapshot | null;
  after: Snapshot | null;
  rationale: string;
}

export interface ChangeKind {
  tool: ApprovalTool;
  /** The target id the proposal names. */
  targetKey: TargetKey;
  /** The `change` arguments. */
  change: z.ZodType;
  /**
   * The target in the actor's workspace (404 otherwise), its row locked FOR UPDATE when `lock` is
   * a transaction (approve: nothing changes it between the staleness check and the execution).
   */
  resolve(ctx: ActorContext, id: string, lock?: Tx): Promise<ResolvedTarget>;
  /** What the change writes (null for a delete). */
  after(before: Snapshot | null, change: Snapshot): Snapshot | null;
  /** Executes it with the caller's context (its db may be a transaction); the id of what it changed or created. */
  execute(ctx: ActorContext, p: Proposal): Promise<string>;
}

/** The keys whose values differ between two snapshots (an update sends only those). */
function changed(before: Snapshot | null, after: Snapshot | null): Snapshot {
  const out: Snapshot = {};
  for (const [k, v] of Object.entries(after ?? {})) {
    if (!sameJson(before?.[k], v)) out[k] = v;
  }
  return out;
}

/** Deep equality of JSON values (object key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => sameJson(v, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Snapshot)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Snapshot)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameJson((a as Snapshot)[k], (b as Snapshot)[k]));
}

// ---- targets

async function agentTarget<K extends "systemPrompt" | "trainingContext" | "status">(
  ctx: ActorContext,
  agentId: string,
  field: K | null,
  lock?: Tx,
): Promise<ResolvedTarget> {
  const id = assertId(agentId, "Agent");
  type Row = { systemPrompt: string; trainingContext: string | null; status: string };
  // Locked and read in one statement (approve runs it while holding the approval's lock).
  const [agent] = lock
    ? await lock.$queryRaw<Row[]>`
        SELECT "systemPrompt", "trainingContext", status::text AS status FROM "Agent"
         WHERE id = ${id} AND "workspaceId" = ${ctx.actor.workspaceId} FOR UPDATE`
    : await ctx.db.agent.findMany({
      where: { id, workspaceId: ctx.actor.workspaceId },
      select: { systemPrompt: true, trainingContext: true, status: true },
    });
  if (!agent) throw notFound("Agent");
  return field === null
    ? { targetType: "AGENT", targetId: null, agentId: id, before: null }
    : { targetType: "AGENT", targetId: id, agentId: id, before: { [field]: agent[field] } };
}

const intentSnapshot = {
  agentId: true,
  name: true,
  description: true,
  triggerOnTypes: true,
  requiredFields: true,
  webhookUrl: true,
  webhookMethod: true,
} as const;

async function intentTarget(ctx: ActorContext, intentId: string, lock?: Tx): Promise<ResolvedTarget> {
  const id = assertId(intentId, "Intent");
  if (lock) {
    await lock.$queryRaw`SELECT i.id FROM "Intent" i JOIN "Agent" a ON a.id = i."agentId"
      WHERE i.id = ${id} AND a."workspaceId" = ${ctx.actor.workspaceId} FOR UPDATE OF i`;
  }
  const row = await (lock ?? ctx.db).intent.findFirst({
    where: { id, agent: { workspaceId: ctx.actor.workspaceId } },
    select: intentSnapshot,
  });
  if (!row) throw notFound("Intent");
  const { agentId, ...before } = row;
  before.webhookUrl = openUrlSecrets(ctx.secrets, before.webhookUrl);
  return { targetType: "INTENT", targetId: id, agentId, before: before as Snapshot };
}

async function webhookTarget(ctx: ActorContext, webhookId: string, lock?: Tx): Promise<ResolvedTarget> {
  const id = assertId(webhookId, "Webhook");
  if (lock) {
    await lock.$queryRaw`SELECT w.id FROM "EventWebhook" w JOIN "Agent" a ON a.id = w."agentId"
      WHERE w.id = ${id} AND a."workspaceId" = ${ctx.actor.workspaceId} FOR UPDATE OF w`;
  }
  const row = await (lock ?? ctx.db).eventWebhook.findFirst({
    where: { id, agent: { workspaceId: ctx.actor.workspaceId } },
    select: { agentId: true, event: true, url: true, method: true, headers: true },
  });
  if (!row) throw notFound("Webhook");
  const { agentId, headers, ...rest } = row;
  const before = {
    ...rest,
    url: openUrlSecrets(ctx.secrets, rest.url),
    headers: ctx.secrets.openValues(headers as Record<string, string>),
  };
  return { targetType: "WEBHOOK", targetId: id, agentId, before };
}

// ---- the nine kinds

const deleteArgs = z.strictObject({});

/** The agent's fields as PUT /api/agents/{id} takes them, to change one and keep the rest. */
async function wholeAgent(ctx: ActorContext, agentId: string) {
  const a = await agents.findAgentOr404(ctx, agentId);
  return {
    name: a.name,
    template: a.template,
    model: a.model,
    jobName: a.jobName,
    jobSite: a.jobSite,
    jobDescription: a.jobDescription,
    trainingContext: a.trainingContext,
    temperature: a.temperature,
    enabledHumanTransfer: a.enabledHumanTransfer,
    enabledReminder: a.enabledReminder,
    splitMessages: a.splitMessages,
    enabledEmoji: a.enabledEmoji,
    signMessages: a.signMessages,
    enabledVision: a.enabledVision,
    messageGroupingTime: a.messageGroupingTime,
    maxDailyMessages: a.maxDailyMessages,
    autoCloseMinutes: a.autoCloseMinutes,
    // Not a change the supervisor proposes, but PUT replaces the whole agent: kept as it is.
    reminderTemplate: a.reminderTemplate as z.output<typeof createAgentSchema>["reminderTemplate"],
  };
}

const KINDS: readonly ChangeKind[] = [
  {
    tool: "update_agent_prompt",
    targetKey: "agentId",
    change: z.strictObject({ systemPrompt: updatePromptSchema.shape.systemPrompt }),
    resolve: (ctx, id, lock) => agentTarget(ctx, id, "systemPrompt", lock),
    after: (_before, change) => ({ systemPrompt: change.systemPrompt }),
    execute: async (ctx, p) =>
      (await agents.updatePrompt(ctx, p.agentId, {
        systemPrompt: p.after!.systemPrompt as string,
        rationale: p.rationale,
      })).id,
  },
  {
    tool: "update_agent_training",
    targetKey: "agentId",
    change: z.strictObject({ trainingContext: createAgentSchema.shape.trainingContext.unwrap() }),
    resolve: (ctx, id, lock) => agentTarget(ctx, id, "trainingContext", lock),
    after: (_before, change) => ({ trainingContext: change.trainingContext }),
    execute: async (ctx, p) =>
      (await agents.replaceAgent(ctx, p.agentId, {
        ...await wholeAgent(ctx, p.agentId),
        trainingContext: p.after!.trainingContext as string | null,
      })).id,
  },
  {
    tool: "toggle_agent_active",
    targetKey: "agentId",
    change: setStatusSchema,
    resolve: (ctx, id, lock) => agentTarget(ctx, id, "status", lock),
    after: (_before, change) => ({ status: change.status }),
    execute: async (ctx, p) =>
      (await agents.setAgentStatus(ctx, p.agentId, { status: p.after!.status as "ACTIVE" | "PAUSED" })).id,
  },
  {
    tool: "create_intent",
    targetKey: "agentId",
    change: createIntentSchema,
    resolve: (ctx, id, lock) => agentTarget(ctx, id, null, lock),
    after: (_before, change) => change,
    execute: async (ctx, p) =>
      (await intents.createIntent(ctx, p.agentId, p.after as z.output<typeof createIntentSchema>)).id,
  },
  {
    tool: "update_intent",
    targetKey: "intentId",
    change: updateIntentSchema,
    resolve: intentTarget,
    after: (before, change) => ({ ...before, ...change }),
    execute: async (ctx, p) =>
      (await intents.updateIntent(
        ctx,
        { agentId: p.agentId, intentId: p.targetId! },
        changed(p.before, p.after) as z.output<typeof updateIntentSchema>,
      )).id,
  },
  {
    tool: "delete_intent",
    targetKey: "intentId",
    change: deleteArgs,
    resolve: intentTarget,
    after: () => null,
    execute: async (ctx, p) => {
      await intents.deleteIntent(ctx, { agentId: p.agentId, intentId: p.targetId! });
      return p.targetId!;
    },
  },
  {
    tool: "create_webhook",
    targetKey: "agentId",
    change: createWebhookSchema,
    resolve: (ctx, id, lock) => agentTarget(ctx, id, null, lock),
    after: (_before, change) => change,
    // The signing secret the write returns is dropped: the approval never shows it (rotate to get one).
    execute: async (ctx, p) =>
      (await webhooks.createWebhook(ctx, p.agentId, p.after as z.output<typeof createWebhookSchema>)).id,
  },
  {
    tool: "update_webhook",
    targetKey: "webhookId",
    change: updateWebhookSchema,
    resolve: webhookTarget,
    after: (before, change) => ({ ...before, ...change }),
    execute: async (ctx, p) =>
      (await webhooks.updateWebhook(
        ctx,
        { agentId: p.agentId, webhookId: p.targetId! },
        changed(p.before, p.after) as z.output<typeof updateWebhookSchema>,
      )).id,
  },
  {
    tool: "delete_webhook",
    targetKey: "webhookId",
    change: deleteArgs,
    resolve: webhookTarget,
    after: () => null,
    execute: async (ctx, p) => {
      await webhooks.deleteWebhook(ctx, { agentId: p.agentId, webhookId: p.targetId! });
      return p.targetId!;
    },
  },
];

export const CHANGE_KINDS: Readonly<Record<ApprovalTool, ChangeKind>> = Object.fromEntries(
  KINDS.map((k) => [k.tool, k]),
) as Record<ApprovalTool, ChangeKind>;

/** The snapshot keys holding a URL: a webhook's `url`, an intent's `webhookUrl`. */
const URL_KEYS = ["url", "webhookUrl"] as const;

/** A snapshot as stored: header values and URL credentials sealed. */
export function sealSnapshot(ctx: Pick<ActorContext, "secrets">, s: Snapshot | null): Snapshot | null {
  if (!s) return s;
  const out: Snapshot = { ...s };
  if (s.headers) out.headers = ctx.secrets.sealValues(s.headers as Record<string, string>);
  for (const key of URL_KEYS) if (typeof s[key] === "string") out[key] = sealUrlSecrets(ctx.secrets, s[key]);
  return out;
}

/** A stored snapshot opened: header values and URLs in plain text. */
export function openSnapshot(ctx: Pick<ActorContext, "secrets">, s: unknown): Snapshot | null {
  if (!s || typeof s !== "object") return null;
  const out: Snapshot = { ...s as Snapshot };
  if (out.headers) out.headers = ctx.secrets.openValues(out.headers as Record<string, string>);
  for (const key of URL_KEYS) {
    if (typeof out[key] === "string") out[key] = openUrlSecrets(ctx.secrets, out[key]);
  }
  return out;
}
