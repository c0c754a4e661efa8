/// <reference lib="dom" />
/**
 * One agent: every setting and behaviour flag (saved whole, as `replaceAgent` replaces it) with its
 * reminder template (an approved template of its WhatsApp channels, with its parameters, or none),
 * its status, the system prompt with its versions, a line diff between two versions, and "Revert".
 * Roles that may not change agents see the same values, read-only and without buttons.
 */
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { LineDiff } from "../diff.tsx";
import { href } from "../router.ts";
import { graphql, type ResultOf, type VariablesOf } from "../schema.ts";
import { can, type Role } from "../session.ts";
import { Badge, ErrorNote, Time } from "../ui.tsx";
import { AgentTabs } from "./agent_tabs.tsx";
import { DeleteAgent } from "./agents.tsx";
import { type FieldProblem, parametersOf, shapeOf, templateKey, valuesOf } from "../templates.ts";
import {
  approved,
  fieldProblems,
  type ListedTemplate,
  NO_CHOICE,
  type TemplateChoice,
  TemplateFields,
  TemplatePicker,
} from "./templates.tsx";

const AgentFields = graphql(`fragment ConsoleAgent on Agent {
  id status systemPrompt updatedAt
  name jobName jobSite jobDescription trainingContext model temperature template
  messageGroupingTime maxDailyMessages autoCloseMinutes enabledEmoji enabledHumanTransfer enabledReminder
  enabledVision signMessages splitMessages
  reminderTemplate { name language parameters }
}`);
const VersionFields = graphql(`fragment ConsolePromptVersion on PromptVersion {
  id systemPrompt rationale authorLabel createdAt revertedFrom
}`);

const AGENT = graphql(
  `query ConsoleAgent($id: ID!) {
    agent(id: $id) { ...ConsoleAgent }
    promptVersions(agentId: $id, first: 50) { edges { node { ...ConsolePromptVersion } } }
    channels(agentId: $id, first: 50) { edges { node {
      id type label inboundUrl phoneNumberId
      templates(first: 100) { edges { node { ...ConsoleTemplate } } }
    } } }
  }`,
  [AgentFields, VersionFields, TemplateFields],
);

const REPLACE = graphql(
  `mutation ConsoleReplaceAgent($id: ID!, $input: ReplaceAgentInput!) {
    replaceAgent(id: $id, input: $input) { ...ConsoleAgent }
  }`,
  [AgentFields],
);
const SET_STATUS = graphql(`mutation ConsoleAgentStatus($id: ID!, $input: SetAgentStatusInput!) {
  setAgentStatus(id: $id, input: $input) { id status }
}`);
const UPDATE_PROMPT = graphql(`mutation ConsoleUpdatePrompt($id: ID!, $input: UpdateAgentPromptInput!) {
  updateAgentPrompt(id: $id, input: $input) { id systemPrompt updatedAt }
}`);
const REVERT = graphql(`mutation ConsoleRevertPrompt($id: ID!, $versionId: ID!) {
  revertAgentPrompt(id: $id, versionId: $versionId) { id systemPrompt updatedAt }
}`);

type Agent = ResultOf<typeof AgentFields>;
type PromptVersion = ResultOf<typeof VersionFields>;
type SettingsInput = VariablesOf<typeof REPLACE>["input"];
/** The agent's behaviour flags: its fields that are true or false. */
type Flag = { [K in keyof Agent]: Agent[K] extends boolean ? K : never }[keyof Agent];

/** The behaviour flags, with what each does. */
const FLAGS: [Flag, string][] = [
  ["enabledHumanTransfer", "Hands over to a person when asked"],
  ["enabledReminder", "Reminds a silent customer once"],
  ["splitMessages", "Splits long answers into several messages"],
  ["enabledEmoji", "Uses emoji"],
  ["signMessages", "Signs its messages with its name"],
  ["enabledVision", "Sees images (vision)"],
];

const GROUPING_TIMES: NonNullable<SettingsInput["messageGroupingTime"]>[] = ["FAST", "MEDIUM", "SLOW"];

