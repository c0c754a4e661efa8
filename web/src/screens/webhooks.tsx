/// <reference lib="dom" />
/**
 * An agent's event webhooks: created for the events chosen (one webhook per event, as the API
 * has them, each with its signing secret shown once), "Send test", the delivery log with each
 * attempt's status and error, "Redeliver" of a failed delivery, and delete. The log is read
 * again every second while one of its deliveries is PENDING (no live feed carries deliveries).
 * For OWNER and MANAGER (the route shows it to no one else).
 */
import { useMutation, useQuery } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { enumValues, graphql, type ResultOf, type VariablesOf } from "../schema.ts";
import { Badge, ErrorNote, Time } from "../ui.tsx";
import { ConfirmButton, CopyField, methodsOffered } from "../owner_ui.tsx";

/** The events a webhook can be for, as the API names them, with what each means. */
export const EVENTS: [string, string][] = [
  ["message.received", "a customer's message arrived"],
  ["message.sent", "the agent or a person sent a message"],
  ["conversation.opened", "a conversation started"],
  ["conversation.closed", "a conversation ended"],
  ["human.transferred", "a conversation was handed to a person"],
  ["intent.fired", "the agent used an intent"],
];

const DeliveryFields = graphql(`fragment ConsoleDelivery on WebhookDelivery {
  id event status attemptCount createdAt updatedAt
  attempts { number startedAt httpStatus durationMs error }
}`);
const WebhookFields = graphql(
  `fragment ConsoleWebhook on Webhook {
    id event url method headers lastError createdAt
    deliveries(first: 10) { edges { node { ...ConsoleDelivery } } }
  }`,
  [DeliveryFields],
);
const WEBHOOKS = graphql(
  `query ConsoleWebhooks($agentId: ID!) {
    agent(id: $agentId) { id webhooks(first: 50) { edges { node { ...ConsoleWebhook } } } }
  }`,
  [WebhookFields],
);
const CREATE = graphql(
  `mutation ConsoleCreateWebhook($agentId: ID!, $input: CreateWebhookInput!) {
    createWebhook(agentId: $agentId, input: $input) { signingSecret webhook { ...ConsoleWebhook } }
  }`,
  [WebhookFields],
);
const DELETE = graphql(`mutation ConsoleDeleteWebhook($agentId: ID!, $id: ID!) {
  deleteWebhook(agentId: $agentId, id: $id)
}`);
const SEND_TEST = graphql(
  `mutation ConsoleSendWebhookTest($agentId: ID!, $id: ID!) {
    sendWebhookTest(agentId: $agentId, id: $id) { ...ConsoleDelivery }
  }`,
  [DeliveryFields],
);
const REDELIVER = graphql(
  `mutation ConsoleRedeliver($agentId: ID!, $webhookId: ID!, $id: ID!) {
    redeliverWebhookDelivery(agentId: $agentId, webhookId: $webhookId, id: $id) { ...ConsoleDelivery }
  }`,
  [DeliveryFields],
);

type Webhook = ResultOf<typeof WebhookFields>;
type Delivery = ResultOf<typeof DeliveryFields>;
type Method = NonNullable<VariablesOf<typeof CREATE>["input"]["method"]>;

