/// <reference lib="dom" />
/** The workspace's agents: name, status and counts, each a link to its settings and prompt. */
import { useQuery } from "@urql/preact";
import { href } from "../router.ts";
import { graphql } from "../schema.ts";
import type { Role } from "../session.ts";
import { Badge, ErrorNote } from "../ui.tsx";

const AGENTS = graphql(`query ConsoleAgents {
  agents(first: 100) { edges { node { id name status model jobName } } }
}`);

export function AgentsScreen(_props: { role: Role }) {
  const [result] = useQuery({ query: AGENTS });
  const rows = result.data?.agents.edges.map((e) => e.node) ?? [];
  return (
    <section>
      <h1>Agents</h1>
      <ErrorNote error={result.error} />
      {result.data && !rows.length && <p class="note">No agents yet.</p>}
      <ul class="list" aria-label="Agents">
        {rows.map((a) => (
          <li key={a.id}>
            <a href={href("agents", a.id)}>
              <span class="title">{a.name}</span>
              <Badge value={a.status} />
              <span class="muted">{[a.jobName, a.model].filter(Boolean).join(" · ")}</span>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}
