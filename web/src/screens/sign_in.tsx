/// <reference lib="dom" />
/** Sign-in: "Email", "Password", "Log in" (`POST /console/session`: the session goes in a cookie). */
import { useState } from "preact/hooks";
import { type Session, sessionOf, signIn } from "../session.ts";

export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: (s: Session) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    setBusy(true);
    const answer = await signIn(String(form.get("email") ?? ""), String(form.get("password") ?? ""))
      .catch(() => ({ data: undefined, error: { message: "The server could not be reached." } }));
    setBusy(false);
    if (answer.error) return setError(answer.error.message);
    const session = sessionOf(answer.data!);
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
