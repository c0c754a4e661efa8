/** Proposals of each of the nine change kinds, and an actor context to propose with (src/approvals/). */
import type { ActorContext } from "../../src/context.ts";
import type { App } from "../../src/app.ts";
import { authenticateActor } from "../../src/auth/authenticate.ts";
import { proposeChange } from "../../src/approvals/propose.ts";
import type { PendingApproval } from "../../src/generated/prisma/client.ts";
import { approvalView } from "../../src/approvals/views.ts";
import { presentRow } from "../../src/rest/present.ts";
import { viewOf } from "../../src/reads/views.ts";
import type { Client } from "./app.ts";
import { HOOK, INTENT_FIELDS } from "./fixtures.ts";

/** The context of a login token (or API token) acting in a workspace, as a request would resolve it. */
export async function actorOf(app: App, token: string, workspaceId: string): Promise<ActorContext> {
  return { ...app.deps, actor: await authenticateActor(app.deps, `Bearer ${token}`, () => workspaceId) };
}

/** An agent with an intent and a webhook to change, created over REST by `c`. */
/** The agent's reminderTemplate, which a change of another field keeps. */
export const REMINDER_TEMPLATE = { name: "we_miss_you", language: "pt_BR", parameters: { body: ["Maria"] } };

export async function changeTargets(c: Client, name = "Ana") {
  const agent = await c.post("/api/agents", { name, jobName: "Acme", reminderTemplate: REMINDER_TEMPLATE });
  if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
  const agentId = agent.body.id as string;
  const intent = await c.post(`/api/agents/${agentId}/intents`, { name: "Book Visit", ...INTENT_FIELDS });
  if (intent.status !== 201) throw new Error(`intent: ${intent.status} ${JSON.stringify(intent.body)}`);
  const hook = await c.post(`/api/agents/${agentId}/webhooks`, HOOK);
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
  return { agentId, intentId: intent.body.id as string, webhookId: hook.body.id as string };
}

export type Targets = Awaited<ReturnType<typeof changeTargets>>;

/** Valid propose_change arguments for each tool, against `t`. */
export function proposalsFor(t: Targets): Record<string, Record<string, unknown>> {
  const r = (tool: string, target: Record<string, string>, change: Record<string, unknown>) => ({
    tool,
    target,
    change,
    rationale: `because ${tool}`,
  });
  return {
    update_agent_prompt: r("update_agent_prompt", { agentId: t.agentId }, { systemPrompt: "Be formal." }),
    update_agent_training: r("update_agent_training", { agentId: t.agentId }, {
      trainingContext: "We sell tea.",
    }),
    toggle_agent_active: r("toggle_agent_active", { agentId: t.agentId }, { status: "PAUSED" }),
    create_intent: r("create_intent", { agentId: t.agentId }, { name: "Cancel Order", ...INTENT_FIELDS }),
    update_intent: r("update_intent", { intentId: t.intentId }, { description: "When they want a visit" }),
    delete_intent: r("delete_intent", { intentId: t.intentId }, {}),
    create_webhook: r("create_webhook", { agentId: t.agentId }, {
      event: "message.received",
      url: "https://example.com/new",
      headers: { "X-New": "s3cret" },
    }),
    update_webhook: r("update_webhook", { webhookId: t.webhookId }, { headers: { "X-Key": "k2" } }),
    delete_webhook: r("delete_webhook", { webhookId: t.webhookId }, {}),
  };
}

/** An approval as the transports show it to the proposer (src/rest/present.ts), before JSON. */
export type ShownApproval =
  & Omit<PendingApproval, "workspaceId" | "result" | "proposedById" | "decidedById">
  & { proposedBy: string | null; decidedBy: string | null };

/** Proposes as `ctx`'s actor: the approval as REST answers it to them (its snapshots presented). */
export async function propose(
  ctx: ActorContext,
  args: unknown,
  supervisorMessageId: string | null = null,
): Promise<ShownApproval> {
  const stored = await proposeChange(ctx, args, { supervisorMessageId });
  return presentRow(ctx, viewOf(approvalView), stored) as unknown as ShownApproval;
}

/** Who reads approvals and the supervisor's changes (supervisor:use): OWNER, MANAGER, and so the API token. */
export const APPROVAL_READERS = ["OWNER", "MANAGER", "TOKEN"] as const;
/** Who approves or rejects: a person who is OWNER or MANAGER (never an API token). */
export const APPROVAL_DECIDERS = ["OWNER", "MANAGER"] as const;

/**
 * A PENDING approval proposed by `ctx`'s actor: a training change of the agent unless `args` names
 * another proposal.
 */
export async function newApproval(
  ctx: ActorContext,
  agentId: string,
  args: Record<string, unknown> = {
    tool: "update_agent_training",
    target: { agentId },
    change: { trainingContext: `Training ${crypto.randomUUID()}` },
  },
): Promise<string> {
  return (await propose(ctx, { rationale: "matrix", ...args })).id;
}
