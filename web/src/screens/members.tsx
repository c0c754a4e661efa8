/// <reference lib="dom" />
/**
 * The workspace's members and invites, for an OWNER or MANAGER: change a member's role, remove a
 * member (asked twice), invite someone (the link shown once, to copy) and withdraw an invite. What
 * is offered follows the role table: a MANAGER changes and removes only AGENT and VIEWER members,
 * and invites no OWNER. The server decides anyway: a refusal (the last OWNER of a workspace cannot
 * stop being one) is shown beside the member with the server's reason.
 */
import { useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { errorText } from "../graphql.ts";
import { graphql, type ResultOf } from "../schema.ts";
import type { Role } from "../session.ts";
import { ErrorNote, Time } from "../ui.tsx";
import { ShownOnce } from "./shown_once.tsx";

const TEAM = graphql(`query ConsoleTeam {
  members(first: 100) { edges { node { id name email role joinedAt } } }
  invites(first: 100) { edges { node { id email role expiresAt acceptedAt createdAt } } }
}`);
const CHANGE_ROLE = graphql(`mutation ConsoleChangeRole($userId: ID!, $input: ChangeMemberRoleInput!) {
  changeMemberRole(userId: $userId, input: $input) { id role }
}`);
const REMOVE = graphql(`mutation ConsoleRemoveMember($userId: ID!) { removeMember(userId: $userId) }`);
const INVITE = graphql(`mutation ConsoleInvite($input: CreateInviteInput!) {
  createInvite(input: $input) { inviteUrl invite { id email role expiresAt } }
}`);
const WITHDRAW = graphql(`mutation ConsoleWithdrawInvite($id: ID!) { deleteInvite(id: $id) }`);

type Member = ResultOf<typeof TEAM>["members"]["edges"][number]["node"];
type Invite = ResultOf<typeof TEAM>["invites"]["edges"][number]["node"];

const ROLES: Role[] = ["OWNER", "MANAGER", "AGENT", "VIEWER"];
/** The roles a MANAGER may give and take (the role table: AGENT and VIEWER only). */
const ORDINARY: Role[] = ["AGENT", "VIEWER"];

/** The roles `actor` may give, and whether it may change or remove a member holding `role`. */
const givable = (actor: Role) => actor === "OWNER" ? ROLES : ORDINARY;
const mayManage = (actor: Role, role: Role) => actor === "OWNER" || ORDINARY.includes(role);

export function MembersScreen({ role, userId }: { role: Role; userId: string }) {
  const [team, reread] = useQuery({ query: TEAM });
  const readAgain = () => reread({ requestPolicy: "network-only" });
  const members = team.data?.members.edges.map((e) => e.node) ?? [];
  const invites = team.data?.invites.edges.map((e) => e.node) ?? [];
  return (
    <section>
      <h1>Members</h1>
      <ErrorNote error={team.error} />
      <table class="people" aria-label="Members">
        <thead>
          <tr>
            <th>Name</th>
            <th>Email</th>
            <th>Role</th>
            <th>Joined</th>
            <th>
              <span class="muted">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <MemberRow key={m.id} member={m} actor={role} self={m.id === userId} onRemoved={readAgain} />
          ))}
        </tbody>
      </table>
      <h2>Invite someone</h2>
      <InviteForm actor={role} onInvited={readAgain} />
      <Invites invites={invites} onWithdrawn={readAgain} />
    </section>
  );
}

