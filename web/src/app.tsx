/// <reference lib="dom" />
/**
 * The console's shell: the sign-in or invite screen without a session, otherwise the header
 * (screens, workspace switch, "Log out") and the screen named by the hash. A session kept in the
 * cookie (a reload, a new tab) is picked up first.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Provider } from "@urql/preact";
import { createApi } from "./graphql.ts";
import { graphql } from "./schema.ts";
import {
  can,
  currentMembership,
  type Membership,
  plainGraphQL,
  rememberWorkspace,
  restoreSession,
  type Session,
  signOut as endSession,
} from "./session.ts";
import { href, useRoute } from "./router.ts";
import { ApiContext } from "./ui.tsx";
import { SignIn } from "./screens/sign_in.tsx";
import { InviteScreen } from "./screens/invite.tsx";
import { DeskScreen } from "./screens/desk.tsx";
import { ApprovalsScreen } from "./screens/approvals.tsx";
import { SupervisorScreen } from "./screens/supervisor.tsx";
import { AgentsScreen } from "./screens/agents.tsx";
import { AgentScreen } from "./screens/agent.tsx";
import { AgentPartScreen } from "./screens/agent_tabs.tsx";
import { MembersScreen } from "./screens/members.tsx";
import { TokensScreen } from "./screens/tokens.tsx";
import { AccountScreen } from "./screens/account.tsx";

const MEMBERSHIPS = graphql(`query ConsoleMemberships { workspaces { id name role } }`);

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [invite, setInvite] = useState(() => location.pathname.match(/^\/invite\/([^/]+)$/)?.[1] ?? null);
  // An invite link shows the invitation, whoever is signed in; otherwise the cookie's session, if any.
  const [restoring, setRestoring] = useState(invite === null);
  useEffect(() => {
    if (!restoring) return;
    restoreSession().then((s) => {
      if (s) setSession((now) => now ?? s);
      setRestoring(false);
    });
  }, []);

  const signedIn = (s: Session) => {
    setNotice(null);
    setSession(s);
  };
  const signOut = useCallback((why: string | null) => {
    setSession(null);
    setNotice(why);
  }, []);

  if (invite && !session) {
    return (
      <InviteScreen
        token={decodeURIComponent(invite)}
        onAccepted={(s) => {
          history.replaceState(null, "", "/");
          setInvite(null);
          signedIn(s);
        }}
      />
    );
  }
  if (restoring) return <p class="note" role="status">Loading…</p>;
  if (!session) return <SignIn notice={notice} onSignedIn={signedIn} />;
  return <Console session={session} setSession={setSession} signOut={signOut} />;
}

function Console(
  { session, setSession, signOut }: {
    session: Session;
    setSession: (s: Session) => void;
    signOut: (why: string | null) => void;
  },
) {
  const membership = currentMembership(session);
  // The latest session for the handlers of a client made earlier.
  const latest = useRef(session);
  latest.current = session;

  const api = useMemo(() =>
    createApi(session.workspaceId, {
      unauthenticated: () => signOut("Your session has ended. Log in again."),
      forbidden: async () => {
        // Refused in this workspace: read the memberships again to learn whether it is still ours.
        const s = latest.current;
        const answer = await plainGraphQL(MEMBERSHIPS, {});
        if (answer.error?.code === "UNAUTHENTICATED") return signOut("Your session has ended. Log in again.");
        const workspaces = answer.data?.workspaces;
        if (!workspaces) return;
        const still = workspaces.find((w) => w.id === s.workspaceId);
        if (!still) return signOut("You are no longer a member of that workspace.");
        if (still.role !== currentMembership(s).role) setSession({ ...s, workspaces });
      },
    }), [session.workspaceId]);
  useEffect(() => () => api.close(), [api]);

  const logOut = async () => {
    await endSession();
    signOut(null);
  };

  return (
    <Provider value={api.client}>
      <ApiContext.Provider value={api}>
        <header class="top">
          <a class="brand" href={href("conversations")}>Switchboard</a>
          <nav aria-label="Screens">
            <a href={href("conversations")}>Conversations</a>
            {can.manage(membership.role) && <a href={href("approvals")}>Approvals</a>}
            {can.manage(membership.role) && <a href={href("supervisor")}>Supervisor</a>}
            <a href={href("agents")}>Agents</a>
            {can.manage(membership.role) && <a href={href("members")}>Members</a>}
            {can.manage(membership.role) && <a href={href("tokens")}>API tokens</a>}
          </nav>
          <div class="who">
            {session.workspaces.length > 1
              ? (
                <label>
                  Workspace
                  <select
                    value={session.workspaceId}
                    onChange={(e) => {
                      // The screen at hand belongs to the old workspace: start from its conversations.
                      location.hash = href("conversations");
                      const workspaceId = (e.target as HTMLSelectElement).value;
                      rememberWorkspace(workspaceId);
                      setSession({ ...session, workspaceId });
                    }}
                  >
                    {session.workspaces.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
                  </select>
                </label>
              )
              : <span class="workspace">{membership.name}</span>}
            <span class="role" title={session.user.email}>{membership.role}</span>
            <a href={href("account")}>My account</a>
            <button type="button" onClick={logOut}>Log out</button>
          </div>
        </header>
        <main key={session.workspaceId}>
          <Screen membership={membership} user={session.user} />
        </main>
      </ApiContext.Provider>
    </Provider>
  );
}

/** The screen named by the hash, as the role allows. */
function Screen({ membership, user }: { membership: Membership; user: Session["user"] }) {
  const [screen, id, part] = useRoute();
  const role = membership.role;
  switch (screen) {
    case "approvals":
      return can.manage(role) ? <ApprovalsScreen /> : <NotForRole />;
    case "supervisor":
      return can.manage(role) ? <SupervisorScreen focus={id} /> : <NotForRole />;
    case "members":
      return can.manage(role) ? <MembersScreen role={role} userId={user.id} /> : <NotForRole />;
    case "tokens":
      return can.manage(role) ? <TokensScreen /> : <NotForRole />;
    case "account":
      return <AccountScreen user={user} />;
    case "agents":
      if (id && part) {
        return can.manage(role)
          ? <AgentPartScreen agentId={id} part={part} workspaceId={membership.id} />
          : <NotForRole />;
      }
      return id ? <AgentScreen id={id} role={role} /> : <AgentsScreen role={role} />;
    default:
      // The list and the open conversation: one screen, so the list stays while conversations open.
      return (
        <DeskScreen
          openId={screen === "conversation" ? id : undefined}
          agentId={screen === "conversations" ? id : undefined}
          role={role}
          userId={user.id}
        />
      );
  }
}

function NotForRole() {
  return <p class="note">Your role in this workspace does not include this screen.</p>;
}
