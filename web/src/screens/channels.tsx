/// <reference lib="dom" />
/**
 * An agent's channels. A WhatsApp number takes its four credentials once: the page sends them and
 * never reads them back (the API has no field for them), only that they are set; right after, it
 * shows the callback URL and verify token to paste into Meta's app, and then whether Meta's verify
 * handshake has been seen. An API channel shows its endpoint and a call to try it with curl.
 * For OWNER and MANAGER (the route shows it to no one else).
 */
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { graphql, type ResultOf } from "../schema.ts";
import { Badge, ErrorNote, Time } from "../ui.tsx";
import { ConfirmButton, CopyField, textOrNull } from "../owner_ui.tsx";

const ChannelFields = graphql(`fragment ConsoleChannel on Channel {
  id type label inboundUrl phoneNumberId businessAccountId verifiedAt createdAt
}`);
const CHANNELS = graphql(
  `query ConsoleChannels($agentId: ID!) {
    channels(agentId: $agentId, first: 100) { edges { node { ...ConsoleChannel } } }
  }`,
  [ChannelFields],
);
const CREATE = graphql(
  `mutation ConsoleCreateChannel($agentId: ID!, $input: CreateChannelInput!) {
    createChannel(agentId: $agentId, input: $input) { ...ConsoleChannel }
  }`,
  [ChannelFields],
);
const UPDATE = graphql(
  `mutation ConsoleUpdateChannel($agentId: ID!, $id: ID!, $input: UpdateChannelInput!) {
    updateChannel(agentId: $agentId, id: $id, input: $input) { ...ConsoleChannel }
  }`,
  [ChannelFields],
);
const DELETE = graphql(`mutation ConsoleDeleteChannel($agentId: ID!, $id: ID!) {
  deleteChannel(agentId: $agentId, id: $id)
}`);

type Channel = ResultOf<typeof ChannelFields>;

/** A verify token nobody has to invent: 24 random characters (the owner may type another). */
function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
}

export function ChannelsScreen({ agentId, workspaceId }: { agentId: string; workspaceId: string }) {
  const [result, reread] = useQuery({ query: CHANNELS, variables: { agentId } });
  const [adding, setAdding] = useState<"WHATSAPP" | "API" | null>(null);
  // What the page shows once, right after a WhatsApp number was added: its verify token.
  const [fresh, setFresh] = useState<{ id: string; verifyToken: string } | null>(null);
  const channels = result.data?.channels.edges.map((e) => e.node) ?? [];
  const changed = () => reread({ requestPolicy: "network-only" });
  return (
    <div>
      <h2>Channels</h2>
      <ErrorNote error={result.error} />
      {result.data && !channels.length && !adding && <p class="note">No channels yet.</p>}
      {adding === "WHATSAPP" && (
        <NewWhatsApp
          agentId={agentId}
          onCancel={() => setAdding(null)}
          onCreated={(id, verifyToken) => {
            setAdding(null);
            setFresh({ id, verifyToken });
            changed();
          }}
        />
      )}
      {adding === "API" && (
        <NewApi
          agentId={agentId}
          onCancel={() => setAdding(null)}
          onCreated={() => {
            setAdding(null);
            changed();
          }}
        />
      )}
      {!adding && (
        <div class="buttons">
          <button type="button" onClick={() => setAdding("WHATSAPP")}>New WhatsApp number</button>
          <button type="button" class="secondary" onClick={() => setAdding("API")}>New API channel</button>
        </div>
      )}
      <ul class="cards" aria-label="Channels">
        {channels.map((c) => (
          <li key={c.id} class="card" aria-label={c.label}>
            <h3>
              {c.label} <Badge value={c.type} />
            </h3>
            {c.type === "WHATSAPP"
              ? (
                <WhatsAppChannel
                  agentId={agentId}
                  channel={c}
                  verifyToken={fresh?.id === c.id ? fresh.verifyToken : null}
                  onCheck={changed}
                />
              )
              : <ApiChannel channel={c} workspaceId={workspaceId} />}
            <DeleteChannel agentId={agentId} channel={c} onDeleted={changed} />
          </li>
        ))}
      </ul>
    </div>
  );
}

