/**
 * A plain reference execution of GraphQL reads, for the differential test of the read planner:
 * graphql-js `execute` over the committed schema's SDL, with naive resolvers written without the
 * planner. The workspace's rows are loaded with one simple Prisma query per table, then every
 * field is a property read, every relation an array filter, and every connection a slice of the
 * sorted rows by the Relay rules of @pothos/plugin-prisma. Masking uses the views' `present`.
 * Resolvers are synchronous, so when several root fields fail graphql-js reports the first in
 * document order; access (403) is checked for every root field first, as the API does.
 */
import {
  buildSchema,
  type DocumentNode,
  execute,
  type ExecutionResult,
  GraphQLError,
  type GraphQLFieldResolver,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  printSchema,
} from "graphql";
import type { Deps } from "../../src/context.ts";
import type { Actor } from "../../src/auth/actor.ts";
import { authorize, can } from "../../src/auth/permissions.ts";
import { AppError, notFound } from "../../src/shared/errors.ts";
import { decodeCursor, encodeCursor, type Keyset } from "../../src/shared/pagination.ts";
import type { FieldSpec } from "../../src/shared/view.ts";
import { webhookView } from "../../src/webhooks/views.ts";
import { intentView } from "../../src/intents/views.ts";
import { approvalView } from "../../src/approvals/views.ts";
import { schema as appSchema } from "../../src/graphql/schema.ts";

type Row = Record<string, unknown> & { id: string; createdAt: Date };

/** Every readable row of one workspace, loaded naively. */
export interface Snapshot {
  agents: Row[];
  intents: Row[];
  webhooks: Row[];
  deliveries: Row[];
  attempts: Record<string, unknown>[];
  versions: Row[];
  members: Row[];
  invites: Row[];
  tokens: Row[];
  users: Map<string, Record<string, unknown>>;
  channels: Row[];
  conversations: Row[];
  contacts: Row[];
  messages: Row[];
  approvals: Row[];
  counts: Map<string, { conversations: number; intents: number; numbers: number }>;
}

export async function loadSnapshot(deps: Deps, workspaceId: string): Promise<Snapshot> {
  const db = deps.db;
  const agents = await db.agent.findMany({ where: { workspaceId } }) as Row[];
  const agentIds = agents.map((a) => a.id);
  const intents = await db.intent.findMany({ where: { agentId: { in: agentIds } } }) as Row[];
  const webhooks = await db.eventWebhook.findMany({ where: { agentId: { in: agentIds } } }) as Row[];
  const deliveries = await db.webhookDelivery.findMany({
    where: { webhookId: { in: webhooks.map((w) => w.id) } },
    include: { event: { select: { type: true } } },
  }) as Row[];
  const attempts = await db.deliveryAttempt.findMany({
    where: { deliveryId: { in: deliveries.map((d) => d.id) } },
  });
  const versions = await db.promptVersion.findMany({ where: { agentId: { in: agentIds } } }) as Row[];
  const memberships = await db.membership.findMany({ where: { workspaceId }, include: { user: true } });
  const members = memberships.map((m) => ({
    id: m.userId,
    createdAt: m.createdAt,
    name: m.user.name,
    email: m.user.email,
    role: m.role,
    joinedAt: m.createdAt,
  }));
  const invites = await db.invite.findMany({ where: { workspaceId } }) as Row[];
  const tokens = await db.apiToken.findMany({ where: { workspaceId } }) as Row[];
  const users = new Map<string, Record<string, unknown>>();
  for (const u of await db.user.findMany({ select: { id: true, name: true, email: true } })) {
    users.set(u.id, u);
  }
  const channels = await db.channel.findMany({ where: { agentId: { in: agentIds } } }) as Row[];
  const conversations = await db.conversation.findMany({ where: { agentId: { in: agentIds } } }) as Row[];
  const contacts = await db.contact.findMany({ where: { workspaceId } }) as Row[];
  const messages = await db.message.findMany({
    where: { conversationId: { in: conversations.map((c) => c.id) } },
  }) as Row[];
  const approvals = (await db.pendingApproval.findMany({ where: { workspaceId } })).map((a) => ({
    ...a,
    proposedBy: a.proposedById,
    decidedBy: a.decidedById,
  })) as Row[];
  const counts = new Map<string, { conversations: number; intents: number; numbers: number }>();
  for (const id of agentIds) {
    counts.set(id, {
      conversations: await db.conversation.count({ where: { agentId: id } }),
      intents: await db.intent.count({ where: { agentId: id } }),
      numbers: await db.channel.count({ where: { agentId: id } }),
    });
  }
  return {
    agents,
    intents,
    webhooks,
    deliveries,
    attempts,
    versions,
    members,
    invites,
    tokens,
    users,
    channels,
    conversations,
    contacts,
    messages,
    approvals,
    counts,
  };
}

/** The committed schema, without its resolvers. */
export const referenceSchema: GraphQLSchema = buildSchema(printSchema(appSchema));

