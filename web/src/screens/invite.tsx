/// <reference lib="dom" />
/**
 * An invite link opened in a browser: what it is for (`invitation`) and a form to accept it
 * (`acceptInvite`): a new account gives its name and a password, an existing one its password.
 */
import { useEffect, useState } from "preact/hooks";
import { graphql, type ResultOf, type VariablesOf } from "../schema.ts";
import { adoptToken, plainGraphQL, type Session, SessionFields, sessionOf } from "../session.ts";

const INVITATION = graphql(`
  query Invitation($token: String!) {
    invitation(token: $token) { email existingUser expiresAt role workspace { id name } }
  }
`);

const ACCEPT = graphql(
  `mutation Accept($token: String!, $input: AcceptInviteInput!) {
    acceptInvite(token: $token, input: $input) { ...ConsoleSession }
  }`,
  [SessionFields],
);

type Invitation = ResultOf<typeof INVITATION>["invitation"];

export function InviteScreen({ token, onAccepted }: { token: string; onAccepted: (s: Session) => void }) {
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    plainGraphQL(INVITATION, { token })
      .then((a) => a.error ? setError(a.error.message) : setInvitation(a.data!.invitation));
  }, [token]);

  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const input: VariablesOf<typeof ACCEPT>["input"] = { password: String(form.get("password") ?? "") };
    if (!invitation!.existingUser) input.name = String(form.get("name") ?? "");
    const answer = await plainGraphQL(ACCEPT, { token, input });
    if (answer.error) return setError(answer.error.message);
    // The new login's token goes into the console's cookie at once; the page keeps none.
    const adopted = await adoptToken(answer.data!.acceptInvite.token);
    if (adopted.error) return setError(adopted.error.message);
    const session = sessionOf(adopted.data!, invitation!.workspace.id);
    if (session) onAccepted(session);
  };

  return (
    <main class="narrow">
      <h1>Invitation</h1>
      {!invitation && !error && <p>Loading the invitation…</p>}
      {invitation && (
        <form onSubmit={submit} class="stack">
          <p>
            You are invited to <strong>{invitation.workspace.name}</strong> as {invitation.role}, as{" "}
            <strong>{invitation.email}</strong>.
          </p>
          {invitation.existingUser ? <p>You have an account: confirm with its password.</p> : (
            <label>
              Name
              <input name="name" autocomplete="name" required />
            </label>
          )}
          <label>
            Password
            <input
              name="password"
              type="password"
              autocomplete={invitation.existingUser ? "current-password" : "new-password"}
              required
            />
          </label>
          {error && <p class="error" role="alert">{error}</p>}
          <button type="submit">Accept invitation</button>
        </form>
      )}
      {!invitation && error && <p class="error" role="alert">{error}</p>}
    </main>
  );
}
