/// <reference lib="dom" />
/**
 * The desk's conversation list: every agent's conversations (or one agent's), newest activity
 * first, filtered by holder ("Mine", "Unassigned", "All"), status and a search, 50 at a time with
 * "Load more". Each row shows the agent, who holds it and this member's unread count; the open one
 * is marked. It reads itself again on each event of the desk's feed.
 */
import { useQuery } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { href } from "../router.ts";
import { graphql, type ResultOf, type VariablesOf } from "../schema.ts";
import { Badge, ErrorNote, Time, useRereadOnConnect } from "../ui.tsx";
import { useDesk } from "../inbox.ts";

const AGENTS = graphql(
  `query ConsoleAgentNames { agents(first: 100) { edges { node { id name status } } } }`,
);

/** What the list shows of a conversation's last message. */
const LastMessage = graphql(
  `fragment ConsoleLastMessage on Message { id sender type content text transcript }`,
);

/** A page of the list: 50 rows, then the cursor of the next. */
export const PAGE_SIZE = 50;

const INBOX = graphql(
  `query ConsoleInbox(
    $agentId: ID, $status: ConversationStatus, $assignee: InboxAssignee, $search: String, $after: String
  ) {
    inbox(agentId: $agentId, status: $status, assignee: $assignee, search: $search, first: 50, after: $after) {
      edges { node {
        id agentId status contactName contactId lastMessageAt unread
        assignee { id name email }
        messages(last: 1) { edges { node { ...ConsoleLastMessage } } }
      } }
      pageInfo { hasNextPage endCursor }
    }
  }`,
  [LastMessage],
);

type Status = NonNullable<VariablesOf<typeof INBOX>["status"]>;
type Holder = NonNullable<VariablesOf<typeof INBOX>["assignee"]> | "";
type Row = ResultOf<typeof INBOX>["inbox"]["edges"][number]["node"];

const STATUSES: Status[] = ["OPEN", "HUMAN", "CLOSED"];
const HOLDERS: [Holder, string][] = [["ME", "Mine"], ["NONE", "Unassigned"], ["", "All"]];

/** What the list is filtered by; kept by the desk while conversations open and close. */
export interface ListFilters {
  /** One agent's conversations; "" every agent's. */
  agentId: string;
  status: Status | "";
  holder: Holder;
  search: string;
}

export const NO_FILTERS: ListFilters = { agentId: "", status: "", holder: "", search: "" };

/** The API searches for 3 to 200 characters: fewer search nothing yet. */
const SEARCH_MIN = 3;
const searchOf = (f: ListFilters) => {
  const term = f.search.trim();
  return term.length >= SEARCH_MIN ? term.slice(0, 200) : null;
};

/** How long typing rests before the search is asked (one request per word, not per letter). */
const SEARCH_PAUSE_MS = 250;

