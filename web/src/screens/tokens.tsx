/// <reference lib="dom" />
/**
 * The workspace's API tokens, for an OWNER or MANAGER: create one (its value shown this once, to
 * copy), the list by label, prefix, creator and last use, and "Revoke" (asked twice). A token acts
 * for this workspace as a MANAGER; the server keeps only its hash.
 */
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { graphql, type ResultOf } from "../schema.ts";
import { ErrorNote, Time } from "../ui.tsx";
import { ShownOnce } from "./shown_once.tsx";

const TOKENS = graphql(`query ConsoleApiTokens {
  apiTokens(first: 100) { edges { node { id label prefix createdAt lastUsedAt revokedAt createdBy { id name } } } }
}`);
const CREATE = graphql(`mutation ConsoleCreateApiToken($input: CreateApiTokenInput!) {
  createApiToken(input: $input) { token apiToken { id label prefix } }
}`);
const REVOKE = graphql(`mutation ConsoleRevokeApiToken($id: ID!) { revokeApiToken(id: $id) }`);

type Token = ResultOf<typeof TOKENS>["apiTokens"]["edges"][number]["node"];

export function TokensScreen() {
  const [tokens, reread] = useQuery({ query: TOKENS });
  const [creating, create] = useMutation(CREATE);
  const [label, setLabel] = useState("");
  const [created, setCreated] = useState<{ label: string; token: string } | null>(null);
  const readAgain = () => reread({ requestPolicy: "network-only" });
  const rows = tokens.data?.apiTokens.edges.map((e) => e.node) ?? [];
  // Newest first: the one just created on top.
  const listed = [...rows].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const submit = async (e: Event) => {
    e.preventDefault();
    setCreated(null);
    const r = await create({ input: { label } });
    const answer = r.data?.createApiToken;
    if (!answer) return;
    setCreated({ label: answer.apiToken.label, token: answer.token });
    setLabel("");
    readAgain();
  };
  return (
    <section>
      <h1>API tokens</h1>
      <p class="muted">
        A token lets a program use the API for this workspace, as a MANAGER would (it cannot approve changes).
        Send it as <code>authorization: Bearer …</code> with <code>x-workspace-id</code>.
      </p>
      <form class="inline-form" onSubmit={submit}>
        <label>
          Label
          <input
            required
            maxLength={200}
            value={label}
            placeholder="What uses it, e.g. CRM sync"
            onInput={(e) => setLabel((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" disabled={creating.fetching}>Create token</button>
      </form>
      <ErrorNote error={creating.error} />
      {created && (
        <ShownOnce label="New token" value={created.token}>
          The token "{created.label}" is shown this once: copy it now. Only its hash is kept; if it is lost,
          revoke it and create another.
        </ShownOnce>
      )}
      <ErrorNote error={tokens.error} />
      {tokens.data && !rows.length && <p class="note">No API tokens yet.</p>}
      {rows.length > 0 && (
        <table class="people" aria-label="API tokens">
          <thead>
            <tr>
              <th>Label</th>
              <th>Prefix</th>
              <th>Created</th>
              <th>Last used</th>
              <th>
                <span class="muted">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {listed.map((t) => <TokenRow key={t.id} token={t} onRevoked={readAgain} />)}
          </tbody>
        </table>
      )}
    </section>
  );
}

function TokenRow({ token: t, onRevoked }: { token: Token; onRevoked: () => void }) {
  const [revoking, revoke] = useMutation(REVOKE);
  const [confirming, setConfirming] = useState(false);
  const onRevoke = async () => {
    const r = await revoke({ id: t.id });
    setConfirming(false);
    if (!r.error) onRevoked();
  };
  return (
    <tr aria-label={t.label}>
      <td data-label="Label">{t.label}</td>
      <td data-label="Prefix">
        <code>{t.prefix}…</code>
      </td>
      <td data-label="Created">
        <Time value={t.createdAt} />
        {t.createdBy && <span class="muted aside">by {t.createdBy.name}</span>}
      </td>
      <td data-label="Last used">{t.lastUsedAt ? <Time value={t.lastUsedAt} /> : "never"}</td>
      <td>
        {t.revokedAt
          ? (
            <span>
              Revoked <Time value={t.revokedAt} />
            </span>
          )
          : !confirming
          ? <button type="button" class="danger" onClick={() => setConfirming(true)}>Revoke</button>
          : (
            <div class="confirm" role="alertdialog" aria-label={`Revoke ${t.label}`}>
              <p>Revoke "{t.label}"? Programs using it are refused at once.</p>
              <div class="buttons">
                <button type="button" class="danger" disabled={revoking.fetching} onClick={onRevoke}>
                  Revoke token
                </button>
                <button type="button" class="secondary" onClick={() => setConfirming(false)}>Cancel</button>
              </div>
            </div>
          )}
        <ErrorNote error={revoking.error} />
      </td>
    </tr>
  );
}
