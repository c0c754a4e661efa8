/**
 * The workspace's inbox, declared once (shared/capability.ts): every agent's conversations in one
 * list with its filters and search, who holds each (assign) and how far the caller has read it
 * (read). See docs/behaviour.md "Assignment and unread" and "The workspace's conversations".
 */
import { z } from "zod";
import { defineFilter, defineOperation, defineRead } from "../shared/capability.ts";
import { workspace } from "../workspaces/capabilities.ts";
import { AppError } from "../shared/errors.ts";
import { enumType } from "../shared/view.ts";
import { sql } from "../shared/sql_fragment.ts";
import { ConversationStatus, conversationView } from "./views.ts";
import * as assignment from "./assignment.ts";
import { waitingUnread } from "./assignment_sql.ts";

const InboxAssignee = enumType(
  "InboxAssignee",
  ["ME", "NONE"],
  "ME: the conversations the caller holds; NONE: those nobody holds.",
);

/** The shortest search: shorter text has no trigram, so no index could find it. */
const MIN_SEARCH = 3;
const MAX_SEARCH = 200;

const invalid = (name: string, message: string) =>
  new AppError("VALIDATION_FAILED", 400, `Invalid input: ${name}: ${message}`, [{ path: name, message }]);

const agentId = defineFilter({
  type: "ID",
  description: "Only the conversations of this agent (another workspace's agent has none here).",
  sql: (c, value) => sql`${c}."agentId" = ${value}`,
  prisma: (value) => ({ agentId: value }),
});

const assignee = defineFilter({
  type: InboxAssignee,
  description:
    "`me`: the conversations the caller holds (none for an API token); `none`: those nobody holds; " +
    "absent: all.",
  // REST's query names them in lower case; either case is taken.
  parse: (value) => value.toUpperCase(),
  sql: (c, value, caller) =>
    sql`CASE ${value} WHEN 'ME' THEN ${c}."assignedUserId" = ${caller.user} ELSE ${c}."assignedUserId" IS NULL END`,
  prisma: (value, actor) =>
    value === "ME" ? { assignedUserId: actor.userId ?? { in: [] } } : { assignedUserId: null },
});

/** LIKE's own characters in the searched text are matched as themselves. */
const likePattern = (value: ReturnType<typeof sql>) =>
  sql`('%' || replace(replace(replace(${value}, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%')`;

const search = defineFilter({
  type: "String",
  description:
    `Conversations whose contact's name or address, or any of whose messages' text, contains this ` +
    `text (any case; ${MIN_SEARCH} to ${MAX_SEARCH} characters, spaces at the ends ignored).`,
  parse: (value) => {
    const text = value.trim();
    if (text.length < MIN_SEARCH) throw invalid("search", `give at least ${MIN_SEARCH} characters`);
    if (text.length > MAX_SEARCH) throw invalid("search", `give at most ${MAX_SEARCH} characters`);
    return text;
  },
  // Two semi-joins, each answered by its trigram index (migration 20261130090000): the workspace's
  // contacts by name or address, and the messages by text; the conversations are then walked
  // newest first, so a page stops at its size.
  sql: (c, value, caller) => {
    const pattern = likePattern(value);
    return sql`(${c}."contactId" IN (SELECT sc.id FROM "Contact" sc WHERE sc."workspaceId" = ${caller.workspace}
        AND (sc.name ILIKE ${pattern} OR sc."externalId" ILIKE ${pattern}))
      OR ${c}.id IN (SELECT sm."conversationId" FROM "Message" sm WHERE sm.content ILIKE ${pattern}))`;
  },
  prisma: (value) => {
    const contains = { contains: value, mode: "insensitive" };
    return {
      OR: [
        { contact: { name: contains } },
        { contact: { externalId: contains } },
        { messages: { some: { content: contains } } },
      ],
    };
  },
});

export const inbox = defineRead({
  name: "inbox",
  summary:
    "The conversations of every agent of the workspace, newest activity first (last message), with the " +
    "caller's unread counts; `agentId`, `status`, `assignee` and `search` narrow them.",
  action: "workspace:read",
  params: {},
  from: { view: conversationView, order: "desc", sortKey: "lastMessageAt" },
  filters: { agentId, status: ConversationStatus, assignee, search },
  http: { path: "/api/conversations" },
});

const params = { conversationId: "Conversation" } as const;

export const assignConversation = defineOperation({
  name: "assignConversation",
  summary:
    "Gives the conversation to a member who may attend, or to nobody (`userId` null): OWNER and MANAGER " +
    "any member, an AGENT only themselves (or nobody while they hold it). 409 CONVERSATION_CLOSED when closed.",
  access: { kind: "workspace", action: "conversation:attend" },
  params,
  target: "conversationId",
  input: assignment.assignSchema,
  output: { view: conversationView },
  http: { method: "POST", path: "/api/conversations/{conversationId}/assign" },
  run: (ctx, { conversationId }, input) => assignment.assign(ctx, conversationId, input),
});

export const markConversationRead = defineOperation({
  name: "markConversationRead",
  summary:
    "The calling member has read the conversation up to now: its `unread` counts from here (204). An API " +
    "token has no read marker (403).",
  access: { kind: "workspace", action: "workspace:read" },
  params,
  target: "conversationId",
  output: { none: true },
  http: { method: "POST", path: "/api/conversations/{conversationId}/read", status: 204 },
  run: (ctx, { conversationId }) => assignment.read(ctx, conversationId),
});

const waitingSchema = z.object({
  unread: z.number().int().nullable().describe(
    "Unread customer messages in the conversations waiting for the caller (null for an API token).",
  ),
  conversations: z.number().int().nullable().describe("How many of those conversations have any."),
});

export const waiting = defineOperation({
  name: "waiting",
  summary:
    "What waits for the calling member: the conversations not CLOSED that they hold, and the HUMAN ones " +
    "nobody holds, with their unread messages summed (the console's title count); nulls for an API token.",
  access: { kind: "workspace", action: "workspace:read" },
  params: {},
  output: { schema: waitingSchema, typeName: "Waiting" },
  http: { method: "GET", path: "/api/inbox/waiting" },
  query: true,
  fieldOf: workspace,
  run: async (ctx) => {
    const userId = ctx.actor.userId;
    if (userId === null) return { unread: null, conversations: null };
    const [row] = await waitingUnread.rows(ctx.db, { workspaceId: ctx.actor.workspaceId, userId });
    return row;
  },
});