/** The filters and the list; `openId` is the open conversation (marked). */
export function ConversationList(
  { filters, onFilters, openId }: {
    filters: ListFilters;
    onFilters: (f: ListFilters) => void;
    openId?: string;
  },
) {
  const [agents] = useQuery({ query: AGENTS });
  const list = agents.data?.agents.edges.map((e) => e.node) ?? [];
  const names = new Map(list.map((a) => [a.id, a.name]));
  const [typed, setTyped] = useState(filters.search);
  useEffect(() => {
    if (typed === filters.search) return;
    const timer = setTimeout(() => onFilters({ ...filters, search: typed }), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  const set = (part: Partial<ListFilters>) => onFilters({ ...filters, ...part });
  return (
    <>
      <h1>Conversations</h1>
      <ErrorNote error={agents.error} />
      {agents.data && !list.length && <p class="note">No agents yet: create one under Agents.</p>}
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label class="search">
          Search
          <input
            type="search"
            value={typed}
            placeholder="Name, number or words of a message"
            onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => {
              // Enter asks at once; Escape clears.
              if (e.key === "Enter") set({ search: typed });
              if (e.key === "Escape" && typed) {
                setTyped("");
                set({ search: "" });
              }
            }}
          />
        </label>
        <fieldset class="holders">
          <legend class="visually-hidden">Show</legend>
          {HOLDERS.map(([value, name]) => (
            <label key={name} class="pill">
              <input
                type="radio"
                name="holder"
                value={value}
                checked={filters.holder === value}
                onChange={() => set({ holder: value })}
              />
              {name}
            </label>
          ))}
        </fieldset>
        <label class="inline">
          Agent
          <select
            value={filters.agentId}
            onChange={(e) => set({ agentId: (e.target as HTMLSelectElement).value })}
          >
            <option value="">All agents</option>
            {list.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select>
        </label>
        <label class="inline">
          Status
          <select
            value={filters.status}
            onChange={(e) => set({ status: (e.target as HTMLSelectElement).value as Status | "" })}
          >
            <option value="">All</option>
            {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
      </form>
      {typed.trim() && typed.trim().length < SEARCH_MIN && (
        <p class="muted">Type at least {SEARCH_MIN} characters to search.</p>
      )}
      <Pages
        key={JSON.stringify({ ...filters, search: searchOf(filters) })}
        filters={filters}
        openId={openId}
        agentNames={names}
      />
    </>
  );
}

/**
 * The pages loaded so far, each read with the cursor its predecessor ends at now: as the newest
 * activity moves rows up, each page reads itself again after the one before, so no row falls
 * between two pages; a row shown by an earlier page is not shown twice.
 */
function Pages(
  { filters, openId, agentNames }: { filters: ListFilters; openId?: string; agentNames: Map<string, string> },
) {
  const [pages, setPages] = useState(1);
  return (
    <ul class="list conversations" aria-label="Conversations" aria-live="polite">
      <ListPage
        filters={filters}
        after={null}
        index={0}
        pages={pages}
        shown={[]}
        openId={openId}
        agentNames={agentNames}
        onMore={() => setPages((n) => n + 1)}
      />
    </ul>
  );
}

function ListPage(
  { filters, after, index, pages, shown, openId, agentNames, onMore }: {
    filters: ListFilters;
    after: string | null;
    index: number;
    pages: number;
    shown: string[];
    openId?: string;
    agentNames: Map<string, string>;
    onMore: () => void;
  },
) {
  const { version } = useDesk();
  const [result, reread] = useQuery({
    query: INBOX,
    variables: {
      agentId: filters.agentId || null,
      status: filters.status || null,
      assignee: filters.holder || null,
      search: searchOf(filters),
      after,
    },
  });
  useRereadOnConnect(() => reread({ requestPolicy: "network-only" }));
  // Every event reads the list again: new conversations, holders, counts and last messages.
  useEffect(() => {
    if (version > 0) reread({ requestPolicy: "network-only" });
  }, [version]);
  const page = result.data?.inbox;
  const rows = page?.edges.map((e) => e.node).filter((c) => !shown.includes(c.id)) ?? [];
  const last = index === pages - 1;
  return (
    <>
      {index === 0 && (result.error || (page && !rows.length)) && (
        <li class="empty">
          <ErrorNote error={result.error} />
          {page && !rows.length && (
            <p class="note">
              {searchOf(filters)
                ? "No conversation matches."
                : "No conversations yet. They appear here as they arrive."}
            </p>
          )}
        </li>
      )}
      {rows.map((c) => <RowItem key={c.id} c={c} open={c.id === openId} agent={agentNames.get(c.agentId)} />)}
      {page?.pageInfo.hasNextPage && page.pageInfo.endCursor && (last
        ? (
          <li class="more">
            <button type="button" class="secondary" onClick={onMore}>Load more</button>
          </li>
        )
        : (
          <ListPage
            filters={filters}
            after={page.pageInfo.endCursor}
            index={index + 1}
            pages={pages}
            shown={[...shown, ...rows.map((c) => c.id)]}
            openId={openId}
            agentNames={agentNames}
            onMore={onMore}
          />
        ))}
    </>
  );
}

function RowItem({ c, open, agent }: { c: Row; open: boolean; agent?: string }) {
  const last = c.messages.edges[0]?.node;
  const unread = c.unread ?? 0;
  return (
    <li data-status={c.status} data-id={c.id} class={open ? "open" : undefined}>
      <a href={href("conversation", c.id)} aria-current={open ? "page" : undefined}>
        <span class="title">
          {c.contactName || c.contactId}
          {unread > 0 && (
            <span class="unread" title={`${unread} unread`}>
              {unread}
              <span class="visually-hidden">unread</span>
            </span>
          )}
        </span>
        <Badge value={c.status} />
        <span class="muted row-meta">
          {agent ?? "Agent"} · {c.assignee ? c.assignee.name : "Unassigned"} ·{" "}
          <Time value={c.lastMessageAt} />
        </span>
        {last && <span class="preview">{previewOf(last)}</span>}
      </a>
    </li>
  );
}

/** What a message says in one line: its text, or what was understood of its media. */
export function previewOf(
  m: Pick<ResultOf<typeof LastMessage>, "type" | "content" | "text" | "transcript">,
): string {
  const said = m.transcript ?? m.text ?? m.content;
  return m.type === "TEXT" ? said : `[${m.type.toLowerCase()}] ${said ?? ""}`;
}