function NewWhatsApp(
  { agentId, onCreated, onCancel }: {
    agentId: string;
    onCreated: (id: string, verifyToken: string) => void;
    onCancel: () => void;
  },
) {
  const [state, create] = useMutation(CREATE);
  const [token] = useState(randomToken);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const value = (k: string) => String(f.get(k) ?? "").trim();
    const verifyToken = value("verifyToken");
    const r = await create({
      agentId,
      input: {
        type: "WHATSAPP",
        label: value("label"),
        config: {
          phoneNumberId: value("phoneNumberId"),
          accessToken: value("accessToken"),
          appSecret: value("appSecret"),
          verifyToken,
          businessAccountId: textOrNull(f.get("businessAccountId")),
        },
      },
    });
    if (r.data) onCreated(r.data.createChannel.id, verifyToken);
  };
  return (
    <form onSubmit={submit} aria-label="New WhatsApp number" class="card stack">
      <h3>New WhatsApp number</h3>
      <p class="muted">
        From your Meta app's WhatsApp settings. The access token, the app secret and the verify token are
        stored encrypted and never shown again, here or anywhere.
      </p>
      <div class="settings">
        <label>
          Label
          <input name="label" required maxLength={200} placeholder="Main number" />
        </label>
        <label>
          Phone number ID
          <input name="phoneNumberId" required inputMode="numeric" autoComplete="off" />
        </label>
        <label>
          Access token
          <input name="accessToken" type="password" required autoComplete="new-password" />
        </label>
        <label>
          App secret
          <input name="appSecret" type="password" required autoComplete="new-password" />
        </label>
        <label>
          Verify token
          <input name="verifyToken" required defaultValue={token} autoComplete="off" spellcheck={false} />
        </label>
        <label>
          WhatsApp Business Account ID (for templates, optional)
          <input name="businessAccountId" inputMode="numeric" autoComplete="off" />
        </label>
      </div>
      <ErrorNote error={state.error} />
      <div class="buttons">
        <button type="submit" disabled={state.fetching}>Add WhatsApp number</button>
        <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}

