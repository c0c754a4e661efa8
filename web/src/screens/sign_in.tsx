/// <reference lib="dom" />
/** Sign-in: "Email", "Password", "Log in" (the `login` mutation). */
import { useState } from "preact/hooks";
import { graphql, type ResultOf } from "../schema.ts";
import { plainGraphQL, type Session, SessionFields } from "../session.ts";

const LOGIN = graphql(
  `mutation Login($input: LoginInput!) { login(input: $input) { ...ConsoleSession } }`,
  [SessionFields],
);

type Login = ResultOf<typeof SessionFields>;

/** A session from a login answer, in its first workspace; null when it has none. */
export function sessionOf(login: Login): Session | null {
  return login.workspaces.length ? { ...login, workspaceId: login.workspaces[0].id } : null;
}

export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: (s: Session) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    setBusy(true);
    const answer = await plainGraphQL(LOGIN, {
      input: { email: String(form.get("email") ?? ""), password: String(form.get("password") ?? "") },
    });
    setBusy(false);
    if (answer.error) return setError(answer.error.message);
    const session = sessionOf(answer.data!.login);
    if (!session) return setError("This account belongs to no workspace yet: ask for an invitation.");
    onSignedIn(session);
  };

  return (
    <main class="narrow">
      <h1>Switchboard</h1>
      {notice && <p class="note" role="status">{notice}</p>}
      <form onSubmit={submit} class="stack">
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>Log in</button>
      </form>
    </main>
  );
}
