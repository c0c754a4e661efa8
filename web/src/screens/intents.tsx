/// <reference lib="dom" />
/**
 * An agent's intents: what each is called, when it fires (the message types it is detected in),
 * the fields the model must fill and the URL it calls; created and edited in one editor, deleted
 * after a question. For OWNER and MANAGER (the route shows it to no one else).
 */
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { enumValues, graphql, type ResultOf, type VariablesOf } from "../schema.ts";
import { ErrorNote } from "../ui.tsx";
import { ConfirmButton, methodsOffered } from "../owner_ui.tsx";

const IntentFields = graphql(`fragment ConsoleIntent on Intent {
  id name tag description triggerOnTypes webhookUrl webhookMethod
  requiredFields { name type description }
}`);

const INTENTS = graphql(
  `query ConsoleIntents($agentId: ID!) {
    intents(agentId: $agentId, first: 100) { edges { node { ...ConsoleIntent } } }
  }`,
  [IntentFields],
);
const CREATE = graphql(
  `mutation ConsoleCreateIntent($agentId: ID!, $input: CreateIntentInput!) {
    createIntent(agentId: $agentId, input: $input) { ...ConsoleIntent }
  }`,
  [IntentFields],
);
const UPDATE = graphql(
  `mutation ConsoleUpdateIntent($agentId: ID!, $id: ID!, $input: UpdateIntentInput!) {
    updateIntent(agentId: $agentId, id: $id, input: $input) { ...ConsoleIntent }
  }`,
  [IntentFields],
);
const DELETE = graphql(`mutation ConsoleDeleteIntent($agentId: ID!, $id: ID!) {
  deleteIntent(agentId: $agentId, id: $id)
}`);

type Intent = ResultOf<typeof IntentFields>;
type Input = VariablesOf<typeof CREATE>["input"];
type RequiredField = Input["requiredFields"][number];
type MessageType = Input["triggerOnTypes"][number];
type Method = NonNullable<Input["webhookMethod"]>;

/** What each message type means to the person choosing when an intent fires. */
const TYPE_NAMES: Record<string, string> = {
  TEXT: "Text",
  AUDIO: "Voice notes",
  IMAGE: "Images",
  DOCUMENT: "Documents",
};
/** Field types the model understands at a glance; any other word is taken too. */
const FIELD_TYPES = ["string", "number", "date", "time", "boolean", "email", "phone"];

export function IntentsScreen({ agentId }: { agentId: string }) {
  const [result, reread] = useQuery({ query: INTENTS, variables: { agentId } });
  // The intent being edited: its id, "new", or none.
  const [editing, setEditing] = useState<string | null>(null);
  const intents = result.data?.intents.edges.map((e) => e.node) ?? [];
  const changed = () => {
    setEditing(null);
    reread({ requestPolicy: "network-only" });
  };
  return (
    <div>
      <h2>Intents</h2>
      <p class="muted">
        An intent is an action the agent takes by writing its tag in a reply: the fields it filled in are sent
        to the intent's URL, and the URL's answer takes the tag's place.
      </p>
      <ErrorNote error={result.error} />
      {result.data && !intents.length && editing !== "new" && <p class="note">No intents yet.</p>}
      {editing === "new"
        ? <IntentEditor agentId={agentId} onDone={changed} onCancel={() => setEditing(null)} />
        : (
          <div class="buttons">
            <button type="button" onClick={() => setEditing("new")}>New intent</button>
          </div>
        )}
      <ul class="cards" aria-label="Intents">
        {intents.map((intent) => (
          <li key={intent.id} class="card" aria-label={intent.name}>
            {editing === intent.id
              ? (
                <IntentEditor
                  agentId={agentId}
                  intent={intent}
                  onDone={changed}
                  onCancel={() => setEditing(null)}
                />
              )
              : (
                <IntentCard
                  agentId={agentId}
                  intent={intent}
                  onEdit={() => setEditing(intent.id)}
                  onDeleted={changed}
                />
              )}
          </li>
        ))}
      </ul>
    </div>
  );
}

function IntentCard(
  { agentId, intent, onEdit, onDeleted }: {
    agentId: string;
    intent: Intent;
    onEdit: () => void;
    onDeleted: () => void;
  },
) {
  const [state, remove] = useMutation(DELETE);
  return (
    <div>
      <h3>
        {intent.name} <code class="muted">[{intent.tag}]</code>
      </h3>
      <p class="rationale">{intent.description}</p>
      <dl class="effects">
        <div>
          <dt>Fires on</dt>
          <dd>{intent.triggerOnTypes.map((t) => TYPE_NAMES[t] ?? t).join(", ")}</dd>
        </div>
        <div>
          <dt>Calls</dt>
          <dd>
            {intent.webhookMethod} <code>{intent.webhookUrl}</code>
          </dd>
        </div>
        <div>
          <dt>Required fields</dt>
          <dd>
            {intent.requiredFields.length
              ? (
                <dl class="fields">
                  {intent.requiredFields.map((f) => (
                    <div key={f.name}>
                      <dt>
                        {f.name} <span class="muted">({f.type})</span>
                      </dt>
                      <dd>{f.description}</dd>
                    </div>
                  ))}
                </dl>
              )
              : "none"}
          </dd>
        </div>
      </dl>
      <ErrorNote error={state.error} />
      <div class="buttons">
        <button type="button" class="secondary" onClick={onEdit}>Edit</button>
        <ConfirmButton
          label="Delete"
          question={`Delete the intent "${intent.name}"? The agent stops using its tag at once.`}
          confirm="Delete intent"
          busy={state.fetching}
          onConfirm={async () => {
            const r = await remove({ agentId, id: intent.id });
            if (!r.error) onDeleted();
          }}
        />
      </div>
    </div>
  );
}