function NewApi(
  { agentId, onCreated, onCancel }: { agentId: string; onCreated: () => void; onCancel: () => void },
) {
  const [state, create] = useMutation(CREATE);
  const submit = async (e: Event) => {
    e.preventDefault();
    const label = String(new FormData(e.target as HTMLFormElement).get("label") ?? "").trim();
    const r = await create({ agentId, input: { type: "API", label } });
    if (r.data) onCreated();
  };
  return (
    <form onSubmit={submit} aria-label="New API channel" class="card stack">
      <h3>New API channel</h3>
      <p class="muted">For your own app or site: it posts its customers' messages, and reads the replies.</p>
      <label>
        Label
        <input name="label" required maxLength={200} placeholder="Website chat" />
      </label>
      <ErrorNote error={state.error} />
      <div class="buttons">
        <button type="submit" disabled={state.fetching}>Add API channel</button>
        <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}

function WhatsAppChannel(
  { agentId, channel, verifyToken, onCheck }: {
    agentId: string;
    channel: Channel;
    /** The token just written, shown this once; null afterwards. */
    verifyToken: string | null;
    onCheck: () => void;
  },
) {
  const [replacing, setReplacing] = useState(false);
  return (
    <div class="stack">
      <dl class="effects">
        <div>
          <dt>Phone number ID</dt>
          <dd>{channel.phoneNumberId}</dd>
        </div>
        <div>
          <dt>Business account ID</dt>
          <dd>{channel.businessAccountId ?? "none (no templates)"}</dd>
        </div>
        <div>
          <dt>Access token, app secret, verify token</dt>
          <dd>set (never shown)</dd>
        </div>
      </dl>
      <CopyField label="Callback URL" value={channel.inboundUrl} />
      {verifyToken && (
        <div class="note" role="status">
          <p>
            In your Meta app, WhatsApp › Configuration › Webhook: paste the callback URL and this verify
            token, then "Verify and save". The verify token is shown only now.
          </p>
          <CopyField label="Verify token" value={verifyToken} />
        </div>
      )}
      <p class="handshake">
        {channel.verifiedAt
          ? (
            <>
              <Badge value="verified" /> Meta's verify handshake passed <Time value={channel.verifiedAt} />.
            </>
          )
          : (
            <>
              <Badge value="waiting" /> Meta's verify handshake has not been seen yet.{" "}
              <button type="button" class="secondary" onClick={onCheck}>Check again</button>
            </>
          )}
      </p>
      {replacing
        ? <ReplaceSecrets agentId={agentId} channel={channel} onDone={() => setReplacing(false)} />
        : (
          <div class="buttons">
            <button type="button" class="secondary" onClick={() => setReplacing(true)}>
              Replace credentials
            </button>
          </div>
        )}
    </div>
  );
}

/** New values for some of the secrets; the ones left empty keep what is stored. */
function ReplaceSecrets(
  { agentId, channel, onDone }: { agentId: string; channel: Channel; onDone: () => void },
) {
  const [state, update] = useMutation(UPDATE);
  const [saved, setSaved] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const config = Object.fromEntries(
      ["accessToken", "appSecret", "verifyToken"].flatMap((k) => {
        const v = textOrNull(f.get(k));
        return v ? [[k, v]] : [];
      }),
    );
    if (!Object.keys(config).length) return onDone();
    const r = await update({ agentId, id: channel.id, input: { config } });
    if (!r.error) setSaved(true);
  };
  return (
    <form onSubmit={submit} aria-label={`Replace credentials of ${channel.label}`} class="stack">
      <p class="muted">Only what you fill in is replaced.</p>
      <div class="settings">
        <label>
          New access token
          <input name="accessToken" type="password" autoComplete="new-password" />
        </label>
        <label>
          New app secret
          <input name="appSecret" type="password" autoComplete="new-password" />
        </label>
        <label>
          New verify token
          <input name="verifyToken" autoComplete="off" spellcheck={false} />
        </label>
      </div>
      <ErrorNote error={state.error} />
      {saved && <p class="note" role="status">Credentials replaced.</p>}
      <div class="buttons">
        {!saved && <button type="submit" disabled={state.fetching}>Replace</button>}
        <button type="button" class="secondary" onClick={onDone}>{saved ? "Done" : "Cancel"}</button>
      </div>
    </form>
  );
}

/** The call a business' app makes for each customer message, ready to paste in a terminal. */
export function curlExample(endpoint: string, workspaceId: string): string {
  const body = JSON.stringify({
    contact: { externalId: "customer-42", name: "Maria" },
    type: "TEXT",
    content: "Hello!",
  });
  return [
    `curl -X POST '${endpoint}' \\`,
    `  -H "authorization: Bearer $SWITCHBOARD_TOKEN" \\`,
    `  -H 'x-workspace-id: ${workspaceId}' \\`,
    `  -H 'content-type: application/json' \\`,
    `  -d '${body}'`,
  ].join("\n");
}

function ApiChannel({ channel, workspaceId }: { channel: Channel; workspaceId: string }) {
  return (
    <div class="stack">
      <CopyField label="Endpoint" value={channel.inboundUrl} />
      <p class="muted">
        Your app posts each customer message there with an API token of this workspace (in
        <code>$SWITCHBOARD_TOKEN</code>); the agent's replies reach it through event webhooks or the API.
      </p>
      <pre class="example" aria-label="Example call">{curlExample(channel.inboundUrl, workspaceId)}</pre>
    </div>
  );
}

function DeleteChannel(
  { agentId, channel, onDeleted }: { agentId: string; channel: Channel; onDeleted: () => void },
) {
  const [state, remove] = useMutation(DELETE);
  return (
    <div>
      <ErrorNote error={state.error} />
      <ConfirmButton
        label="Delete channel"
        question={`Delete ${channel.label} with its conversations and messages? This cannot be undone.`}
        confirm="Delete channel"
        busy={state.fetching}
        onConfirm={async () => {
          const r = await remove({ agentId, id: channel.id });
          if (!r.error) onDeleted();
        }}
      />
    </div>
  );
}