export function AgentScreen({ id, role }: { id: string; role: Role }) {
  const [result, reread] = useQuery({ query: AGENT, variables: { id } });
  const agent = result.data?.agent;
  if (!agent) {
    return (
      <section>
        <ErrorNote error={result.error} />
        {result.fetching && <p>Loading…</p>}
      </section>
    );
  }
  const editable = can.manage(role);
  const versions = result.data!.promptVersions.edges.map((e) => e.node);
  const channels = result.data!.channels.edges.map((e) => e.node);
  const changed = () => reread({ requestPolicy: "network-only" });
  // A reminder outside WhatsApp's window can only be a template approved on one of its WhatsApp channels.
  const reminderTemplates = uniqueTemplates(
    channels.filter((c) => c.type === "WHATSAPP").flatMap((c) =>
      approved(c.templates.edges.map((e) => e.node))
    ),
  );
  return (
    <section>
      <p>
        <a href={href("agents")}>← Agents</a>
      </p>
      <h1>
        {agent.name} <Badge value={agent.status} />
      </h1>
      {editable && <AgentTabs agentId={agent.id} current="" />}
      {editable && <StatusButton agent={agent} />}
      <Settings key={agent.id} agent={agent} editable={editable} reminderTemplates={reminderTemplates} />
      <Prompt agent={agent} editable={editable} onChanged={changed} />
      <Versions agent={agent} versions={versions} editable={editable} onChanged={changed} />
      <h2>Channels</h2>
      {channels.length === 0 && <p class="muted">No channels.</p>}
      <ul class="plain">
        {channels.map((c) => (
          <li key={c.id}>
            {c.label} ({c.type}
            {c.phoneNumberId ? `, ${c.phoneNumberId}` : ""}): <code>{c.inboundUrl}</code>
          </li>
        ))}
      </ul>
      {editable && <DeleteAgent agent={agent} />}
    </section>
  );
}

function StatusButton({ agent }: { agent: Agent }) {
  const [state, setStatus] = useMutation(SET_STATUS);
  const next = agent.status === "ACTIVE" ? "PAUSED" : "ACTIVE";
  return (
    <div class="buttons">
      <button
        type="button"
        class="secondary"
        onClick={() => setStatus({ id: agent.id, input: { status: next } })}
      >
        {next === "PAUSED" ? "Pause" : "Resume"}
      </button>
      <ErrorNote error={state.error} />
    </div>
  );
}

/** Empty text is null, as the API's optional fields are. */
const textOrNull = (v: FormDataEntryValue | null) => {
  const s = String(v ?? "").trim();
  return s === "" ? null : s;
};
const numberOrNull = (v: FormDataEntryValue | null) => {
  const s = String(v ?? "").trim();
  return s === "" ? null : Number(s);
};

/** One of each template (name and language) approved on several channels. */
function uniqueTemplates(list: ListedTemplate[]): ListedTemplate[] {
  const seen = new Map<string, ListedTemplate>();
  for (const t of list) if (!seen.has(templateKey(t))) seen.set(templateKey(t), t);
  return [...seen.values()];
}

/** The agent's stored reminder template as a choice of the form (kept even if no longer listed). */
function storedReminder(agent: Agent, templates: ListedTemplate[]): TemplateChoice {
  const stored = agent.reminderTemplate;
  if (!stored) return NO_CHOICE;
  const template = templates.find((t) => templateKey(t) === templateKey(stored)) ??
    {
      name: stored.name,
      language: stored.language,
      category: "",
      status: "",
      components: [],
      parameterFormat: "",
    };
  return { template, values: valuesOf(shapeOf(template), stored.parameters) };
}