function MemberRow(
  { member: m, actor, self, onRemoved }: {
    member: Member;
    actor: Role;
    self: boolean;
    onRemoved: () => void;
  },
) {
  const [changing, changeRole] = useMutation(CHANGE_ROLE);
  const [removing, remove] = useMutation(REMOVE);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  // Remounts the role picker after a refusal, so it shows the role the member still has.
  const [attempt, setAttempt] = useState(0);
  const manageable = mayManage(actor, m.role);
  const onRole = async (next: Role) => {
    setProblem(null);
    setDone(null);
    const r = await changeRole({ userId: m.id, input: { role: next } });
    if (r.error) {
      setProblem(errorText(r.error));
      setAttempt((n) => n + 1);
    } else setDone(`Now ${next}.`);
  };
  const onRemove = async () => {
    setProblem(null);
    const r = await remove({ userId: m.id });
    setConfirming(false);
    if (r.error) setProblem(errorText(r.error));
    else onRemoved();
  };
  const name = `${m.name}${self ? " (you)" : ""}`;
  return (
    <tr aria-label={m.name}>
      <td data-label="Name">{name}</td>
      <td data-label="Email">{m.email}</td>
      <td data-label="Role">
        {manageable
          ? (
            <select
              key={attempt}
              aria-label={`Role of ${m.name}`}
              value={m.role}
              disabled={changing.fetching}
              onChange={(e) => onRole((e.target as HTMLSelectElement).value as Role)}
            >
              {(givable(actor).includes(m.role) ? givable(actor) : [m.role, ...givable(actor)]).map((r) => (
                <option key={r} value={r}>{r}</option>
              ))}
            </select>
          )
          : m.role}
        {done && <span class="muted aside" role="status">{done}</span>}
      </td>
      <td data-label="Joined">
        <Time value={m.joinedAt} />
      </td>
      <td>
        {manageable && !confirming && (
          <button
            type="button"
            class="danger"
            onClick={() => setConfirming(true)}
          >
            Remove
          </button>
        )}
        {confirming && (
          <div class="confirm" role="alertdialog" aria-label={`Remove ${m.name}`}>
            <p>
              Remove {self ? "yourself" : m.name} from this workspace? {self ? "You lose" : "They lose"}{" "}
              access at once.
            </p>
            <div class="buttons">
              <button type="button" class="danger" disabled={removing.fetching} onClick={onRemove}>
                Remove member
              </button>
              <button type="button" class="secondary" onClick={() => setConfirming(false)}>Cancel</button>
            </div>
          </div>
        )}
        {problem && <p class="error" role="alert">{problem}</p>}
      </td>
    </tr>
  );
}

function InviteForm({ actor, onInvited }: { actor: Role; onInvited: () => void }) {
  const [inviting, invite] = useMutation(INVITE);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("AGENT");
  const [created, setCreated] = useState<{ url: string; email: string; role: Role } | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setCreated(null);
    const r = await invite({ input: { email, role } });
    const answer = r.data?.createInvite;
    if (!answer) return;
    setCreated({ url: answer.inviteUrl, email: answer.invite.email, role: answer.invite.role });
    setEmail("");
    onInvited();
  };
  return (
    <>
      <form class="inline-form" onSubmit={submit}>
        <label>
          Email
          <input
            type="email"
            required
            autocomplete="off"
            value={email}
            onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Role
          <select
            aria-label="Role"
            value={role}
            onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)}
          >
            {givable(actor).map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </label>
        <button type="submit" disabled={inviting.fetching}>Invite</button>
      </form>
      <ErrorNote error={inviting.error} />
      {created && (
        <ShownOnce label="Invite link" value={created.url}>
          Send this link to {created.email}{" "}
          ({created.role}). It works once, for 7 days, and is not shown again: withdraw the invite and invite
          again if it is lost.
        </ShownOnce>
      )}
    </>
  );
}

function Invites({ invites, onWithdrawn }: { invites: Invite[]; onWithdrawn: () => void }) {
  const [withdrawing, withdraw] = useMutation(WITHDRAW);
  const now = Date.now();
  if (!invites.length) return null;
  const onWithdraw = async (id: string) => {
    const r = await withdraw({ id });
    if (!r.error) onWithdrawn();
  };
  return (
    <>
      <h2>Invites</h2>
      <ErrorNote error={withdrawing.error} />
      <table class="people" aria-label="Invites">
        <thead>
          <tr>
            <th>Email</th>
            <th>Role</th>
            <th>State</th>
            <th>
              <span class="muted">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {invites.map((i) => {
            const open = !i.acceptedAt && Date.parse(i.expiresAt) > now;
            return (
              <tr key={i.id} aria-label={i.email}>
                <td data-label="Email">{i.email}</td>
                <td data-label="Role">{i.role}</td>
                <td data-label="State">
                  {i.acceptedAt
                    ? (
                      <>
                        Accepted <Time value={i.acceptedAt} />
                      </>
                    )
                    : open
                    ? (
                      <>
                        Waiting, until <Time value={i.expiresAt} />
                      </>
                    )
                    : "Expired"}
                </td>
                <td>
                  {!i.acceptedAt && (
                    <button
                      type="button"
                      class="secondary"
                      disabled={withdrawing.fetching}
                      onClick={() => onWithdraw(i.id)}
                    >
                      Withdraw
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}
