/// <reference lib="dom" />
/**
 * Conversations of one agent, newest activity first, kept live by `conversationEvents`: a new
 * conversation, a status change or a new message reads the list again.
 */
import { useQuery, useSubscription } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { href, navigate } from "../router.ts";
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

const EVENTS = graphql(`subscription ConsoleConversationEvents($agentId: ID!) {
  conversationEvents(agentId: $agentId) { type conversation { id status lastMessageAt } }
}`);

/** The agent picker and, for the chosen agent (the first by default), its conversations. */
export function ConversationsScreen({ agentId }: { agentId?: string }) {
  const [agents] = useQuery({ query: AGENTS });
  const list = agents.data?.agents.edges.map((e) => e.node) ?? [];
  const chosen = agentId ?? list[0]?.id;
  return (
    <section>
      <h1>Conversations</h1>
      <ErrorNote error={agents.error} />
      {agents.data && !list.length && <p class="note">No agents yet: create one under Agents.</p>}
      {list.length > 0 && (
        <label class="inline">
          Agent
          <select
            value={chosen}
            onChange={(e) => navigate("conversations", (e.target as HTMLSelectElement).value)}
          >
            {list.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select>
        </label>
      )}
      {chosen && <ConversationList key={chosen} agentId={chosen} />}
    </section>
  );
}

type Status = NonNullable<VariablesOf<typeof CONVERSATIONS>["status"]>;

const STATUSES: Status[] = ["OPEN", "HUMAN", "CLOSED"];

function ConversationList({ agentId }: { agentId: string }) {
  const [status, setStatus] = useState<Status | "">("");
  const [result, reread] = useQuery({
    query: CONVERSATIONS,
    variables: { agentId, status: status || null },
  });
  const [live] = useSubscription({ query: EVENTS, variables: { agentId } });
  useRereadOnConnect(() => reread({ requestPolicy: "network-only" }));
  // Every event reads the list again: new conversations and their last message come with it.
  useEffect(() => {
    if (live.data) reread({ requestPolicy: "network-only" });
  }, [live.data]);
  const rows = result.data?.conversations.edges.map((e) => e.node) ?? [];
  return (
    <>
      <label class="inline">
        Status
        <select
          value={status}
          onChange={(e) => setStatus((e.target as HTMLSelectElement).value as Status | "")}
        >
          <option value="">All</option>
          {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </label>
      <ErrorNote error={result.error ?? live.error} />
      {result.data && !rows.length && (
        <p class="note">No conversations yet. They appear here as they arrive.</p>
      )}
      <ul class="list conversations" aria-label="Conversations" aria-live="polite">
        {rows.map((c) => {
          const last = c.messages.edges[0]?.node;
          return (
            <li key={c.id} data-status={c.status}>
              <a href={href("conversation", c.id)}>
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
