/// <reference lib="dom" />
/**
 * The workspace's agents: name, status and counts, each a link to its settings and prompt. An
 * OWNER or MANAGER also creates one from a template (the ones the server offers), and deletes one
 * from its page after a question (`DeleteAgent`).
 */
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { href, navigate } from "../router.ts";
import { enumValues, graphql, type VariablesOf } from "../schema.ts";
import { can, type Role } from "../session.ts";
import { Badge, ErrorNote } from "../ui.tsx";
import { ConfirmButton, textOrNull } from "../owner_ui.tsx";

const AGENTS = graphql(`query ConsoleAgents {
  agents(first: 100) { edges { node { id name status model jobName } } }
}`);
const CREATE = graphql(`mutation ConsoleCreateAgent($input: CreateAgentInput!) {
  createAgent(input: $input) { id name status model jobName }
}`);
const DELETE = graphql(`mutation ConsoleDeleteAgent($id: ID!) { deleteAgent(id: $id) }`);

type Template = NonNullable<VariablesOf<typeof CREATE>["input"]["template"]>;

export function AgentsScreen({ role }: { role: Role }) {
  const [result, reread] = useQuery({ query: AGENTS });
  const [adding, setAdding] = useState(false);
  const rows = result.data?.agents.edges.map((e) => e.node) ?? [];
  return (
    <section>
      <h1>Agents</h1>
      <ErrorNote error={result.error} />
      {can.manage(role) && (adding
        ? (
          <NewAgent
            onCancel={() => setAdding(false)}
            onCreated={(id) => {
              reread({ requestPolicy: "network-only" });
              navigate("agents", id);
            }}
          />
        )
        : (
          <div class="buttons list-actions">
            <button type="button" onClick={() => setAdding(true)}>New agent</button>
          </div>
        ))}
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

/** What each template makes of an agent, for the ones the console knows; others show by name. */
const TEMPLATE_NOTES: Record<string, string> = {
  SUPORTE: "customer support, prompt in Portuguese",
  SUPPORT: "customer support, prompt in English",
};

function NewAgent({ onCreated, onCancel }: { onCreated: (id: string) => void; onCancel: () => void }) {
  const [state, create] = useMutation(CREATE);
  const templates = enumValues("AgentTemplate") as Template[];
  const [template, setTemplate] = useState<Template>(templates[0]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const r = await create({
      input: {
        name: String(f.get("name") ?? "").trim(),
        template,
        jobName: textOrNull(f.get("jobName")),
        jobSite: textOrNull(f.get("jobSite")),
        jobDescription: textOrNull(f.get("jobDescription")),
      },
    });
    if (r.data) onCreated(r.data.createAgent.id);
  };
  return (
    <form onSubmit={submit} aria-label="New agent" class="card stack">
      <h2>New agent</h2>
      <p class="muted">
        The template writes the agent's first system prompt from these fields; everything can be changed
        afterwards. It starts ACTIVE.
      </p>
      <div class="settings">
        <label>
          Name
          <input name="name" required maxLength={100} placeholder="Ana" />
        </label>
        <label>
          Template
          <select
            name="template"
            value={template}
            onChange={(e) => setTemplate((e.target as HTMLSelectElement).value as Template)}
          >
            {templates.map((t) => (
              <option key={t} value={t}>{TEMPLATE_NOTES[t] ? `${t} (${TEMPLATE_NOTES[t]})` : t}</option>
            ))}
          </select>
        </label>
        <label>
          Company
          <input name="jobName" placeholder="Acme Tea" />
        </label>
        <label>
          Company site
          <input name="jobSite" type="url" placeholder="https://example.com" />
        </label>
        <label class="wide">
          What the company does
          <textarea name="jobDescription" rows={2} />
        </label>
      </div>
      <ErrorNote error={state.error} />
      <div class="buttons">
        <button type="submit" disabled={state.fetching}>Create agent</button>
        <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}

/** Deletes the agent after a question naming what goes with it, then shows the list. */
export function DeleteAgent({ agent }: { agent: { id: string; name: string } }) {
  const [state, remove] = useMutation(DELETE);
  return (
    <div class="danger-zone">
      <ErrorNote error={state.error} />
      <ConfirmButton
        label="Delete agent"
        question={`Delete ${agent.name} with all its conversations, messages, intents, channels and webhooks? This cannot be undone.`}
        confirm="Delete agent"
        busy={state.fetching}
        onConfirm={async () => {
          const r = await remove({ id: agent.id });
          if (!r.error) navigate("agents");
        }}
      />
    </div>
  );
}