/** `Name: value` lines as the headers object; a line without a colon is an error to show. */
export function parseHeaders(text: string): Record<string, string> | string {
  const headers: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const colon = line.indexOf(":");
    if (colon < 1) return `"${line}" is not a header: write it as Name: value.`;
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

export function WebhooksScreen({ agentId }: { agentId: string }) {
  const [result, reread] = useQuery({ query: WEBHOOKS, variables: { agentId } });
  const [adding, setAdding] = useState(false);
  // Signing secrets of the webhooks just created, shown this once.
  const [secrets, setSecrets] = useState<{ event: string; secret: string }[]>([]);
  const webhooks = result.data?.agent.webhooks.edges.map((e) => e.node) ?? [];
  const pending = webhooks.some((w) => w.deliveries.edges.some((e) => e.node.status === "PENDING"));
  const refresh = () => reread({ requestPolicy: "network-only" });
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(refresh, 1000);
    return () => clearTimeout(timer);
  }, [pending, result.data]);
  return (
    <div>
      <h2>Event webhooks</h2>
      <p class="muted">
        Your systems hear of what happens in this agent's conversations: each event is posted to the URL,
        signed (Standard Webhooks), and tried three times (at once, after 1 s, after 4 more) before it counts
        as failed.
      </p>
      <ErrorNote error={result.error} />
      {secrets.length > 0 && (
        <div class="note" role="status">
          <p>
            The signing secret verifies that a call comes from here (the <code>webhook-signature</code>{" "}
            header). It is shown only now: keep it in your receiver's settings.
          </p>
          {secrets.map((s) => (
            <CopyField
              key={s.event}
              label={secrets.length > 1 ? `Signing secret (${s.event})` : "Signing secret"}
              value={s.secret}
            />
          ))}
          <div class="buttons">
            <button type="button" class="secondary" onClick={() => setSecrets([])}>I have kept it</button>
          </div>
        </div>
      )}
      {result.data && !webhooks.length && !adding && <p class="note">No webhooks yet.</p>}
      {adding
        ? (
          <NewWebhook
            agentId={agentId}
            onCancel={() => setAdding(false)}
            onCreated={(made) => {
              setAdding(false);
              setSecrets(made);
              refresh();
            }}
          />
        )
        : (
          <div class="buttons">
            <button type="button" onClick={() => setAdding(true)}>New webhook</button>
          </div>
        )}
      <ul class="cards" aria-label="Webhooks">
        {webhooks.map((w) => (
          <li key={w.id} class="card" aria-label={`${w.event} → ${w.url}`}>
            <WebhookCard agentId={agentId} webhook={w} onChanged={refresh} />
          </li>
        ))}
      </ul>
    </div>
  );
}

