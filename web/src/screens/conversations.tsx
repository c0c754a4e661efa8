/// <reference lib="dom" />
/**
 * The conversation list of the agent's desk: one agent's conversations, newest activity first,
 * kept live by `conversationEvents` (a new conversation, a status change or a new message reads
 * the list again), with the open one marked.
 */
import { useQuery, useSubscription } from "@urql/preact";
import { useEffect } from "preact/hooks";
import { href } from "../router.ts";
import { graphql, type ResultOf, type VariablesOf } from "../schema.ts";
import { Badge, ErrorNote, Time, useRereadOnConnect } from "../ui.tsx";

const AGENTS = graphql(
  `query ConsoleAgentNames { agents(first: 100) { edges { node { id name status } } } }`,
);

/** What the list shows of a conversation's last message. */
const LastMessage = graphql(
  `fragment ConsoleLastMessage on Message { id sender type content text transcript }`,
);

const CONVERSATIONS = graphql(
  `query ConsoleConversations($agentId: ID!, $status: ConversationStatus) {
    conversations(agentId: $agentId, first: 50, status: $status) {
      edges { node {
        id status contactName contactId lastMessageAt
        messages(last: 1) { edges { node { ...ConsoleLastMessage } } }
      } }
    }
  }`,
  [LastMessage],
);

/**
 * The desk's one live feed of conversations: the list reads itself again on each event, and the
 * open conversation's status and window come with it (into the cache). Both ask with this one
 * document, so the client holds one subscription for the two.
 */
export const CONVERSATION_EVENTS = graphql(`subscription ConsoleConversationEvents($agentId: ID!) {
  conversationEvents(agentId: $agentId) {
    type conversation { id status lastMessageAt transferSummary assignedUserId window { open closesAt } }
  }
}`);

type Status = NonNullable<VariablesOf<typeof CONVERSATIONS>["status"]>;

const STATUSES: Status[] = ["OPEN", "HUMAN", "CLOSED"];

/** What the list is filtered by; kept by the desk while conversations open and close. */
export interface ListFilters {
  /** The agent whose conversations are listed; undefined: the first agent. */
  agentId?: string;
  status: Status | "";
}

export const NO_FILTERS: ListFilters = { status: "" };

/**
 * The filters and the list. `openId`: the open conversation (marked). `onRows` hears the ids
 * shown, in order, for the keys that move to the next and previous one.
 */
export function ConversationList(
  { filters, onFilters, openId, onRows }: {
    filters: ListFilters;
    onFilters: (f: ListFilters) => void;
    openId?: string;
    onRows: (ids: string[]) => void;
  },
) {
  const [agents] = useQuery({ query: AGENTS });
  const list = agents.data?.agents.edges.map((e) => e.node) ?? [];
  const chosen = filters.agentId ?? list[0]?.id;
  return (
    <>
      <h1>Conversations</h1>
      <ErrorNote error={agents.error} />
      {agents.data && !list.length && <p class="note">No agents yet: create one under Agents.</p>}
      <div class="filters">
        {list.length > 0 && (
          <label class="inline">
            Agent
            <select
              value={chosen}
              onChange={(e) => onFilters({ ...filters, agentId: (e.target as HTMLSelectElement).value })}
            >
              {list.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
            </select>
          </label>
        )}
        <label class="inline">
          Status
          <select
            value={filters.status}
            onChange={(e) =>
              onFilters({ ...filters, status: (e.target as HTMLSelectElement).value as Status | "" })}
          >
            <option value="">All</option>
            {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
      </div>
      {chosen && (
        <Rows key={chosen} agentId={chosen} status={filters.status} openId={openId} onRows={onRows} />
      )}
    </>
  );
}

function Rows(
  { agentId, status, openId, onRows }: {
    agentId: string;
    status: Status | "";
    openId?: string;
    onRows: (ids: string[]) => void;
  },
) {
  const [result, reread] = useQuery({
    query: CONVERSATIONS,
    variables: { agentId, status: status || null },
  });
  const [live] = useSubscription({ query: CONVERSATION_EVENTS, variables: { agentId } });
  useRereadOnConnect(() => reread({ requestPolicy: "network-only" }));
  // Every event reads the list again: new conversations and their last message come with it.
  useEffect(() => {
    if (live.data) reread({ requestPolicy: "network-only" });
  }, [live.data]);
  const rows = result.data?.conversations.edges.map((e) => e.node) ?? [];
  const ids = rows.map((c) => c.id).join(",");
  useEffect(() => onRows(ids ? ids.split(",") : []), [ids]);
  return (
    <>
      <ErrorNote error={result.error ?? live.error} />
      {result.data && !rows.length && (
        <p class="note">No conversations yet. They appear here as they arrive.</p>
      )}
      <ul class="list conversations" aria-label="Conversations" aria-live="polite">
        {rows.map((c) => {
          const last = c.messages.edges[0]?.node;
          const open = c.id === openId;
          return (
            <li key={c.id} data-status={c.status} class={open ? "open" : undefined}>
              <a href={href("conversation", c.id)} aria-current={open ? "page" : undefined}>
                <span class="title">{c.contactName || c.contactId}</span>
                <Badge value={c.status} />
                <span class="muted">
                  <Time value={c.lastMessageAt} />
                </span>
                {last && <span class="preview">{previewOf(last)}</span>}
              </a>
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** What a message says in one line: its text, or what was understood of its media. */
export function previewOf(
  m: Pick<ResultOf<typeof LastMessage>, "type" | "content" | "text" | "transcript">,
): string {
  const said = m.transcript ?? m.text ?? m.content;
  return m.type === "TEXT" ? said : `[${m.type.toLowerCase()}] ${said ?? ""}`;
}