function Settings(
  { agent, editable, reminderTemplates }: {
    agent: Agent;
    editable: boolean;
    reminderTemplates: ListedTemplate[];
  },
) {
  const [state, replace] = useMutation(REPLACE);
  const [saved, setSaved] = useState(false);
  const [reminder, setReminder] = useState<TemplateChoice>(() => storedReminder(agent, reminderTemplates));
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const listed = (t: { name: string; language: string }) =>
    reminderTemplates.some((r) => templateKey(r) === templateKey(t));
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const flags = Object.fromEntries(FLAGS.map(([k]) => [k, f.get(k) === "on"])) as Record<Flag, boolean>;
    const input: SettingsInput = {
      name: String(f.get("name") ?? "").trim(),
      jobName: textOrNull(f.get("jobName")),
      jobSite: textOrNull(f.get("jobSite")),
      jobDescription: textOrNull(f.get("jobDescription")),
      trainingContext: textOrNull(f.get("trainingContext")),
      model: textOrNull(f.get("model")),
      temperature: numberOrNull(f.get("temperature")),
      template: agent.template,
      messageGroupingTime: GROUPING_TIMES.find((g) => g === f.get("messageGroupingTime")),
      maxDailyMessages: numberOrNull(f.get("maxDailyMessages")),
      autoCloseMinutes: numberOrNull(f.get("autoCloseMinutes")),
      ...flags,
      reminderTemplate: reminder.template
        ? {
          name: reminder.template.name,
          language: reminder.template.language,
          // A stored template no longer listed (not approved now) keeps its parameters as they were.
          parameters: listed(reminder.template)
            ? parametersOf(shapeOf(reminder.template), reminder.values)
            : agent.reminderTemplate?.parameters ?? {},
        }
        : null,
    };
    setSaved(false);
    const r = await replace({ id: agent.id, input });
    setProblems(fieldProblems(r.error).filter((p) => p.path.startsWith("reminderTemplate")));
    if (!r.error) setSaved(true);
  };
  const ro = !editable;
  return (
    <form onSubmit={submit} aria-label="Settings">
      <h2>Settings</h2>
      <fieldset disabled={ro} class="settings">
        <label>
          Name
          <input name="name" defaultValue={agent.name} required />
        </label>
        <label>
          Model
          <input name="model" defaultValue={agent.model} />
        </label>
        <label>
          Job name
          <input name="jobName" defaultValue={agent.jobName ?? ""} />
        </label>
        <label>
          Job site
          <input name="jobSite" type="url" defaultValue={agent.jobSite ?? ""} />
        </label>
        <label class="wide">
          Job description
          <textarea name="jobDescription" rows={3} defaultValue={agent.jobDescription ?? ""} />
        </label>
        <label class="wide">
          Training context
          <textarea name="trainingContext" rows={4} defaultValue={agent.trainingContext ?? ""} />
        </label>
        <label>
          Temperature
          <input
            name="temperature"
            type="number"
            min="0"
            max="2"
            step="0.1"
            defaultValue={agent.temperature?.toString() ?? ""}
          />
        </label>
        <label>
          Message grouping
          {/* Preact sets no default on a <select> (defaultValue is an <input>'s): the option says it. */}
          <select name="messageGroupingTime">
            {GROUPING_TIMES.map((g) => (
              <option key={g} value={g} selected={g === agent.messageGroupingTime}>{g}</option>
            ))}
          </select>
        </label>
        <label>
          Daily replies per contact
          <input
            name="maxDailyMessages"
            type="number"
            min="1"
            defaultValue={agent.maxDailyMessages?.toString() ?? ""}
          />
        </label>
        <label>
          Close after minutes of silence
          <input
            name="autoCloseMinutes"
            type="number"
            min="1"
            required
            defaultValue={String(agent.autoCloseMinutes)}
          />
        </label>
        <div class="wide flags">
          {FLAGS.map(([k, text]) => (
            <label key={k} class="check">
              <input type="checkbox" name={k} defaultChecked={agent[k]} />
              {text}
            </label>
          ))}
        </div>
        <p class="muted wide">Template: {agent.template}</p>
        <div class="wide reminder">
          <h3>Reminder outside WhatsApp's window</h3>
          <p class="muted">
            24 hours after the customer's last message WhatsApp takes only an approved template: the reminder
            is this one, or none is sent.
          </p>
          {reminderTemplates.length === 0 && !reminder.template
            ? <p class="note">No approved template on this agent's WhatsApp channels.</p>
            : (
              <TemplatePicker
                templates={reminderTemplates}
                choice={reminder}
                onChoice={setReminder}
                problems={problems}
                none="None"
                disabled={ro}
              />
            )}
        </div>
      </fieldset>
      <ErrorNote error={problems.length ? null : state.error} />
      {saved && <p class="note" role="status">Settings saved.</p>}
      {editable && (
        <div class="buttons">
          <button type="submit" disabled={state.fetching}>Save settings</button>
        </div>
      )}
    </form>
  );
}

