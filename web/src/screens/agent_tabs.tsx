/// <reference lib="dom" />
/**
 * An agent's parts for the people who set it up (OWNER, MANAGER): its settings and prompt, its
 * intents, its channels and its event webhooks, each a screen under `#/agents/{id}/...`.
 */
import { useQuery } from "@urql/preact";
import type { ComponentChildren } from "preact";
import { href } from "../router.ts";
import { graphql } from "../schema.ts";
import { ErrorNote } from "../ui.tsx";
import { IntentsScreen } from "./intents.tsx";
import { ChannelsScreen } from "./channels.tsx";
import { WebhooksScreen } from "./webhooks.tsx";

const PARTS = [
  ["", "Settings"],
  ["intents", "Intents"],
  ["channels", "Channels"],
  ["webhooks", "Webhooks"],
] as const;
export type AgentPart = typeof PARTS[number][0];

/** Links to the agent's parts, the current one marked. */
export function AgentTabs({ agentId, current }: { agentId: string; current: AgentPart }) {
  return (
    <nav class="tabs" aria-label="Agent">
      {PARTS.map(([part, label]) => (
        <a
          key={part}
          href={part ? href("agents", agentId, part) : href("agents", agentId)}
          aria-current={part === current ? "page" : undefined}
        >
          {label}
        </a>
      ))}
    </nav>
  );
}

const AGENT_NAME = graphql(`query ConsoleAgentName($id: ID!) { agent(id: $id) { id name } }`);

/** The part of the agent named by the route (`intents`, `channels`, `webhooks`). */
export function AgentPartScreen(
  { agentId, part, workspaceId }: { agentId: string; part: string; workspaceId: string },
) {
  const [result] = useQuery({ query: AGENT_NAME, variables: { id: agentId } });
  const agent = result.data?.agent;
  const screen = part === "intents"
    ? <IntentsScreen agentId={agentId} />
    : part === "channels"
    ? <ChannelsScreen agentId={agentId} workspaceId={workspaceId} />
    : part === "webhooks"
    ? <WebhooksScreen agentId={agentId} />
    : null;
  if (!screen) return <p class="note">No such screen.</p>;
  return (
    <AgentFrame agentId={agentId} name={agent?.name} current={part as AgentPart}>
      <ErrorNote error={result.error} />
      {screen}
    </AgentFrame>
  );
}

function AgentFrame(
  { agentId, name, current, children }: {
    agentId: string;
    name?: string;
    current: AgentPart;
    children: ComponentChildren;
  },
) {
  return (
    <section>
      <p>
        <a href={href("agents")}>← Agents</a>
      </p>
      <h1>{name ?? "…"}</h1>
      <AgentTabs agentId={agentId} current={current} />
      {children}
    </section>
  );
}
