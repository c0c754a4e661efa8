/// <reference lib="dom" />
/**
 * My account, for every member: who is signed in, "Change password" (the current one, the new one
 * twice) and "Log out everywhere else". Both end the member's other sessions (other browsers and
 * devices) and keep this one.
 */
import { useMutation } from "@urql/preact";
import { useState } from "preact/hooks";
import { errorText } from "../graphql.ts";
import { graphql } from "../schema.ts";
import { ErrorNote } from "../ui.tsx";

const CHANGE_PASSWORD = graphql(`mutation ConsoleChangePassword($input: ChangePasswordInput!) {
  changePassword(input: $input)
}`);
const LOGOUT_OTHERS = graphql(`mutation ConsoleLogoutOthers { logoutOtherSessions { ended } }`);

/** The shortest password the API takes. */
const MIN_PASSWORD = 8;

export function AccountScreen({ user }: { user: { name: string; email: string } }) {
  return (
    <section>
      <h1>My account</h1>
      <p>
        Signed in as <strong>{user.name}</strong> <span class="muted">({user.email})</span>.
      </p>
      <PasswordForm />
      <OtherSessions />
    </section>
  );
}

function PasswordForm() {
  const [changing, change] = useMutation(CHANGE_PASSWORD);
  const [fields, setFields] = useState({ current: "", next: "", again: "" });
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const field = (name: keyof typeof fields) => ({
    value: fields[name],
    onInput: (e: Event) => setFields({ ...fields, [name]: (e.target as HTMLInputElement).value }),
  });
  const submit = async (e: Event) => {
    e.preventDefault();
    setDone(false);
    if (fields.next !== fields.again) return setProblem("The new password and its repetition differ.");
    setProblem(null);
    const r = await change({ input: { currentPassword: fields.current, newPassword: fields.next } });
    if (r.error) return setProblem(errorText(r.error));
    setFields({ current: "", next: "", again: "" });
    setDone(true);
  };
  return (
    <form class="stack narrow-form" onSubmit={submit} aria-label="Change password">
      <h2>Change password</h2>
      <label>
        Current password
        <input type="password" autocomplete="current-password" required {...field("current")} />
      </label>
      <label>
        New password
        <input
          type="password"
          autocomplete="new-password"
          required
          minLength={MIN_PASSWORD}
          {...field("next")}
        />
      </label>
      <label>
        New password again
        <input
          type="password"
          autocomplete="new-password"
          required
          minLength={MIN_PASSWORD}
          {...field("again")}
        />
      </label>
      <div class="buttons">
        <button type="submit" disabled={changing.fetching}>Change password</button>
      </div>
      {problem && <p class="error" role="alert">{problem}</p>}
      {done && (
        <p class="note" role="status">
          Password changed. Your other sessions were ended; this one goes on.
        </p>
      )}
    </form>
  );
}

function OtherSessions() {
  const [ending, end] = useMutation(LOGOUT_OTHERS);
  const [ended, setEnded] = useState<number | null>(null);
  const onEnd = async () => {
    setEnded(null);
    const r = await end({});
    if (r.data) setEnded(r.data.logoutOtherSessions.ended);
  };
  return (
    <div class="stack narrow-form">
      <h2>Other sessions</h2>
      <p class="muted">
        Signed in on another computer or phone you no longer have? This ends every session of yours but this
        one.
      </p>
      <div class="buttons">
        <button type="button" class="secondary" disabled={ending.fetching} onClick={onEnd}>
          Log out everywhere else
        </button>
      </div>
      <ErrorNote error={ending.error} />
      {ended !== null && (
        <p class="note" role="status">
          {ended === 0
            ? "No other session was open."
            : `Logged out everywhere else: ${ended} other ${ended === 1 ? "session" : "sessions"} ended.`}
        </p>
      )}
    </div>
  );
}
