/// <reference lib="dom" />
/**
 * The pending approvals, live (`approvalEvents`): each with its tool, the agent, who asked (with a
 * link to the supervisor answer that proposed it), the rationale and its fields before and after,
 * "Approve" and "Reject" (with an optional comment, shown on the approval afterwards). A change of what an agent says comes with its replay
 * (./replay.tsx), live as its cases end, and "Replay again"; "Approve" asks again when a case
 * REGRESSED. An approval decided or expired while on the screen stays in view saying so; one that
 * cannot be decided says why (stale, decided, expired).
 */
import { useClient, useMutation, useQuery } from "@urql/preact";
import type { CombinedError } from "@urql/core";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ChangeDiff } from "../diff.tsx";
import { errorCode, errorText } from "../graphql.ts";
import { href } from "../router.ts";
import { graphql, type ResultOf } from "../schema.ts";
import { Badge, ErrorNote, Time, useRereadOnConnect } from "../ui.tsx";
import { ReplayCases, ReplayFields, ReplaySummary } from "./replay.tsx";

const ApprovalFields = graphql(
  `fragment ConsoleApproval on Approval {
    id tool targetType targetId agentId rationale before after status error createdAt expiresAt decidedAt
    comment supervisorMessageId requestedBy { id name email }
    replay { ...ConsoleReplay }
  }`,
  [ReplayFields],
);

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
  `mutation ConsoleReject($id: ID!, $input: RejectApprovalInput) {
    rejectApproval(id: $id, input: $input) { ...ConsoleApproval }
  }`,
  [ApprovalFields],
);
const REPLAY = graphql(
  `mutation ConsoleReplayApproval($id: ID!) { replayApproval(id: $id) { ...ConsoleApproval } }`,
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

/** The second question before approving a change under which replayed conversations REGRESSED. */
function regressedQuestion(replay: NonNullable<Approval["replay"]>): string {
  const n = replay.regressed;
  const still = replay.status === "RUNNING" || replay.status === "PENDING"
    ? ` The replay is still running (${replay.done} of ${replay.total}).`
    : "";
  return `${n} of ${replay.total} replayed ${replay.total === 1 ? "conversation" : "conversations"} ` +
    `REGRESSED under this change: the proposed agent loses an action the customer got, or answers ` +
    `worse.${still} Approve it anyway?`;
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

/**
 * The live events received, in order: their count, and the count when each approval's latest one
 * arrived. An answer to a request sent after `sentAt` events (a read, a mutation's answer) may be
 * older than an event that arrived meanwhile: a replay moves on without leaving PENDING, so the
 * status alone cannot tell. Events come in order and each carries the approval as it then is, so
 * such an answer is left out for that approval: the event, or one after it, says more.
 */
class EventOrder {
  count = 0;
  #latest = new Map<string, number>();
  received(id: string) {
    this.#latest.set(id, ++this.count);
  }
  /** `approvals` without those that had an event after `sentAt` events. */
  since(sentAt: number, approvals: Approval[]): Approval[] {
    return approvals.filter((a) => (this.#latest.get(a.id) ?? 0) <= sentAt);
  }
}

export function ApprovalsScreen() {
  const client = useClient();
  const [result, reread] = useQuery({ query: PENDING });
  const [liveError, setLiveError] = useState<CombinedError | undefined>();
  const order = useRef(new EventOrder()).current;
  // Each read carries the number of events received when it was sent (its context's `sentAt`).
  const readAgain = () => reread({ requestPolicy: "network-only", sentAt: order.count });
  const latestReadAgain = useRef(readAgain);
  latestReadAgain.current = readAgain;
  useRereadOnConnect(readAgain);
  // Approvals seen on this screen, so one decided elsewhere stays in view with its outcome.
  const [seen, setSeen] = useState<Map<string, Approval>>(new Map());
  const put = (approvals: Approval[], sentAt: number) =>
    setSeen((m) => withNewer(m, order.since(sentAt, approvals)));
  useEffect(() => {
    const edges = result.data?.approvals.edges;
    const sentAt = result.operation?.context.sentAt;
    if (edges) put(edges.map((e) => e.node), typeof sentAt === "number" ? sentAt : 0);
  }, [result.data]);
  // Every event is taken as it arrives (a replay's cases end in quick succession, several
  // approvals' at once): not only the latest one a render sees.
  useEffect(() => {
    const live = client.subscription(EVENTS, {}).subscribe((r) => {
      setLiveError(r.error);
      const event = r.data?.approvalEvents;
      if (!event) return;
      order.received(event.approval.id);
      setSeen((m) => withNewer(m, [event.approval]));
      if (event.type === "CREATED") latestReadAgain.current();
    });
    return () => live.unsubscribe();
  }, [client]);
  const names = new Map(result.data?.agents.edges.map((e) => [e.node.id, e.node.name]) ?? []);
  const list = [...seen.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  /** Sends a mutation of one approval and puts its answer in (see EventOrder). */
  const send = async (mutation: () => Promise<Approval | undefined>) => {
    const sentAt = order.count;
    const a = await mutation();
    if (a) put([a], sentAt);
  };
  return (
    <section>
      <h1>Approvals</h1>
      <ErrorNote error={result.error ?? liveError} />
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
          send={send}
        />
      ))}
    </section>
  );
}

export function ApprovalCard(
  { approval: a, agentName, send }: {
    approval: Approval;
    agentName?: string;
    /** Sends a mutation of this approval; its answer (the approval) is shown unless older than an event. */
    send: (mutation: () => Promise<Approval | undefined>) => Promise<void>;
  },
) {
  const [approving, approve] = useMutation(APPROVE);
  const [rejecting, reject] = useMutation(REJECT);
  const [replaying, replay] = useMutation(REPLAY);
  const [reason, setReason] = useState<string | null>(null);
  const [comment, setComment] = useState("");
  // Refused as no longer PENDING (decided elsewhere, or expired before the sweep marked it): no
  // decision is offered any more. A stale one stays PENDING and may still be rejected.
  const [closed, setClosed] = useState(false);
  // "Approve" was pressed while a replayed case REGRESSED: the second question is on screen.
  const [confirming, setConfirming] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const approveRef = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  useLayoutEffect(() => {
    // The focus follows the question (the button pressed is gone), and comes back after it; before
    // the question is painted, so a key pressed as it appears reaches it.
    if (confirming) cancelRef.current?.focus();
    else if (asked.current) approveRef.current?.focus();
    asked.current = confirming;
  }, [confirming]);
  const refused = (error: CombinedError) => {
    const code = errorCode(error);
    if (code === "APPROVAL_NOT_PENDING") setClosed(true);
    setReason(whyNot(code, errorText(error)));
  };
  const decide = (which: "approve" | "reject") =>
    send(async () => {
      setReason(null);
      setConfirming(false);
      if (which === "approve") {
        const r = await approve({ id: a.id });
        return r.error ? void refused(r.error) : r.data?.approveApproval;
      }
      const r = await reject({ id: a.id, input: comment.trim() ? { comment: comment.trim() } : null });
      return r.error ? void refused(r.error) : r.data?.rejectApproval;
    });
  const replayAgain = () =>
    send(async () => {
      setReason(null);
      const r = await replay({ id: a.id });
      return r.error ? void refused(r.error) : r.data?.replayApproval;
    });
  const onApprove = () => (a.replay && a.replay.regressed > 0 ? setConfirming(true) : decide("approve"));
  const pending = a.status === "PENDING" && !closed;
  const title = TOOL_LABELS[a.tool] ?? a.tool;
  return (
    <article class="card approval" aria-label={`${title}${agentName ? ` for ${agentName}` : ""}`}>
      <h2>
        {title}
        {agentName && <>{" "}· {agentName}</>} <Badge value={a.status} />
      </h2>
      <p class="muted">
        <code>{a.tool}</code> · proposed <Time value={a.createdAt} />
        {pending && (
          <>
            {" "}· expires <Time value={a.expiresAt} />
          </>
        )}
      </p>
      <RequestedBy approval={a} />
      <p class="rationale">{a.rationale}</p>
      <ChangeDiff before={a.before} after={a.after} />
      {a.replay && (
        <section class="replay" aria-label="Replay">
          <h3>What the agent would answer</h3>
          <ReplaySummary
            replay={a.replay}
            onReplay={pending && a.replay.status !== "OFF" ? replayAgain : undefined}
            replaying={replaying.fetching}
          />
        </section>
      )}
      {a.status !== "PENDING" && (
        <p class="note" role="status">
          {OUTCOME[a.status] ?? a.status}
          {a.error && <>{a.error}</>}
        </p>
      )}
      {a.comment && (
        <p class="decision-comment">
          <span class="muted">Comment:</span> <q>{a.comment}</q>
        </p>
      )}
      {reason && <p class="error" role="alert">{reason}</p>}
      {pending && !confirming && (
        <label class="comment-field">
          Comment if you reject (optional)
          <textarea
            rows={2}
            maxLength={2000}
            value={comment}
            onInput={(e) => setComment((e.target as HTMLTextAreaElement).value)}
          />
        </label>
      )}
      {pending && !confirming && (
        <div class="buttons">
          <button ref={approveRef} type="button" disabled={approving.fetching} onClick={onApprove}>
            Approve
          </button>
          <button type="button" class="danger" disabled={rejecting.fetching} onClick={() => decide("reject")}>
            Reject
          </button>
        </div>
      )}
      {pending && confirming && a.replay && (
        <div
          class="confirm"
          role="alertdialog"
          aria-label="Approve despite regressions"
          aria-describedby={`q-${a.id}`}
        >
          <p id={`q-${a.id}`}>{regressedQuestion(a.replay)}</p>
          <div class="buttons">
            <button type="button" disabled={approving.fetching} onClick={() => decide("approve")}>
              Approve anyway
            </button>
            <button ref={cancelRef} type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {a.replay && <ReplayCases replay={a.replay} />}
    </article>
  );
}

/**
 * Who asked for the change: the member whose message to the supervisor led to it, with a link to
 * the supervisor's answer that proposed it (none once the supervisor conversation was reset).
 */
function RequestedBy({ approval: a }: { approval: Approval }) {
  return (
    <p class="requested">
      Asked by {a.requestedBy
        ? (
          <>
            <strong>{a.requestedBy.name}</strong> <span class="muted">({a.requestedBy.email})</span>
          </>
        )
        : <strong>an API token or a former member</strong>}
      {a.supervisorMessageId && (
        <>
          {" "}· <a href={href("supervisor", a.supervisorMessageId)}>See where it was asked</a>
        </>
      )}
    </p>
  );
}