/** Key order of (sort key value, id), for a connection in `order`. */
function compare(a: Keyset, b: Keyset): number {
  const t = a.at.getTime() - b.at.getTime();
  return t !== 0 ? t : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

interface Args {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

/**
 * A Relay connection over `rows` in `order` of (`sortKey`, id), as @pothos/plugin-prisma answers it
 * (keyset cursors).
 */
function connection(rows: Row[], order: "asc" | "desc", args: Args, sortKey = "createdAt") {
  const sign = order === "asc" ? 1 : -1;
  const keyOf = (r: Row): Keyset => ({ at: r[sortKey] as Date, id: r.id });
  const sorted = [...rows].sort((a, b) => sign * compare(keyOf(a), keyOf(b)));
  const position = (c: string) => {
    const key = decodeCursor(c);
    if (!key) throw new AppError("BAD_CURSOR", 400, "bad cursor");
    return key;
  };
  let candidates = sorted;
  if (args.after != null) {
    const key = position(args.after);
    candidates = candidates.filter((r) => sign * compare(keyOf(r), key) > 0);
  }
  if (args.before != null) {
    const key = position(args.before);
    candidates = candidates.filter((r) => sign * compare(keyOf(r), key) < 0);
  }
  const size = Math.min(args.first ?? args.last ?? 100, 100);
  const backward = args.before != null || args.last != null;
  const page = backward ? candidates.slice(Math.max(0, candidates.length - size)) : candidates.slice(0, size);
  const more = candidates.length > size;
  const edges = page.map((node) => ({ cursor: encodeCursor(keyOf(node)), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: args.before != null ? true : args.last != null ? false : more,
      hasPreviousPage: args.after != null ? true : backward ? more : false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}

const ROOT_ACTIONS: Record<string, "workspace:read" | "members:manage" | "supervisor:use"> = {
  approvals: "supervisor:use",
  approval: "supervisor:use",
  supervisorChanges: "supervisor:use",
  agents: "workspace:read",
  agent: "workspace:read",
  intents: "workspace:read",
  intent: "workspace:read",
  webhooks: "workspace:read",
  webhook: "workspace:read",
  webhookDelivery: "workspace:read",
  members: "workspace:read",
  invites: "members:manage",
  apiTokens: "members:manage",
  channels: "workspace:read",
  conversations: "workspace:read",
  conversation: "workspace:read",
  conversationMessages: "workspace:read",
};

const presented: Record<string, Record<string, FieldSpec | undefined>> = {
  Webhook: { url: webhookView.fields.url, headers: webhookView.fields.headers },
  Intent: { webhookUrl: intentView.fields.webhookUrl },
  Approval: { before: approvalView.fields.before, after: approvalView.fields.after },
};

/** Executes `document` as the reference: the answer graphql-js gives with these naive resolvers. */
export function referenceExecute(
  deps: Deps,
  actor: Actor,
  snap: Snapshot,
  document: DocumentNode,
  variables: Record<string, unknown>,
): ExecutionResult {
  const op = document.definitions.find((d) =>
    d.kind === Kind.OPERATION_DEFINITION
  ) as OperationDefinitionNode;
  // Access for every root field first (nothing is read for a refused request).
  for (const s of op.selectionSet.selections) {
    if (s.kind !== Kind.FIELD) continue;
    const action = ROOT_ACTIONS[s.name.value];
    try {
      if (action) authorize(actor, action);
    } catch (e) {
      const error = e as AppError;
      const key = s.alias?.value ?? s.name.value;
      return {
        data: null,
        errors: [new GraphQLError(error.message, { path: [key], extensions: { code: error.code } })],
      };
    }
  }
  const ctx = { ...deps, actor };
  // A row under an agent is found with its agent: an unknown agent is "<row> not found." there,
  // as the services answer; a page under an unknown agent is "Agent not found.".
  const agentOf = (id: unknown, label = "Agent") => {
    const agent = snap.agents.find((a) => a.id === id);
    if (!agent) throw notFound(label);
    return agent;
  };
  const webhookOf = (agentId: unknown, id: unknown) => {
    const agent = agentOf(agentId, "Webhook");
    const hook = snap.webhooks.find((w) => w.id === id && w.agentId === agent.id);
    if (!hook) throw notFound("Webhook");
    return hook;
  };
  const conversationOf = (id: unknown) => {
    const found = snap.conversations.find((c) => c.id === id);
    if (!found) throw notFound("Conversation");
    return found;
  };
  const byId = (rows: Row[], id: unknown) => rows.find((r) => r.id === id) ?? null;
  const roots: Record<string, (args: Record<string, unknown>) => unknown> = {
    agents: (a) => connection(snap.agents, "asc", a),
    agent: (a) => agentOf(a.id),
    intents: (a) => connection(snap.intents.filter((i) => i.agentId === agentOf(a.agentId).id), "asc", a),
    intent: (a) => {
      const agent = agentOf(a.agentId, "Intent");
      const found = snap.intents.find((i) => i.id === a.id && i.agentId === agent.id);
      if (!found) throw notFound("Intent");
      return found;
    },
    webhooks: (a) => connection(snap.webhooks.filter((w) => w.agentId === agentOf(a.agentId).id), "asc", a),
    webhook: (a) => webhookOf(a.agentId, a.id),
    webhookDelivery: (a) => {
      const hook = webhookOf(a.agentId, a.webhookId);
      const found = snap.deliveries.find((d) => d.id === a.id && d.webhookId === hook.id);
      if (!found) throw notFound("Delivery");
      return found;
    },
    channels: (a) => connection(snap.channels.filter((c) => c.agentId === agentOf(a.agentId).id), "asc", a),
    conversations: (a) => {
      const agent = agentOf(a.agentId);
      const rows = snap.conversations.filter((c) =>
        c.agentId === agent.id && (a.status == null || c.status === a.status)
      );
      return connection(rows, "desc", a, "lastMessageAt");
    },
    conversation: (a) => conversationOf(a.id),
    conversationMessages: (a) => {
      const conversation = conversationOf(a.conversationId);
      return connection(snap.messages.filter((m) => m.conversationId === conversation.id), "asc", a);
    },
    members: (a) => connection(snap.members, "asc", a),
    invites: (a) => connection(snap.invites, "asc", a),
    apiTokens: (a) => connection(snap.tokens, "asc", a),
    approvals: (a) =>
      connection(snap.approvals.filter((r) => a.status == null || r.status === a.status), "desc", a),
    approval: (a) => {
      const found = byId(snap.approvals, a.id);
      if (!found) throw notFound("Approval");
      return found;
    },
    supervisorChanges: (a) => connection(snap.approvals, "desc", a),
  };
  const relations: Record<string, (parent: Row, args: Record<string, unknown>) => unknown> = {
    "Agent.counts": (p) => snap.counts.get(p.id),
    "Agent.intents": (p, a) => connection(snap.intents.filter((i) => i.agentId === p.id), "asc", a),
    "Agent.webhooks": (p, a) => connection(snap.webhooks.filter((w) => w.agentId === p.id), "asc", a),
    "Agent.promptVersions": (p, a) => connection(snap.versions.filter((v) => v.agentId === p.id), "desc", a),
    "Agent.channels": (p, a) => connection(snap.channels.filter((c) => c.agentId === p.id), "asc", a),
    "Agent.conversations": (p, a) =>
      connection(snap.conversations.filter((c) => c.agentId === p.id), "desc", a, "lastMessageAt"),
    "Webhook.deliveries": (p, a) =>
      connection(snap.deliveries.filter((d) => d.webhookId === p.id), "desc", a),
    "WebhookDelivery.event": (p) => (p.event as { type: string }).type,
    "WebhookDelivery.attempts": (p) =>
      snap.attempts.filter((t) => t.deliveryId === p.id).sort((a, b) => Number(a.number) - Number(b.number)),
    "Conversation.contact": (p) => byId(snap.contacts, p.contactId),
    "Conversation.contactId": (p) => byId(snap.contacts, p.contactId)?.externalId ?? null,
    "Conversation.contactName": (p) => byId(snap.contacts, p.contactId)?.name ?? null,
    "Conversation.channel": (p) => byId(snap.channels, p.channelId),
    "Conversation.messages": (p, a) =>
      connection(snap.messages.filter((m) => m.conversationId === p.id), "asc", a),
    "Message.sender": (p) => p.senderKind,
    "Channel.inboundUrl": (p) =>
      p.type === "API"
        ? `${deps.config.publicUrl}/api/channels/${p.id}/messages`
        : `${deps.config.publicUrl}/webhooks/whatsapp/${p.id}`,
    "ApiToken.createdBy": (p) => p.createdById ? snap.users.get(String(p.createdById)) ?? null : null,
  };
  const resolver: GraphQLFieldResolver<unknown, unknown> = (source, args, _context, info) => {
    const parent = info.parentType.name;
    if (parent === "Query") return roots[info.fieldName](args);
    const relation = relations[`${parent}.${info.fieldName}`];
    if (relation) return relation(source as Row, args);
    let value = (source as Record<string, unknown>)[info.fieldName];
    if (value instanceof Date) value = value.toISOString();
    const spec = presented[parent]?.[info.fieldName];
    if (spec?.present && !(spec.present.unless && can(actor, spec.present.unless))) {
      value = spec.present.apply(ctx, value);
    }
    return value;
  };
  const result = execute({
    schema: referenceSchema,
    document,
    variableValues: variables,
    fieldResolver: resolver,
  }) as ExecutionResult;
  return {
    data: result.data ?? null,
    errors: result.errors?.map((e) => {
      const cause = e.originalError;
      const code = cause instanceof AppError ? cause.code : e.extensions?.code;
      return new GraphQLError(e.message, { path: e.path, extensions: { code } });
    }),
  };
}
