/// <reference lib="dom" />
/**
 * The workspace's supervisor chat: "Message" and "Send"; each answer shows its credits and the
 * changes it proposed, which wait under Approvals. `#/supervisor/<messageId>` (an approval's link)
 * scrolls to that answer and marks it.
 */
import { useMutation, useQuery } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { href } from "../router.ts";
import { graphql, type ResultOf } from "../schema.ts";
import { Badge, ErrorNote, formatCredits, Time } from "../ui.tsx";
import { TOOL_LABELS } from "./approvals.tsx";

/** A change a turn proposed (it waits under Approvals). */
const ProposalFields = graphql(`fragment ConsoleProposal on Approval { id tool status rationale agentId }`);
const TurnFields = graphql(
  `fragment ConsoleSupervisorTurn on SupervisorMessage {
    id role content credits createdAt approvals { ...ConsoleProposal }
  }`,
  [ProposalFields],
);

const CONVERSATION = graphql(
  `query ConsoleSupervisor { supervisorConversation { id messages { ...ConsoleSupervisorTurn } } }`,
  [TurnFields],
);
const SEND = graphql(
  `mutation ConsoleAskSupervisor($input: SendSupervisorMessageInput!) {
    sendSupervisorMessage(input: $input) {
      reply { ...ConsoleSupervisorTurn }
      approvals { ...ConsoleProposal }
    }
  }`,
  [TurnFields, ProposalFields],
);

type SupervisorMessage = ResultOf<typeof TurnFields>;

export function SupervisorScreen({ focus }: { focus?: string }) {
  const [result, reread] = useQuery({ query: CONVERSATION });
  const [sending, send] = useMutation(SEND);
  const [text, setText] = useState("");
  const [asked, setAsked] = useState<string | null>(null);
  const turns = result.data?.supervisorConversation.messages.filter((m) => m.role !== "TOOL") ?? [];
  const found = turns.some((m) => m.id === focus);
  useEffect(() => {
    const el = focus && found ? document.getElementById(`turn-${focus}`) : null;
    el?.scrollIntoView({ block: "center" });
    el?.focus({ preventScroll: true });
  }, [focus, found]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setAsked(text);
    const r = await send({ input: { message: text } });
    setAsked(null);
    if (!r.error) setText("");
    reread({ requestPolicy: "network-only" });
  };

  return (
    <section>
      <h1>Supervisor</h1>
      <p class="muted">
        Ask for changes to your agents. The supervisor proposes; nothing changes until it is approved.
      </p>
      <ErrorNote error={result.error} />
      <div class="chat" aria-label="Supervisor conversation" role="log">
        {turns.map((m) => <Turn key={m.id} message={m} focused={m.id === focus} />)}
        {asked && <div class="turn user">{asked}</div>}
        {sending.fetching && <p class="muted" role="status">The supervisor is thinking…</p>}
      </div>
      <ErrorNote error={sending.error} />
      <form class="reply" onSubmit={submit}>
        <label>
          Message
          <textarea
            value={text}
            rows={3}
            required
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit" disabled={sending.fetching || !text.trim()}>Send</button>
      </form>
    </section>
  );
}

function Turn({ message: m, focused }: { message: SupervisorMessage; focused: boolean }) {
  if (m.role === "USER") return <div class="turn user">{m.content}</div>;
  return (
    <article
      id={`turn-${m.id}`}
      class={focused ? "turn assistant focused" : "turn assistant"}
      aria-label="Supervisor answer"
      aria-current={focused ? "true" : undefined}
      tabIndex={focused ? -1 : undefined}
    >
      <div>{m.content}</div>
      <p class="muted">
        <span class="credits">{formatCredits(m.credits)} credits</span> · <Time value={m.createdAt} />
      </p>
      {m.approvals.length > 0 && (
        <ul class="proposals" aria-label="Proposed changes">
          {m.approvals.map((a) => (
            <li key={a.id}>
              <a href={href("approvals")}>{TOOL_LABELS[a.tool] ?? a.tool}</a> <Badge value={a.status} />
              <div class="muted">{a.rationale}</div>
            </li>
          ))}
        </ul>
      )}
    </article>
  );
}