function Prompt({ agent, editable, onChanged }: { agent: Agent; editable: boolean; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [state, update] = useMutation(UPDATE_PROMPT);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const r = await update({
      id: agent.id,
      input: { systemPrompt: String(f.get("systemPrompt")), rationale: String(f.get("rationale")) },
    });
    if (!r.error) {
      setEditing(false);
      onChanged();
    }
  };
  return (
    <div>
      <h2>System prompt</h2>
      {!editing && <pre class="prompt" aria-label="System prompt">{agent.systemPrompt}</pre>}
      {editable && !editing && (
        <div class="buttons">
          <button type="button" class="secondary" onClick={() => setEditing(true)}>Edit prompt</button>
        </div>
      )}
      {editing && (
        <form onSubmit={submit} class="stack">
          <label>
            System prompt
            <textarea name="systemPrompt" rows={12} defaultValue={agent.systemPrompt} required />
          </label>
          <label>
            Why
            <input name="rationale" required />
          </label>
          <ErrorNote error={state.error} />
          <div class="buttons">
            <button type="submit" disabled={state.fetching}>Save prompt</button>
            <button type="button" class="secondary" onClick={() => setEditing(false)}>Cancel</button>
          </div>
        </form>
      )}
    </div>
  );
}

function Versions(
  { agent, versions, editable, onChanged }: {
    agent: Agent;
    versions: PromptVersion[];
    editable: boolean;
    onChanged: () => void;
  },
) {
  const [state, revert] = useMutation(REVERT);
  // Newest first: by default, what the newest version changed from the one before it.
  const [from, setFrom] = useState<string | null>(null);
  const [to, setTo] = useState<string | null>(null);
  const toVersion = versions.find((v) => v.id === to) ?? versions[0];
  const fromVersion = versions.find((v) => v.id === from) ?? versions[1] ?? versions[0];
  const label = (v: PromptVersion) => `${new Date(v.createdAt).toLocaleString()} · ${v.authorLabel}`;
  const doRevert = async (v: PromptVersion) => {
    const r = await revert({ id: agent.id, versionId: v.id });
    if (!r.error) {
      setFrom(null);
      setTo(null);
      onChanged();
    }
  };
  return (
    <div>
      <h2>Prompt versions</h2>
      <ErrorNote error={state.error} />
      <table class="versions">
        <thead>
          <tr>
            <th>When</th>
            <th>By</th>
            <th>Why</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {versions.map((v, i) => (
            <tr key={v.id} aria-label={`Version of ${label(v)}`}>
              <td class="when">
                <Time value={v.createdAt} />
              </td>
              <td class="by">{v.authorLabel}</td>
              <td class="rationale">{v.rationale}</td>
              <td class="action">
                {i === 0
                  ? <span class="muted">current</span>
                  : editable && v.systemPrompt !== agent.systemPrompt && (
                    <button
                      type="button"
                      class="secondary"
                      disabled={state.fetching}
                      onClick={() => doRevert(v)}
                    >
                      Revert
                    </button>
                  )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {versions.length > 1 && fromVersion && toVersion && (
        <div>
          <div class="buttons compare">
            <label class="inline">
              Compare
              <select value={fromVersion.id} onChange={(e) => setFrom((e.target as HTMLSelectElement).value)}>
                {versions.map((v) => <option key={v.id} value={v.id}>{label(v)}</option>)}
              </select>
            </label>
            <label class="inline">
              with
              <select value={toVersion.id} onChange={(e) => setTo((e.target as HTMLSelectElement).value)}>
                {versions.map((v) => <option key={v.id} value={v.id}>{label(v)}</option>)}
              </select>
            </label>
          </div>
          <LineDiff before={fromVersion.systemPrompt} after={toVersion.systemPrompt} label="Prompt diff" />
        </div>
      )}
    </div>
  );
}