function NewWebhook(
  { agentId, onCreated, onCancel }: {
    agentId: string;
    onCreated: (made: { event: string; secret: string }[]) => void;
    onCancel: () => void;
  },
) {
  const [state, create] = useMutation(CREATE);
  const [problem, setProblem] = useState<string | null>(null);
  const methods = methodsOffered(enumValues("HttpMethod")) as Method[];
  const [method, setMethod] = useState<Method>(methods[0]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const events = EVENTS.map(([name]) => name).filter((name) => f.get(`event-${name}`) === "on");
    if (!events.length) return setProblem("Choose at least one event.");
    const headers = parseHeaders(String(f.get("headers") ?? ""));
    if (typeof headers === "string") return setProblem(headers);
    setProblem(null);
    const url = String(f.get("url") ?? "").trim();
    const made: { event: string; secret: string }[] = [];
    // One webhook per event: the first refusal stops the rest, and the ones made are kept and shown.
    for (const event of events) {
      const r = await create({ agentId, input: { event, url, method, headers } });
      if (!r.data) break;
      made.push({ event, secret: r.data.createWebhook.signingSecret });
    }
    if (made.length === events.length) onCreated(made);
    else if (made.length) {
      setProblem(`Created for ${made.map((m) => m.event).join(", ")} only.`);
      onCreated(made);
    }
  };
  return (
    <form onSubmit={submit} aria-label="New webhook" class="card stack">
      <h3>New webhook</h3>
      <div class="settings">
        <label class="wide">
          URL
          <input name="url" type="url" required placeholder="https://example.com/hooks/switchboard" />
        </label>
        <label>
          Method
          <select
            name="method"
            value={method}
            onChange={(e) => setMethod((e.target as HTMLSelectElement).value as Method)}
          >
            {methods.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </label>
        <label>
          Headers (one per line, Name: value)
          <textarea name="headers" rows={2} spellcheck={false} placeholder="Authorization: Bearer …" />
        </label>
      </div>
      <fieldset>
        <legend>Events</legend>
        <div class="events">
          {EVENTS.map(([name, means]) => (
            <label key={name} class="check">
              <input type="checkbox" name={`event-${name}`} />
              <span>
                <code>{name}</code> <span class="muted">{means}</span>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      <ErrorNote error={problem ?? state.error} />
      <div class="buttons">
        <button type="submit" disabled={state.fetching}>Create webhook</button>
        <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}

/** A webhook's `lastError` as labelled fields (its shape: status, error, at, attempts, event). */
function LastError({ value }: { value: unknown }) {
  if (!value || typeof value !== "object") return null;
  const e = value as Record<string, unknown>;
  const text = (v: unknown) => (v === null || v === undefined ? "none" : String(v));
  return (
    <div class="last-error">
      <h4>Last failure</h4>
      <dl class="effects">
        <div>
          <dt>When</dt>
          <dd>{typeof e.at === "string" ? <Time value={e.at} /> : text(e.at)}</dd>
        </div>
        <div>
          <dt>Event</dt>
          <dd>{text(e.event)}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>{e.status === null ? "no answer" : text(e.status)}</dd>
        </div>
        <div>
          <dt>Error</dt>
          <dd>{text(e.error)}</dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd>{text(e.attempts)}</dd>
        </div>
      </dl>
    </div>
  );
}

function WebhookCard(
  { agentId, webhook, onChanged }: { agentId: string; webhook: Webhook; onChanged: () => void },
) {
  const [testing, sendTest] = useMutation(SEND_TEST);
  const [deleting, remove] = useMutation(DELETE);
  const headers = Object.entries((webhook.headers ?? {}) as Record<string, string>);
  const deliveries = webhook.deliveries.edges.map((e) => e.node);
  return (
    <div>
      <h3>
        <code>{webhook.event}</code>
      </h3>
      <dl class="effects">
        <div>
          <dt>Calls</dt>
          <dd>
            {webhook.method} <code>{webhook.url}</code>
          </dd>
        </div>
        <div>
          <dt>Headers</dt>
          <dd>{headers.length ? headers.map(([k, v]) => `${k}: ${v}`).join("; ") : "none"}</dd>
        </div>
      </dl>
      <LastError value={webhook.lastError} />
      <ErrorNote error={testing.error ?? deleting.error} />
      <div class="buttons">
        <button
          type="button"
          class="secondary"
          disabled={testing.fetching}
          onClick={async () => {
            const r = await sendTest({ agentId, id: webhook.id });
            if (!r.error) onChanged();
          }}
        >
          Send test
        </button>
        <ConfirmButton
          label="Delete"
          question={`Delete the ${webhook.event} webhook to ${webhook.url} with its delivery log?`}
          confirm="Delete webhook"
          busy={deleting.fetching}
          onConfirm={async () => {
            const r = await remove({ agentId, id: webhook.id });
            if (!r.error) onChanged();
          }}
        />
      </div>
      <h4>Deliveries</h4>
      {deliveries.length === 0
        ? <p class="muted">None yet.</p>
        : (
          <ol class="deliveries" aria-label={`Deliveries of ${webhook.event}`}>
            {deliveries.map((d) => (
              <DeliveryRow key={d.id} agentId={agentId} webhookId={webhook.id} delivery={d} />
            ))}
          </ol>
        )}
    </div>
  );
}

function DeliveryRow(
  { agentId, webhookId, delivery }: { agentId: string; webhookId: string; delivery: Delivery },
) {
  const [state, redeliver] = useMutation(REDELIVER);
  return (
    <li class="delivery" aria-label={`${delivery.event} delivery`}>
      <p class="delivery-head">
        <Badge value={delivery.status} /> <code>{delivery.event}</code>{" "}
        <span class="muted">
          <Time value={delivery.createdAt} />
        </span>{" "}
        <span>{delivery.attemptCount} {delivery.attemptCount === 1 ? "attempt" : "attempts"}</span>
      </p>
      {delivery.attempts.length > 0 && (
        <table class="attempts">
          <thead>
            <tr>
              <th>#</th>
              <th>At</th>
              <th>Status</th>
              <th>Time</th>
              <th>Error</th>
            </tr>
          </thead>
          <tbody>
            {delivery.attempts.map((a) => (
              <tr key={a.number}>
                <td>{a.number}</td>
                <td>
                  <Time value={a.startedAt} />
                </td>
                <td>{a.httpStatus ?? "no answer"}</td>
                <td>{a.durationMs} ms</td>
                <td class="attempt-error">{a.error ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ErrorNote error={state.error} />
      {delivery.status === "FAILED" && (
        <div class="buttons">
          <button
            type="button"
            class="secondary"
            disabled={state.fetching}
            onClick={() => redeliver({ agentId, webhookId, id: delivery.id })}
          >
            Redeliver
          </button>
        </div>
      )}
    </li>
  );
}