/** The editor of a new intent or of `intent`: every field, saved whole. */
function IntentEditor(
  { agentId, intent, onDone, onCancel }: {
    agentId: string;
    intent?: Intent;
    onDone: () => void;
    onCancel: () => void;
  },
) {
  const [created, create] = useMutation(CREATE);
  const [updated, update] = useMutation(UPDATE);
  const [fields, setFields] = useState<RequiredField[]>(() =>
    intent?.requiredFields.map((f) => ({ ...f })) ?? []
  );
  const [problem, setProblem] = useState<string | null>(null);
  // In the order a person reads them (the schema lists them alphabetically).
  const offered = enumValues("MessageType");
  const types = [...Object.keys(TYPE_NAMES).filter((t) => offered.includes(t)), ...offered]
    .filter((t, i, all) => all.indexOf(t) === i) as MessageType[];
  const methods = methodsOffered(enumValues("HttpMethod")) as Method[];
  const [method, setMethod] = useState<Method>(intent?.webhookMethod ?? methods[0]);
  const setField = (i: number, key: keyof RequiredField, value: string) =>
    setFields(fields.map((f, j) => j === i ? { ...f, [key]: value } : f));
  const title = intent ? `Edit ${intent.name}` : "New intent";

  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const triggerOnTypes = types.filter((t) => f.get(`type-${t}`) === "on");
    if (!triggerOnTypes.length) return setProblem("Choose at least one message type it fires on.");
    setProblem(null);
    const input: Input = {
      name: String(f.get("name") ?? "").trim(),
      description: String(f.get("description") ?? "").trim(),
      webhookUrl: String(f.get("webhookUrl") ?? "").trim(),
      webhookMethod: method,
      triggerOnTypes,
      requiredFields: fields.map((r) => ({
        name: r.name.trim(),
        type: r.type.trim(),
        description: r.description.trim(),
      })),
    };
    const r = intent ? await update({ agentId, id: intent.id, input }) : await create({ agentId, input });
    if (!r.error) onDone();
  };
  const error = created.error ?? updated.error;
  return (
    <form onSubmit={submit} aria-label={title} class="stack editor">
      <h3>{title}</h3>
      <div class="settings">
        <label>
          Name
          <input name="name" required maxLength={100} defaultValue={intent?.name ?? ""} />
        </label>
        <label>
          Method
          <select
            name="webhookMethod"
            value={method}
            onChange={(e) => setMethod((e.target as HTMLSelectElement).value as Method)}
          >
            {methods.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </label>
        <label class="wide">
          Description
          <textarea name="description" rows={2} required defaultValue={intent?.description ?? ""} />
        </label>
        <label class="wide">
          Webhook URL
          <input
            name="webhookUrl"
            type="url"
            required
            placeholder="https://example.com/hooks/booking"
            defaultValue={intent?.webhookUrl ?? ""}
          />
        </label>
      </div>
      <fieldset>
        <legend>Fires on</legend>
        <div class="flags">
          {types.map((t) => (
            <label key={t} class="check">
              <input
                type="checkbox"
                name={`type-${t}`}
                defaultChecked={intent ? intent.triggerOnTypes.includes(t) : t === "TEXT"}
              />
              {TYPE_NAMES[t] ?? t}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>Required fields</legend>
        {!fields.length && <p class="muted">None: the tag carries no fields.</p>}
        <datalist id="field-types">
          {FIELD_TYPES.map((t) => <option key={t} value={t} />)}
        </datalist>
        <ol class="required-fields">
          {fields.map((field, i) => (
            <li key={i}>
              <label>
                Field {i + 1} name
                <input
                  required
                  pattern="[A-Za-z_][A-Za-z0-9_\-]{0,63}"
                  title="Letters, digits, _ and -, not starting with a digit"
                  value={field.name}
                  onInput={(e) => setField(i, "name", (e.target as HTMLInputElement).value)}
                />
              </label>
              <label>
                Field {i + 1} type
                <input
                  required
                  list="field-types"
                  value={field.type}
                  onInput={(e) => setField(i, "type", (e.target as HTMLInputElement).value)}
                />
              </label>
              <label class="wide">
                Field {i + 1} description
                <input
                  value={field.description}
                  onInput={(e) => setField(i, "description", (e.target as HTMLInputElement).value)}
                />
              </label>
              <button
                type="button"
                class="secondary"
                onClick={() => setFields(fields.filter((_, j) => j !== i))}
              >
                Remove field {i + 1}
              </button>
            </li>
          ))}
        </ol>
        <button
          type="button"
          class="secondary"
          onClick={() => setFields([...fields, { name: "", type: "string", description: "" }])}
        >
          Add field
        </button>
      </fieldset>
      <ErrorNote error={problem ?? error} />
      <div class="buttons">
        <button type="submit" disabled={created.fetching || updated.fetching}>
          {intent ? "Save intent" : "Create intent"}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
