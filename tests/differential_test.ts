/**
 * Differential test of the read planner: generated GraphQL queries (random selections, nested
 * connections with first/after/last/before, aliases, named and inline fragments, variables,
 * @include/@skip, __typename, the same field twice, ids of the workspace, of another one and
 * unknown, cursors taken from earlier answers and a deleted row's) answered by /graphql (one SQL statement) must equal
 * the same document executed through the declared types' own resolvers (plugin-prisma's path,
 * tests/_helpers/declared_reference.ts) on the same seeded data, for each role.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { parse } from "graphql";
import { type Client, startTestApp, type TestApp } from "./_helpers/app.ts";
import { referenceExecute } from "./_helpers/declared_reference.ts";
import type { View } from "../src/shared/view.ts";
import { agentView as agentType } from "../src/agents/views.ts";
import {
  apiTokenView as apiTokenType,
  inviteView as inviteType,
  memberView as memberType,
} from "../src/workspaces/views.ts";
import { INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { approvalView as approvalType } from "../src/approvals/views.ts";
import { formatPrismaCursor } from "@pothos/plugin-prisma";
import { buildSchema } from "../src/graphql/schema.ts";

const { views } = buildSchema();
const [agentView, apiTokenView, inviteView, memberView, approvalView] = [
  agentType,
  apiTokenType,
  inviteType,
  memberType,
  approvalType,
].map((type) => views.get(type));

const UNKNOWN = `c${"0".repeat(24)}`;

interface Ids {
  agents: string[];
  intents: Map<string, string[]>;
  webhooks: Map<string, string[]>;
  deliveries: Map<string, string[]>;
  conversations: string[];
  approvals: string[];
}

/** One workspace's data: agents with intents, webhooks, deliveries and attempts, prompt versions. */
async function seedWorkspace(t: TestApp, owner: Client, workspaceId: string, agents: number): Promise<Ids> {
  const db = t.app.deps.db;
  const ids: Ids = {
    agents: [],
    intents: new Map(),
    webhooks: new Map(),
    deliveries: new Map(),
    conversations: [],
    approvals: [],
  };
  for (let a = 0; a < agents; a++) {
    const agent = await t.seed.agent(owner, { name: `Agent ${a}`, temperature: a === 0 ? 0.7 : null });
    ids.agents.push(agent.id);
    const intents: string[] = [];
    for (let i = 0; i < 3 - a; i++) {
      const res = await owner.post(`/api/agents/${agent.id}/intents`, {
        ...INTENT_FIELDS,
        name: `Intent ${i}`,
        triggerOnTypes: i === 0 ? ["TEXT", "AUDIO"] : ["TEXT"],
        requiredFields: i === 1 ? [{ name: "cpf", type: "string", description: "CPF" }] : [],
        webhookUrl: `https://example.com/i${i}?api_key=k${i}&x=1`,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      intents.push(res.body.id);
    }
    ids.intents.set(agent.id, intents);
    const hooks: string[] = [];
    for (let w = 0; w < 2 - Math.min(a, 2); w++) {
      const res = await owner.post(`/api/agents/${agent.id}/webhooks`, {
        event: w === 0 ? "message.sent" : "intent.fired",
        url: `https://example.com/w${w}?token=t${w}`,
        headers: w === 0 ? { "X-Key": "k", Authorization: "Bearer s" } : {},
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const hookId: string = res.body.webhook?.id ?? res.body.id;
      hooks.push(hookId);
      const deliveries = Array.from({ length: 4 - w * 2 }, (_, i) => `${hookId.slice(0, 12)}-d${i}`);
      await db.domainEvent.createMany({
        data: deliveries.map((id, i) => ({
          id,
          workspaceId,
          agentId: agent.id,
          type: i % 2 ? "message.sent" : "webhook.test",
          payload: {},
        })),
      });
      await db.webhookDelivery.createMany({
        data: deliveries.map((id, i) => ({
          id,
          webhookId: hookId,
          eventId: id,
          status: i === 0 ? "PENDING" as const : "FAILED" as const,
          attemptCount: i,
          idempotencyKey: `k${i}`,
          // Two deliveries at the same instant: the id breaks the tie.
          createdAt: new Date(Date.UTC(2026, 0, 1) + Math.min(i, 2) * 1000),
        })),
      });
      await db.deliveryAttempt.createMany({
        data: deliveries.flatMap((deliveryId, i) =>
          Array.from({ length: i }, (_, n) => ({
            deliveryId,
            number: n + 1,
            startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
            durationMs: 10 + n,
            httpStatus: n % 2 ? null : 500,
            error: n % 2 ? "timeout" : null,
          }))
        ),
      });
      ids.deliveries.set(hookId, deliveries);
    }
    ids.webhooks.set(agent.id, hooks);
    await seedConversations(t, workspaceId, agent.id, a, ids);
    await db.promptVersion.createMany({
      data: Array.from({ length: 4 }, (_, i) => ({
        agentId: agent.id,
        systemPrompt: `prompt ${i}`,
        rationale: `why ${i}`,
        authorLabel: "seed",
        authorUserId: i % 2 ? null : undefined,
        createdAt: new Date(Date.UTC(2026, 0, 2) + Math.min(i, 2) * 1000),
      })),
    });
  }
  ids.approvals = await seedApprovals(t, workspaceId, ids.agents[0]);
  return ids;
}

/**
 * Approvals of each status, written directly with instants that tie; a webhook's snapshots hold
 * sealed header values and a URL with a credential (shown to OWNER and MANAGER only, who alone read them).
 */
async function seedApprovals(t: TestApp, workspaceId: string, agentId: string): Promise<string[]> {
  const db = t.app.deps.db;
  const statuses = ["PENDING", "APPROVED", "REJECTED", "EXPIRED", "FAILED", "PENDING"] as const;
  const hook = (key: string) => ({
    event: "message.sent",
    url: "https://example.com/w?token=abc",
    method: "POST",
    headers: t.app.deps.secrets.sealValues({ "X-Key": key }),
  });
  const ids: string[] = [];
  for (const [i, status] of statuses.entries()) {
    const webhook = i % 2 === 0;
    const row = await db.pendingApproval.create({
      data: {
        workspaceId,
        tool: webhook ? "update_webhook" : "update_agent_prompt",
        targetType: webhook ? "WEBHOOK" : "AGENT",
        targetId: webhook ? null : agentId,
        agentId,
        before: webhook ? hook("old") : { systemPrompt: `before ${i}` },
        after: i === 4 ? undefined : webhook ? hook("new") : { systemPrompt: `after ${i}` },
        rationale: `why ${i}`,
        status,
        decidedAt: status === "PENDING" ? null : new Date(Date.UTC(2026, 0, 3)),
        error: status === "FAILED" ? "DUPLICATE_INTENT: taken" : null,
        expiresAt: new Date(Date.UTC(2026, 0, 4)),
        createdAt: new Date(Date.UTC(2026, 0, 2) + Math.min(i, 3) * 1000),
      },
    });
    ids.push(row.id);
  }
  return ids;
}

let phones = 0;

/**
 * Channels (WHATSAPP and API), contacts, conversations in each state and their messages of every
 * sender, written directly with instants that tie (the id breaks the tie).
 */
async function seedConversations(t: TestApp, workspaceId: string, agentId: string, a: number, ids: Ids) {
  const db = t.app.deps.db;
  const channels = [
    await db.channel.create({
      data: { workspaceId, agentId, type: "WHATSAPP", label: `WA ${a}`, phoneNumberId: `7${++phones}` },
    }),
    await db.channel.create({ data: { workspaceId, agentId, type: "API", label: `App ${a}` } }),
  ];
  const statuses = ["OPEN", "HUMAN", "CLOSED", "OPEN"] as const;
  const senders = ["CUSTOMER", "AI", "HUMAN", "SYSTEM"] as const;
  for (let i = 0; i < 4 - a; i++) {
    const contact = await db.contact.create({
      data: { workspaceId, externalId: `${agentId}-${i}`, name: `Contact ${a}.${i}` },
    });
    const conversation = await db.conversation.create({
      data: {
        workspaceId,
        agentId,
        channelId: channels[i % 2].id,
        contactId: contact.id,
        status: statuses[i],
        // Activity in another order than creation, with a tie (the id decides).
        lastMessageAt: new Date(Date.UTC(2026, 1, 1, 0, [5, 3, 3, 1][i])),
        createdAt: new Date(Date.UTC(2026, 1, 1) + Math.min(i, 2) * 1000),
      },
    });
    ids.conversations.push(conversation.id);
    await db.message.createMany({
      data: Array.from({ length: 5 - i }, (_, m) => ({
        conversationId: conversation.id,
        channelId: channels[i % 2].id,
        direction: m % 2 ? "OUTBOUND" as const : "INBOUND" as const,
        senderKind: senders[m % 4],
        type: m === 1 ? "AUDIO" as const : "TEXT" as const,
        content: `message ${m}`,
        status: m % 2 ? "SENT" as const : "RECEIVED" as const,
        mediaId: m === 1 ? "media-1" : null,
        payload: m === 2 ? { reply: { id: "r", title: "T" } } : undefined,
        error: m === 3 ? { errors: [{ code: 131026 }] } : undefined,
        createdAt: new Date(Date.UTC(2026, 1, 2) + Math.min(m, 3) * 1000),
      })),
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The query generator: imperative (fc.gen), rendering the document text as it goes.

type G = fc.GeneratorValue;

class Writer {
  variables: string[] = [];
  values: Record<string, unknown> = {};
  fragments: string[] = [];
  /** The list (view name) of each connection by its response path ("r0.a3.intents"), for its cursors. */
  lists = new Map<string, string>();
  private n = 0;
  constructor(readonly g: G, readonly cursors: Cursors) {}

  chance(p: number): boolean {
    // Shrinks towards 0, that is towards "no": smaller queries.
    return this.g(fc.double, { min: 0, max: 1, noNaN: true }) > 1 - p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.g(fc.nat, { max: items.length - 1 })];
  }
  name(prefix: string): string {
    return `${prefix}${this.n++}`;
  }

  /** A value as a literal or through a variable of `type`. */
  value(type: string, value: unknown): string {
    if (!this.chance(0.4)) return JSON.stringify(value);
    const v = this.name("v");
    this.variables.push(`$${v}: ${type}`);
    this.values[v] = value;
    return `$${v}`;
  }

  /** Page arguments of a connection of `view`; a cursor of the same list or of any other. */
  pageArgs(view: View): string {
    const size = () => this.g(fc.nat, { max: 4 });
    const own = this.cursors.of(view.name);
    const cursor = () => {
      if (own.length && this.chance(0.5)) return this.pick(own);
      const any = this.cursors.any();
      return any.length && this.chance(0.8) ? this.pick(any) : undefined;
    };
    const args: string[] = [];
    switch (this.g(fc.nat, { max: 6 })) {
      case 1:
        args.push(`first: ${this.value("Int", size())}`);
        break;
      case 2: {
        args.push(`first: ${this.value("Int", size())}`);
        const c = cursor();
        if (c) args.push(`after: ${this.value("String", c)}`);
        break;
      }
      case 3:
        args.push(`last: ${this.value("Int", size())}`);
        break;
      case 4: {
        args.push(`last: ${this.value("Int", size())}`);
        const c = cursor();
        if (c) args.push(`before: ${this.value("String", c)}`);
        break;
      }
      case 5: {
        const c = cursor();
        if (c) args.push(`after: ${this.value("String", c)}`);
        break;
      }
      case 6: {
        const c = cursor();
        if (c) args.push(`before: ${this.value("String", c)}`);
        break;
      }
    }
    return args.length ? `(${args.join(", ")})` : "";
  }

  directive(): string {
    if (!this.chance(0.1)) return "";
    const v = this.name("b");
    this.variables.push(`$${v}: Boolean!`);
    this.values[v] = this.chance(0.5);
    return this.chance(0.5) ? ` @include(if: $${v})` : ` @skip(if: $${v})`;
  }

  /** The selection set of a row of `view`, at `depth`. */
  object(view: View, depth: number, path: string): string {
    const items: string[] = [];
    const names = Object.keys(view.fields);
    for (const name of this.g(fc.subarray, names, { minLength: 1, maxLength: Math.min(6, names.length) })) {
      const spec = view.fields[name];
      const alias = this.chance(0.1) ? `${this.name("a")}: ` : "";
      let item = `${alias}${name}`;
      const directive = this.directive();
      if (typeof spec.type === "object" && "fields" in spec.type) {
        item += `${directive} { ${
          this.g(fc.subarray, Object.keys(spec.type.fields), { minLength: 1 }).join(" ")
        } }`;
      } else {
        item += directive;
      }
      items.push(item);
      // The same field twice merges.
      if (!alias && this.chance(0.05)) items.push(item);
    }
    if (this.chance(0.2)) items.push("__typename");
    for (const [name, rel] of Object.entries(view.relations ?? {})) {
      if (depth >= 3 || !this.chance(0.35)) continue;
      const target = rel.view();
      const key = this.chance(0.1) ? this.name("a") : name;
      const alias = key === name ? "" : `${key}: `;
      const at = `${path}.${key}`;
      if (rel.kind === "connection") {
        items.push(`${alias}${name}${this.pageArgs(target)} ${this.connection(target, depth + 1, at)}`);
      } else items.push(`${alias}${name} { ${this.object(target, depth + 1, at)} }`);
    }
    return this.wrap(view.name, items);
  }

  /** Some items moved into an inline or a named fragment. */
  wrap(typeName: string, items: string[]): string {
    if (items.length > 1 && this.chance(0.25)) {
      const cut = this.g(fc.nat, { max: items.length - 1 });
      const moved = items.splice(cut);
      if (this.chance(0.5)) items.push(`... on ${typeName} { ${moved.join(" ")} }`);
      else {
        const f = this.name("F");
        this.fragments.push(`fragment ${f} on ${typeName} { ${moved.join(" ")} }`);
        items.push(`...${f}`);
      }
    }
    return items.join(" ");
  }

  connection(view: View, depth: number, path: string): string {
    this.lists.set(path, view.name);
    const parts: string[] = [];
    if (this.chance(0.85)) {
      const edge: string[] = [];
      if (this.chance(0.6)) edge.push("cursor");
      if (this.chance(0.9) || edge.length === 0) edge.push(`node { ${this.object(view, depth, path)} }`);
      if (this.chance(0.1)) edge.push("__typename");
      parts.push(`edges { ${edge.join(" ")} }`);
    }
    if (this.chance(0.6) || parts.length === 0) {
      const info = this.g(fc.subarray, [
        "hasNextPage",
        "hasPreviousPage",
        "startCursor",
        "endCursor",
        "__typename",
      ], {
        minLength: 1,
      });
      parts.push(`pageInfo { ${info.join(" ")} }`);
    }
    if (this.chance(0.1)) parts.push("__typename");
    return `{ ${this.wrap(`${view.name}Connection`, parts)} }`;
  }
}

interface Pools {
  mine: Ids;
  theirs: Ids;
}

function generateQuery(
  g: G,
  pools: Pools,
  cursors: Cursors,
): { text: string; variables: Record<string, unknown>; lists: Map<string, string> } {
  const w = new Writer(g, cursors);
  const { mine, theirs } = pools;
  const any = (list: string[]) => list.length ? w.pick(list) : UNKNOWN;
  const agentId = () => w.chance(0.8) ? w.pick(mine.agents) : w.chance(0.5) ? theirs.agents[0] : UNKNOWN;
  const roots: string[] = [];
  const count = w.g(fc.integer, { min: 1, max: 3 });
  for (let i = 0; i < count; i++) {
    const key = `r${i}: `;
    const at = `r${i}`;
    switch (
      w.pick([
        "agents",
        "agent",
        "intents",
        "intent",
        "webhooks",
        "webhook",
        "delivery",
        "members",
        "invites",
        "apiTokens",
        "channels",
        "conversations",
        "conversation",
        "conversationMessages",
        "approvals",
        "approval",
        "supervisorChanges",
      ])
    ) {
      case "approvals": {
        const args = w.pageArgs(approvalView);
        const parts = args ? [args.slice(1, -1)] : [];
        if (w.chance(0.5)) {
          parts.push(`status: ${w.pick(["PENDING", "APPROVED", "REJECTED", "EXPIRED", "FAILED"])}`);
        }
        roots.push(
          `${key}approvals${parts.length ? `(${parts.join(", ")})` : ""} ${
            w.connection(approvalView, 1, at)
          }`,
        );
        break;
      }
      case "supervisorChanges":
        roots.push(`${key}supervisorChanges${w.pageArgs(approvalView)} ${w.connection(approvalView, 1, at)}`);
        break;
      case "approval": {
        const id = w.chance(0.8) ? any(mine.approvals) : w.chance(0.5) ? any(theirs.approvals) : UNKNOWN;
        roots.push(`${key}approval(id: ${w.value("ID!", id)}) { ${w.object(approvalView, 1, at)} }`);
        break;
      }
      case "channels": {
        const view = agentView.relations!.channels.view();
        const args = w.pageArgs(view);
        const more = args ? `, ${args.slice(1, -1)}` : "";
        roots.push(
          `${key}channels(agentId: ${w.value("ID!", agentId())}${more}) ${w.connection(view, 1, at)}`,
        );
        break;
      }
      case "conversations": {
        const view = agentView.relations!.conversations.view();
        const args = w.pageArgs(view);
        let more = args ? `, ${args.slice(1, -1)}` : "";
        if (w.chance(0.5)) more += `, status: ${w.pick(["OPEN", "HUMAN", "CLOSED"])}`;
        roots.push(
          `${key}conversations(agentId: ${w.value("ID!", agentId())}${more}) ${w.connection(view, 1, at)}`,
        );
        break;
      }
      case "conversation": {
        const id = w.chance(0.8)
          ? any(mine.conversations)
          : w.chance(0.5)
          ? any(theirs.conversations)
          : UNKNOWN;
        const view = agentView.relations!.conversations.view();
        roots.push(`${key}conversation(id: ${w.value("ID!", id)}) { ${w.object(view, 1, at)} }`);
        break;
      }
      case "conversationMessages": {
        const id = w.chance(0.8)
          ? any(mine.conversations)
          : w.chance(0.5)
          ? any(theirs.conversations)
          : UNKNOWN;
        const view = agentView.relations!.conversations.view().relations!.messages.view();
        const args = w.pageArgs(view);
        const more = args ? `, ${args.slice(1, -1)}` : "";
        roots.push(
          `${key}conversationMessages(conversationId: ${w.value("ID!", id)}${more}) ${
            w.connection(view, 1, at)
          }`,
        );
        break;
      }
      case "agents":
        roots.push(`${key}agents${w.pageArgs(agentView)} ${w.connection(agentView, 1, at)}`);
        break;
      case "members":
        roots.push(`${key}members${w.pageArgs(memberView)} ${w.connection(memberView, 1, at)}`);
        break;
      case "invites":
        roots.push(`${key}invites${w.pageArgs(inviteView)} ${w.connection(inviteView, 1, at)}`);
        break;
      case "apiTokens":
        roots.push(`${key}apiTokens${w.pageArgs(apiTokenView)} ${w.connection(apiTokenView, 1, at)}`);
        break;
      case "agent":
        roots.push(`${key}agent(id: ${w.value("ID!", agentId())}) { ${w.object(agentView, 1, at)} }`);
        break;
      case "intents": {
        const view = agentView.relations!.intents.view();
        const args = w.pageArgs(view);
        const more = args ? `, ${args.slice(1, -1)}` : "";
        roots.push(
          `${key}intents(agentId: ${w.value("ID!", agentId())}${more}) ${w.connection(view, 1, at)}`,
        );
        break;
      }
      case "webhooks": {
        const view = agentView.relations!.webhooks.view();
        const args = w.pageArgs(view);
        const more = args ? `, ${args.slice(1, -1)}` : "";
        roots.push(
          `${key}webhooks(agentId: ${w.value("ID!", agentId())}${more}) ${w.connection(view, 1, at)}`,
        );
        break;
      }
      case "intent": {
        const a = agentId();
        const id = w.chance(0.8) ? any(mine.intents.get(a) ?? []) : any([...theirs.intents.values()].flat());
        const view = agentView.relations!.intents.view();
        roots.push(
          `${key}intent(agentId: ${w.value("ID!", a)}, id: ${w.value("ID!", id)}) { ${
            w.object(view, 1, at)
          } }`,
        );
        break;
      }
      case "webhook": {
        const a = agentId();
        const id = w.chance(0.8)
          ? any(mine.webhooks.get(a) ?? [])
          : any([...theirs.webhooks.values()].flat());
        const view = agentView.relations!.webhooks.view();
        roots.push(
          `${key}webhook(agentId: ${w.value("ID!", a)}, id: ${w.value("ID!", id)}) { ${
            w.object(view, 1, at)
          } }`,
        );
        break;
      }
      case "delivery": {
        const a = agentId();
        const hook = w.chance(0.85)
          ? any(mine.webhooks.get(a) ?? [])
          : any([...theirs.webhooks.values()].flat());
        const id = w.chance(0.85) ? any(mine.deliveries.get(hook) ?? []) : UNKNOWN;
        const view = agentView.relations!.webhooks.view().relations!.deliveries.view();
        roots.push(
          `${key}webhookDelivery(agentId: ${w.value("ID!", a)}, webhookId: ${w.value("ID!", hook)}, id: ${
            w.value("ID!", id)
          }) { ${w.object(view, 1, at)} }`,
        );
        break;
      }
    }
  }
  const vars = w.variables.length ? `(${w.variables.join(", ")})` : "";
  const text = [`query Q${vars} { ${roots.join(" ")} }`, ...w.fragments].join("\n");
  return { text, variables: w.values, lists: w.lists };
}

/** The cursors of earlier answers, each under the list (view name) it is a position in. */
class Cursors {
  private all = new Set<string>();
  private byList = new Map<string, Set<string>>();

  add(cursor: string, list = "") {
    this.all.add(cursor);
    if (!list) return;
    let set = this.byList.get(list);
    if (!set) this.byList.set(list, set = new Set());
    set.add(cursor);
  }
  /** The latest cursors of `list`. */
  of(list: string): string[] {
    return [...this.byList.get(list) ?? []].slice(-20);
  }
  /** The latest cursors of any list. */
  any(): string[] {
    return [...this.all].slice(-40);
  }
  get size(): number {
    return this.all.size;
  }

  /**
   * Every cursor of an answer (edges and pageInfo), under the list of the connection at its
   * response path (`lists`: "r0.a3.intents"; a list's rows' connections are below it).
   */
  collect(value: unknown, lists: ReadonlyMap<string, string> = new Map(), path = "") {
    if (Array.isArray(value)) {
      for (const v of value) this.collect(v, lists, path);
      return;
    }
    if (!value || typeof value !== "object") return;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "string" && /cursor/i.test(k)) this.add(v, lists.get(path));
      else if (k === "edges" || k === "pageInfo" || k === "node") this.collect(v, lists, path);
      else this.collect(v, lists, path ? `${path}.${k}` : k);
    }
  }
}

/** Errors as both sides are compared: message, path, code. */
const errorsOf = (errors: unknown) =>
  (errors as { message: string; path?: unknown; extensions?: { code?: string } }[] | undefined)?.map((e) => ({
    message: e.message,
    path: e.path,
    code: e.extensions?.code,
  }));

Deno.test("generated read queries answer exactly as the declared types' own resolvers do, for each role", async () => {
  const t = await startTestApp({ GRAPHQL_MAX_COST: "100000000" });
  try {
    const mine = await t.seed.workspace("Mine");
    const theirs = await t.seed.workspace("Theirs");
    const c = mine.owner.client;
    const users = {
      OWNER: mine.owner,
      MANAGER: await t.seed.member(mine.workspaceId, "MANAGER"),
      AGENT: await t.seed.member(mine.workspaceId, "AGENT"),
      VIEWER: await t.seed.member(mine.workspaceId, "VIEWER"),
    };
    for (const [i, role] of (["AGENT", "VIEWER"] as const).entries()) {
      assert.equal(
        (await c.post(`/api/workspaces/${mine.workspaceId}/invites`, { email: `i${i}@x.test`, role })).status,
        201,
      );
      assert.equal(
        (await c.post(`/api/workspaces/${mine.workspaceId}/api-tokens`, { label: `t${i}` })).status,
        201,
      );
    }
    const pools: Pools = {
      mine: await seedWorkspace(t, c, mine.workspaceId, 3),
      theirs: await seedWorkspace(t, theirs.owner.client, theirs.workspaceId, 1),
    };
    const cursors = new Cursors();
    // Positions of the other workspace's rows are cursors too (a position, never their rows).
    const foreign = await theirs.owner.client.graphql(`{ agents { edges { cursor node {
      intents { edges { cursor } } webhooks { edges { cursor node { deliveries { edges { cursor } } } } }
      promptVersions { edges { cursor } } } } } }`);
    cursors.collect(
      foreign.body.data,
      new Map([
        ["agents", "Agent"],
        ["agents.intents", "Intent"],
        ["agents.webhooks", "Webhook"],
        ["agents.webhooks.deliveries", "WebhookDelivery"],
        ["agents.promptVersions", "PromptVersion"],
      ]),
    );
    assert.ok(cursors.size >= 5, JSON.stringify(foreign.body));
    // A deleted row's position is a cursor too.
    const agentId = pools.mine.agents[0];
    const gone = await c.post(`/api/agents/${agentId}/intents`, { ...INTENT_FIELDS, name: "Gone" });
    assert.equal(gone.status, 201, JSON.stringify(gone.body));
    const last = await c.graphql(`{ intents(agentId: "${agentId}", last: 1) { edges { cursor } } }`);
    cursors.add(last.body.data.intents.edges[0].cursor, "Intent");
    assert.equal((await c.delete(`/api/agents/${agentId}/intents/${gone.body.id}`)).status, 204);
    let compared = 0;
    for (const [role, user] of Object.entries(users)) {
      await fc.assert(
        fc.asyncProperty(fc.gen(), async (g) => {
          const { text, variables, lists } = generateQuery(g, pools, cursors);
          const res = await user.client.graphql(text, variables);
          const where = `${role}\n${text}\n${JSON.stringify(variables)}\n${JSON.stringify(res.body)}`;
          assert.equal(res.status, 200, where);
          const expected = await referenceExecute(
            t.app.deps,
            user.token,
            mine.workspaceId,
            parse(text),
            variables,
          );
          const plain = JSON.parse(
            JSON.stringify({ data: expected.data, errors: errorsOf(expected.errors) }),
          );
          const got = JSON.parse(JSON.stringify({ data: res.body.data, errors: errorsOf(res.body.errors) }));
          assert.deepEqual(got, plain, where);
          cursors.collect(res.body.data, lists);
          compared++;
        }),
        { numRuns: Number(Deno.env.get("DIFF_RUNS") ?? 100) },
      );
    }
    console.log(`differential: ${compared} queries compared, ${cursors.size} cursors reused`);
  } finally {
    await t.close();
  }
});

Deno.test("both executors take a cursor as a position: a deleted row's continues after it, a malformed one is BAD_CURSOR", async () => {
  const t = await startTestApp();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const c = owner.client;
    const agent = await t.seed.agent(c, {});
    const ids: string[] = [];
    for (const name of ["A", "B", "C"]) {
      const res = await c.post(`/api/agents/${agent.id}/intents`, { ...INTENT_FIELDS, name });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      ids.push(res.body.id);
    }
    const page =
      `{ edges { cursor node { name } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }`;
    // The root page (the reference: prisma_reads.ts) and the agent's relation (a relatedConnection).
    const query = (args: string) =>
      `{ r: intents(agentId: "${agent.id}"${args ? `, ${args}` : ""}) ${page} ` +
      `a: agent(id: "${agent.id}") { intents${args ? `(${args})` : ""} ${page} } }`;
    const both = async (text: string) => {
      const res = await c.graphql(text);
      const expected = await referenceExecute(t.app.deps, owner.token, workspaceId, parse(text), {});
      const plain = JSON.parse(JSON.stringify({ data: expected.data, errors: errorsOf(expected.errors) }));
      const got = JSON.parse(JSON.stringify({ data: res.body.data, errors: errorsOf(res.body.errors) }));
      assert.deepEqual(got, plain, text);
      return got;
    };
    const all = await both(query(""));
    const b = all.data.r.edges[1].cursor;
    assert.equal(all.data.a.intents.edges[1].cursor, b);
    const names = (conn: { edges: { node: { name: string } }[] }) => conn.edges.map((e) => e.node.name);
    const next = await both(query(`first: 1, after: "${all.data.r.edges[0].cursor}"`));
    assert.deepEqual([names(next.data.r), names(next.data.a.intents)], [["B"], ["B"]]);
    assert.equal((await c.delete(`/api/agents/${agent.id}/intents/${ids[1]}`)).status, 204);
    const after = await both(query(`first: 1, after: "${b}"`));
    assert.deepEqual([names(after.data.r), names(after.data.a.intents)], [["C"], ["C"]]);
    const before = await both(query(`last: 2, before: "${b}"`));
    assert.deepEqual([names(before.data.r), names(before.data.a.intents)], [["A"], ["A"]]);
    // Not one of the API's cursors (plugin-prisma's own encoding of a row's id neither): /graphql
    // refuses the document before it runs (src/graphql/limits.ts), plugin-prisma's path when it pages.
    for (const cursor of ["nope", formatPrismaCursor({ id: ids[0] }, "id")]) {
      const text = query(`after: "${cursor}"`);
      const res = await c.graphql(text);
      const expected = await referenceExecute(t.app.deps, owner.token, workspaceId, parse(text), {});
      assert.deepEqual(
        [errorsOf(res.body.errors)?.[0]?.code, errorsOf(expected.errors)?.[0]?.code],
        ["BAD_CURSOR", "BAD_CURSOR"],
        `${text}\n${JSON.stringify(res.body)}\n${JSON.stringify(expected)}`,
      );
    }
  } finally {
    await t.close();
  }
});
