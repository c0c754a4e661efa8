/// <reference lib="dom" />
/**
 * The pending approvals, live (`approvalEvents`): each with its tool, the agent, the rationale and
 * a before/after diff, "Approve" and "Reject". An approval decided or expired while on the screen
 * stays in view saying so; one that cannot be decided says why (stale, decided, expired).
 */
import { useMutation, useQuery, useSubscription } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { ChangeDiff } from "../diff.tsx";
import { errorCode, errorText } from "../graphql.ts";
import { graphql, type ResultOf } from "../schema.ts";
import { Badge, ErrorNote, Time, useRereadOnConnect } from "../ui.tsx";

const ApprovalFields = graphql(`fragment ConsoleApproval on Approval {
  id tool targetType targetId agentId rationale before after status error createdAt expiresAt decidedAt
}`);

const PENDING = graphql(
  `query ConsolePendingApprovals {
    approvals(first: 50, status: PENDING) { edges { node { ...ConsoleApproval } } }
    agents(first: 100) { edges { node { id name } } }
  }`,
  [ApprovalFields],
);

const EVENTS = graphql(
  `subscription ConsoleApprovalEvents { approvalEvents { type approval { ...ConsoleApproval } } }`,
  [ApprovalFields],
);
const APPROVE = graphql(
  `mutation ConsoleApprove($id: ID!) { approveApproval(id: $id) { ...ConsoleApproval } }`,
  [ApprovalFields],
);
const REJECT = graphql(
  `mutation ConsoleReject($id: ID!) { rejectApproval(id: $id) { ...ConsoleApproval } }`,
  [ApprovalFields],
);

type Approval = ResultOf<typeof ApprovalFields>;

/** What the tools do, in words (one for each tool of the schema). */
export const TOOL_LABELS: Record<Approval["tool"], string> = {
  update_agent_prompt: "Change the agent's prompt",
  update_agent_training: "Change the agent's training context",
  toggle_agent_active: "Pause or resume the agent",
  create_intent: "Create an intent",
  update_intent: "Change an intent",
  delete_intent: "Delete an intent",
  create_webhook: "Create a webhook",
  update_webhook: "Change a webhook",
  delete_webhook: "Delete a webhook",
};

/** Why an approval could not be decided, from the API's error code. */
function whyNot(code: string | undefined, message: string | null): string {
  if (code === "STALE_APPROVAL") return `Stale: ${message}`;
  if (code === "APPROVAL_NOT_PENDING") return `Already decided or expired: ${message}`;
  return message ?? "It could not be decided.";
}

/** What happened to an approval that left PENDING while on the screen. */
const OUTCOME: Record<Exclude<Approval["status"], "PENDING">, string> = {
  APPROVED: "Approved: the change was made.",
  REJECTED: "Rejected: nothing was changed.",
  EXPIRED: "Expired: it waited more than 24 hours and can no longer be decided.",
  FAILED: "Approved, but making the change failed.",
};

/**
 * `seen` with `approvals` put in, except that a PENDING one never replaces a decided one: a status
 * only ever leaves PENDING, so a read that set off before a decision (the list read again on a
 * CREATED event) and answers after its live event is older, and must not bring the buttons back.
 */
function withNewer(seen: Map<string, Approval>, approvals: Approval[]): Map<string, Approval> {
  const next = new Map(seen);
  for (const a of approvals) {
    const known = next.get(a.id);
    if (!known || known.status === "PENDING" || a.status !== "PENDING") next.set(a.id, a);
  }
  return next;
}

export function ApprovalsScreen() {
  const [result, reread] = useQuery({ query: PENDING });
  const [live] = useSubscription({ query: EVENTS });
  useRereadOnConnect(() => reread({ requestPolicy: "network-only" }));
  // Approvals seen on this screen, so one decided elsewhere stays in view with its outcome.
  const [seen, setSeen] = useState<Map<string, Approval>>(new Map());
  useEffect(() => {
    const edges = result.data?.approvals.edges;
    if (edges) setSeen((m) => withNewer(m, edges.map((e) => e.node)));
  }, [result.data]);
  useEffect(() => {
    const a = live.data?.approvalEvents.approval;
    if (!a) return;
    setSeen((m) => withNewer(m, [a]));
    if (live.data!.approvalEvents.type === "CREATED") reread({ requestPolicy: "network-only" });
  }, [live.data]);
  const names = new Map(result.data?.agents.edges.map((e) => [e.node.id, e.node.name]) ?? []);
  const list = [...seen.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const update = (a: Approval) => setSeen((m) => withNewer(m, [a]));
  return (
    <section>
      <h1>Approvals</h1>
      <ErrorNote error={result.error ?? live.error} />
      {result.data && !list.length && (
        <p class="note">
          Nothing waits for a decision. Changes the supervisor proposes appear here as they come.
        </p>
      )}
      {list.map((a) => (
        <ApprovalCard
          key={a.id}
          approval={a}
          agentName={a.agentId ? names.get(a.agentId) : undefined}
          onDecided={update}
        />
      ))}
    </section>
  );
}

export function ApprovalCard(
  { approval: a, agentName, onDecided }: {
    approval: Approval;
    agentName?: string;
    onDecided: (a: Approval) => void;
  },
) {
  const [approving, approve] = useMutation(APPROVE);
  const [rejecting, reject] = useMutation(REJECT);
  const [reason, setReason] = useState<string | null>(null);
  // Refused as no longer PENDING (decided elsewhere, or expired before the sweep marked it): no
  // decision is offered any more. A stale one stays PENDING and may still be rejected.
  const [closed, setClosed] = useState(false);
  const decide = async (which: "approve" | "reject") => {
    setReason(null);
    const r = which === "approve" ? await approve({ id: a.id }) : await reject({ id: a.id });
    if (r.error) {
      const code = errorCode(r.error);
      if (code === "APPROVAL_NOT_PENDING") setClosed(true);
      return setReason(whyNot(code, errorText(r.error)));
    }
    const decided = r.data && ("approveApproval" in r.data ? r.data.approveApproval : r.data.rejectApproval);
    if (decided) onDecided(decided);
  };
  const title = TOOL_LABELS[a.tool] ?? a.tool;
  return (
    <article class="card approval" aria-label={`${title}${agentName ? ` for ${agentName}` : ""}`}>
      <h2>
        {title}
        {agentName && <>{" "}· {agentName}</>} <Badge value={a.status} />
      </h2>
      <p class="muted">
        <code>{a.tool}</code> · proposed <Time value={a.createdAt} />
        {a.status === "PENDING" && !closed && (
          <>
            {" "}· expires <Time value={a.expiresAt} />
          </>
        )}
      </p>
      <p class="rationale">{a.rationale}</p>
      <ChangeDiff before={a.before} after={a.after} />
      {a.status !== "PENDING" && (
        <p class="note" role="status">
          {OUTCOME[a.status] ?? a.status}
          {a.error && <>{a.error}</>}
        </p>
      )}
      {reason && <p class="error" role="alert">{reason}</p>}
      {a.status === "PENDING" && !closed && (
        <div class="buttons">
          <button type="button" disabled={approving.fetching} onClick={() => decide("approve")}>
            Approve
          </button>
          <button type="button" class="danger" disabled={rejecting.fetching} onClick={() => decide("reject")}>
            Reject
          </button>
        </div>
      )}
    </article>
  );
}
