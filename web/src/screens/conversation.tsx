/// <reference lib="dom" />
/**
 * One conversation: its messages, live (`messageAdded`), media with their transcript or text, each
 * outgoing message's state (sending, sent, delivered, read, or failed with the channel's reason),
 * WhatsApp's window (the time left, or "Window closed"), and for those who attend chats "Take
 * over", "Release", "Close" and, while a person has it (HUMAN), a "Reply" box with "Send", disabled
 * once the window has closed.
 */
import { useMutation, useQuery, useSubscription } from "@urql/preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { can, type Role } from "../session.ts";
import { href } from "../router.ts";
import { errorCode } from "../graphql.ts";
import { graphql, type ResultOf } from "../schema.ts";
import { Badge, ErrorNote, Time, useRereadOnConnect } from "../ui.tsx";
import { MessageFields, useDesk } from "../inbox.ts";
import { timeLeft, useWindow, type WindowState } from "../window.ts";
import { type FieldProblem, parametersOf, shapeOf } from "../templates.ts";
import {
  approved,
  fieldProblems,
  NO_CHOICE,
  type TemplateChoice,
  TemplateFields,
  TemplatePicker,
} from "./templates.tsx";
import { useSavedReplyOffer } from "./saved_replies.tsx";

/**
 * A media message's signed URL lives 5 to 10 minutes (docs/behaviour.md "Media"): a conversation
 * with media reads its messages again this often, so a link clicked later still works.
 */
const MEDIA_LINK_REFRESH_MS = 4 * 60_000;

/** How many times in a row the messages are read again when the cache answers without them. */
const MISSING_REREADS = 3;

const CONVERSATION = graphql(`query ConsoleConversation($id: ID!) {
  conversation(id: $id) {
    id agentId status contactName contactId transferSummary humanReason closeReason unread
    assignee { id name email }
    createdAt
    contact {
      id name externalId
      conversations(first: 11) { edges { node { id status createdAt lastMessageAt } } }
    }
    channel { id label type }
    window { open closesAt }
  }
}`);

const MESSAGES = graphql(
  `query ConsoleMessages($id: ID!) {
    conversationMessages(conversationId: $id, last: 100) { edges { node { ...ConsoleMessage } } }
  }`,
  [MessageFields],
);

const MESSAGE_ADDED = graphql(
  `subscription ConsoleMessageAdded($id: ID!) { messageAdded(conversationId: $id) { ...ConsoleMessage } }`,
  [MessageFields],
);

/** What a conversation's actions answer. */
const ConversationFields = graphql(`fragment ConsoleConversationState on Conversation {
  id status transferSummary humanReason closeReason unread assignee { id name email } window { open closesAt }
}`);
const TAKEOVER = graphql(
  `mutation ConsoleTakeover($id: ID!) { takeoverConversation(id: $id) { ...ConsoleConversationState } }`,
  [ConversationFields],
);
const RELEASE = graphql(
  `mutation ConsoleRelease($id: ID!) { releaseConversation(id: $id) { ...ConsoleConversationState } }`,
  [ConversationFields],
);
const CLOSE = graphql(
  `mutation ConsoleClose($id: ID!) { closeConversation(id: $id) { ...ConsoleConversationState } }`,
  [ConversationFields],
);
const ASSIGN = graphql(
  `mutation ConsoleAssign($id: ID!, $input: AssignConversationInput!) {
    assignConversation(id: $id, input: $input) { ...ConsoleConversationState }
  }`,
  [ConversationFields],
);
const RESEND = graphql(
  `mutation ConsoleResend($id: ID!) { resendMessage(id: $id) { ...ConsoleMessage } }`,
  [MessageFields],
);
const MARK_READ = graphql(`mutation ConsoleMarkRead($id: ID!) { markConversationRead(id: $id) }`);
const REPLY = graphql(
  `mutation ConsoleReply($id: ID!, $input: ReplyInConversationInput!) {
    replyInConversation(id: $id, input: $input) { ...ConsoleConversationState }
  }`,
  [ConversationFields],
);

const TEMPLATES = graphql(
  `query ConsoleChannelTemplates($channelId: ID!) {
    templates(channelId: $channelId, first: 100) { edges { node { ...ConsoleTemplate } } }
  }`,
  [TemplateFields],
);
const SEND_TEMPLATE = graphql(
  `mutation ConsoleSendTemplate($id: ID!, $input: SendTemplateInput!) {
    sendTemplate(id: $id, input: $input) { ...ConsoleConversationState }
  }`,
  [ConversationFields],
);

type Message = ResultOf<typeof MessageFields>;
type Conversation = ResultOf<typeof CONVERSATION>["conversation"];

export function ConversationScreen({ id, role }: { id: string; role: Role }) {
  const [conv, reread] = useQuery({ query: CONVERSATION, variables: { id } });
  const rereadNow = () => reread({ requestPolicy: "network-only" });
  useRereadOnConnect(rereadNow);
  const c = conv.data?.conversation;
  if (!c) {
    return (
      <section>
        <ErrorNote error={conv.error} />
        {conv.fetching && <p>Loading…</p>}
      </section>
    );
  }
  return <ConversationView key={c.id} conversation={c} role={role} reread={rereadNow} />;
}

function ConversationView(
  { conversation: c, role, reread }: { conversation: Conversation; role: Role; reread: () => void },
) {
  const windowState = useWindow(c.window);
  const { userId } = useDesk();
  useMarkRead(c.id);
  return (
    <section class="conversation" aria-label="Open conversation">
      <p class="back">
        <a href={href("conversations")}>← Conversations</a>
      </p>
      <h2 class="contact-name">
        {c.contactName || c.contactId} <Badge value={c.status} />
      </h2>
      <p class="muted">
        {c.contactId} · {c.channel.label}
        {c.status === "HUMAN" && c.transferSummary && <>{" · handed over: "}{c.transferSummary}</>}
      </p>
      <p class="holder">
        {c.assignee
          ? (c.assignee.id === userId ? "Assigned to you" : `Assigned to ${c.assignee.name}`)
          : "Unassigned"}
      </p>
      <ContactPanel conversation={c} windowState={windowState} />
      <Messages id={c.id} role={role} windowClosed={windowState.kind === "CLOSED"} />
      {can.attend(role) && <Actions conversation={c} windowState={windowState} onRefused={reread} />}
      {/* Not in the actions' bar, which stays in view: on a phone the form would cover the messages. */}
      {can.attend(role) && c.status !== "CLOSED" && windowState.kind === "CLOSED" && (
        <TemplateSender conversation={c} />
      )}
    </section>
  );
}

/**
 * This member has read the conversation: when it opens, and again as each message arrives while it
 * is open and in view (one seen later counts as unread until the page is back in view). The desk
 * then reads its counts again.
 */
function useMarkRead(id: string) {
  const { changed } = useDesk();
  const [, markRead] = useMutation(MARK_READ);
  const [added] = useSubscription({ query: MESSAGE_ADDED, variables: { id } });
  const [visible, setVisible] = useState(() => document.visibilityState === "visible");
  useEffect(() => {
    const onChange = () => setVisible(document.visibilityState === "visible");
    document.addEventListener("visibilitychange", onChange);
    return () => document.removeEventListener("visibilitychange", onChange);
  }, []);
  const arrived = added.data?.messageAdded.id;
  useEffect(() => {
    if (!visible) return;
    markRead({ id }).then((r) => {
      if (!r.error) changed();
    });
  }, [id, arrived, visible]);
}

/** How many of the contact's earlier conversations are linked. */
const EARLIER_SHOWN = 10;

/** The contact: name, address, the window, and their earlier conversations (as links). */
function ContactPanel(
  { conversation: c, windowState }: { conversation: Conversation; windowState: WindowState },
) {
  const earlier = c.contact.conversations.edges.map((e) => e.node)
    .filter((x) => x.id !== c.id && x.createdAt < c.createdAt).slice(0, EARLIER_SHOWN);
  return (
    <aside class="contact" aria-label="Contact">
      <dl class="contact-fields">
        <div>
          <dt>Name</dt>
          <dd>{c.contact.name || "(no name)"}</dd>
        </div>
        <div>
          <dt>Address</dt>
          <dd>{c.contact.externalId}</dd>
        </div>
      </dl>
      <WindowLine state={windowState} />
      {earlier.length > 0
        ? (
          <nav aria-label="Earlier conversations">
            <h3>Earlier conversations</h3>
            <ul class="earlier">
              {earlier.map((x) => (
                <li key={x.id}>
                  <a href={href("conversation", x.id)}>
                    <Time value={x.lastMessageAt} /> · {x.status}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )
        : <p class="muted earlier-none">No earlier conversations.</p>}
    </aside>
  );
}

/** WhatsApp's window: the time left, or closed. Nothing where there is none (API channels). */
function WindowLine({ state }: { state: WindowState }) {
  if (state.kind === "NONE") return null;
  return (
    <p class={`window window-${state.kind.toLowerCase()}`}>
      {state.kind === "OPEN" ? `Window closes in ${timeLeft(state.leftMs)}` : "Window closed"}
    </p>
  );
}

/**
 * The messages, live: new ones by `messageAdded`, each outgoing message's state by the desk's feed
 * (its MESSAGE_UPDATED events carry the message, which updates the one shown here).
 */
function Messages({ id, role, windowClosed }: { id: string; role: Role; windowClosed: boolean }) {
  const [result, reread] = useQuery({ query: MESSAGES, variables: { id } });
  const [added] = useSubscription({ query: MESSAGE_ADDED, variables: { id } });
  useRereadOnConnect(() => reread({ requestPolicy: "network-only" }));
  useEffect(() => {
    if (added.data) reread({ requestPolicy: "network-only" });
  }, [added.data]);
  // The cache answered without the list (seen after "Send again": a write left one of its
  // messages incomplete) and asks nobody: read it from the server, a few times at most in a row.
  const missing = !result.fetching && !result.data && !result.error;
  const misses = useRef(0);
  useEffect(() => {
    if (result.data) misses.current = 0;
    else if (missing && misses.current++ < MISSING_REREADS) reread({ requestPolicy: "network-only" });
  }, [missing, !!result.data]);
  const end = useRef<HTMLLIElement>(null);
  const messages = result.data?.conversationMessages.edges.map((e) => e.node) ?? [];
  const hasMedia = messages.some((m) => m.mediaSignedUrl);
  useEffect(() => {
    if (!hasMedia) return;
    const timer = setInterval(() => reread({ requestPolicy: "network-only" }), MEDIA_LINK_REFRESH_MS);
    return () => clearInterval(timer);
  }, [hasMedia, id]);
  // A failed message sent again offers no second "Send again"; outside the window only a template
  // can be sent again (WhatsApp refuses text then).
  const resent = new Set(messages.map((m) => m.resentFromId).filter((x) => x !== null));
  const resendable = (m: Message) =>
    can.attend(role) && m.status === "FAILED" && m.sender !== "CUSTOMER" && !resent.has(m.id) &&
    (!windowClosed || m.template !== null);
  useEffect(() => end.current?.scrollIntoView?.({ block: "nearest" }), [messages.length]);
  return (
    <>
      <ErrorNote error={result.error} />
      <ol class="messages" aria-label="Messages" aria-live="polite">
        {messages.map((m) => (
          <MessageItem
            key={m.id}
            message={m}
            canResend={resendable(m)}
          />
        ))}
        <li ref={end} class="end" aria-hidden="true" />
      </ol>
    </>
  );
}

/** An outgoing message's state, in a word. */
const STATES: Partial<Record<Message["status"], string>> = {
  PENDING: "sending",
  SENT: "sent",
  DELIVERED: "delivered",
  READ: "read",
  FAILED: "failed",
  UNCONFIRMED: "not confirmed",
};

function MessageItem({ message: m, canResend }: { message: Message; canResend: boolean }) {
  const state = STATES[m.status];
  const [resend, doResend] = useMutation(RESEND);
  return (
    <li class={`message from-${m.sender.toLowerCase()}`} data-sender={m.sender} data-status={m.status}>
      <div class="meta">
        {m.sender} · <Time value={m.createdAt} />
        {state && (
          <>
            {" · "}
            <span class={`state state-${m.status.toLowerCase()}`}>{state}</span>
          </>
        )}
      </div>
      {m.template && <p class="muted template-name">Template {m.template.name} ({m.template.language})</p>}
      {m.media ? <MediaView message={m} /> : <p class="text">{m.content}</p>}
      {m.status === "FAILED" && <p class="error failure">Not delivered: {failureReason(m.error)}</p>}
      {canResend && (
        <div class="buttons">
          <button
            type="button"
            class="secondary small"
            disabled={resend.fetching}
            onClick={() => doResend({ id: m.id })}
          >
            Send again
          </button>
        </div>
      )}
      <ErrorNote error={resend.error} />
      {m.status === "UNCONFIRMED" && (
        <p class="muted">The send stopped midway: it may have reached the customer, and is not sent again.</p>
      )}
    </li>
  );
}

/**
 * Why a message was not delivered, in one line: ours (WINDOW_CLOSED), the channel's answer to the
 * send (`{ code, message }`), or a later failed status (`{ errors: [{ code, title, message, details }] }`).
 */
function failureReason(error: unknown): string {
  const e = isObject(error) ? error : {};
  if (e.code === "WINDOW_CLOSED") {
    return "the customer's 24-hour window had closed; only a template reaches them until they write again.";
  }
  if (typeof e.message === "string" && e.message) return e.message;
  const errors = Array.isArray(e.errors) ? e.errors.filter(isObject) : [];
  const lines = errors.map((x) =>
    [text(x.message) ?? text(x.title), text(x.details)].filter((p) => p !== null).join(": ") ||
    (x.code !== undefined ? `error ${x.code}` : "")
  ).filter((l) => l !== "");
  if (lines.length) return lines.join("; ");
  return e.code !== undefined ? `error ${e.code}` : "no reason was given.";
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);

/**
 * A media message: the file (image, audio, or a link), and what was understood of it. The file
 * comes straight from the media endpoint by its signed URL, never from this page's memory: the
 * endpoint's answer keeps its headers (a download unless the type is safe to show, sandboxed), so a
 * customer's file never runs as a page of the console's origin.
 */
function MediaView({ message: m }: { message: Message }) {
  const media = m.media!;
  const link = media.error ? null : m.mediaSignedUrl;
  // An image or a player keeps the link it loaded with (a new one would load it again, and stop a
  // voice note being played) until it fails, an expired link say; a download takes the newest.
  const [loaded, setLoaded] = useState(link);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (!loaded || failed) {
      setLoaded(link);
      setFailed(false);
    }
  }, [link]);
  const understood = m.transcript ?? m.text;
  return (
    <div class="media">
      {media.error && <p class="error">{media.error}</p>}
      {loaded && m.type === "IMAGE" && (
        <img
          src={loaded}
          alt={m.content || "image from the customer"}
          onError={() => setFailed(true)}
        />
      )}
      {loaded && m.type === "AUDIO" && <audio controls src={loaded} onError={() => setFailed(true)} />}
      {link && m.type !== "IMAGE" && m.type !== "AUDIO" && (
        <a href={link} download={media.fileName ?? "file"}>{media.fileName ?? "Download the file"}</a>
      )}
      {failed && <p class="muted">The file could not be loaded.</p>}
      {m.content && <p class="text">{m.content}</p>}
      {understood && (
        <p class="understood">
          <span class="muted">{m.transcript ? "Transcript: " : "Text: "}</span>
          {understood}
        </p>
      )}
    </div>
  );
}

/** The id of the "Reply" box (the desk's `r` focuses it). */
export const REPLY_ID = "reply-text";

/** Why "Reply" is disabled outside the window. */
const WINDOW_CLOSED_WHY =
  "Window closed: WhatsApp takes only an approved template until the customer writes again.";

function Actions(
  { conversation: c, windowState, onRefused }: {
    conversation: Conversation;
    windowState: WindowState;
    /** The server refused a reply (the window closed meanwhile): read the conversation again. */
    onRefused: () => void;
  },
) {
  const [takeover, doTakeover] = useMutation(TAKEOVER);
  const [release, doRelease] = useMutation(RELEASE);
  const [close, doClose] = useMutation(CLOSE);
  const [reply, doReply] = useMutation(REPLY);
  const [assign, doAssign] = useMutation(ASSIGN);
  const { userId } = useDesk();
  const [text, setText] = useState("");
  const [closing, setClosing] = useState(false);
  // Someone else holds it: a reply first asks to take it over from them.
  const [askTake, setAskTake] = useState(false);
  const error = takeover.error ?? release.error ?? close.error ?? reply.error ?? assign.error;
  const closed = windowState.kind === "CLOSED";
  const heldByOther = c.assignee !== null && c.assignee.id !== userId;

  const send = async (e?: Event) => {
    e?.preventDefault();
    if (!text.trim() || reply.fetching) return;
    if (heldByOther) return setAskTake(true);
    const r = await doReply({ id: c.id, input: { content: text } });
    if (!r.error) setText("");
    else if (errorCode(r.error) === "WINDOW_CLOSED") onRefused();
  };
  const takeAndSend = async () => {
    const r = await doAssign({ id: c.id, input: { userId } });
    setAskTake(false);
    if (r.error) return;
    const sent = await doReply({ id: c.id, input: { content: text } });
    if (!sent.error) setText("");
    else if (errorCode(sent.error) === "WINDOW_CLOSED") onRefused();
  };
  const box = useRef<HTMLTextAreaElement>(null);
  const offer = useSavedReplyOffer(box, text, setText);
  // Enter sends, Shift+Enter starts a new line; not while an input method composes a word, nor
  // while saved replies are offered (Enter picks one).
  const onReplyKey = (e: KeyboardEvent) => {
    if (e.isComposing || offer.onKeyDown(e)) return;
    if (e.key !== "Enter" || e.shiftKey) return;
    e.preventDefault();
    void send();
  };

  return (
    <div class="actions">
      <ErrorNote error={error} />
      <div class="buttons">
        {c.status === "OPEN" && (
          <button type="button" onClick={() => doTakeover({ id: c.id })}>Take over</button>
        )}
        {c.status === "HUMAN" && (
          <button type="button" onClick={() => doRelease({ id: c.id })}>Release</button>
        )}
        {c.status !== "CLOSED" && c.assignee?.id !== userId && (
          <button
            type="button"
            class="secondary"
            onClick={() => doAssign({ id: c.id, input: { userId } })}
          >
            Assign to me
          </button>
        )}
        {c.status !== "CLOSED" && !closing && (
          <button
            type="button"
            class="secondary"
            onClick={() => setClosing(true)}
          >
            Close
          </button>
        )}
      </div>
      {closing && c.status !== "CLOSED" && (
        <CloseConfirm
          who={c.contactName || c.contactId}
          onConfirm={async () => {
            await doClose({ id: c.id });
            setClosing(false);
          }}
          onCancel={() => setClosing(false)}
        />
      )}
      {c.status === "HUMAN" && offer.list}
      {c.status === "HUMAN" && (
        <form class="reply" onSubmit={send}>
          <label>
            Reply
            <textarea
              id={REPLY_ID}
              ref={box}
              value={text}
              onInput={(e) => {
                setText((e.target as HTMLTextAreaElement).value);
                offer.onCaret();
              }}
              onKeyDown={onReplyKey}
              onKeyUp={offer.onCaret}
              onClick={offer.onCaret}
              rows={3}
              required
              disabled={closed}
              aria-describedby={closed ? "reply-why" : undefined}
            />
          </label>
          <button type="submit" disabled={closed || reply.fetching || !text.trim()}>Send</button>
        </form>
      )}
      {askTake && c.assignee && (
        <div class="confirm" role="alertdialog" aria-labelledby="take-question">
          <p id="take-question">
            {c.assignee.name} holds this conversation. Take it over from them and send your reply?
          </p>
          <div class="buttons">
            <button type="button" onClick={takeAndSend} disabled={assign.fetching}>
              Take it over and send
            </button>
            <button type="button" class="secondary" onClick={() => setAskTake(false)}>Cancel</button>
          </div>
        </div>
      )}
      {c.status === "HUMAN" && closed && <p class="muted" id="reply-why">{WINDOW_CLOSED_WHY}</p>}
    </div>
  );
}

/**
 * "Close" asks first: a closed conversation cannot be opened again (the customer's next message
 * starts a new one). The question takes the focus on "Cancel" before it is painted (so a key pressed
 * as it appears reaches it, and Enter by habit closes nothing); Escape or "Cancel" keeps it open.
 */
function CloseConfirm(
  { who, onConfirm, onCancel }: { who: string; onConfirm: () => void; onCancel: () => void },
) {
  const cancel = useRef<HTMLButtonElement>(null);
  useLayoutEffect(() => cancel.current?.focus(), []);
  return (
    <div
      class="confirm"
      role="alertdialog"
      aria-labelledby="close-question"
      onKeyDown={(e) => {
        if (e.key === "Escape") onCancel();
      }}
    >
      <p id="close-question">
        Close the conversation with {who}? It cannot be opened again; their next message starts a new one.
      </p>
      <div class="buttons">
        <button type="button" class="danger" onClick={onConfirm}>Close conversation</button>
        <button ref={cancel} type="button" class="secondary" onClick={onCancel}>Cancel</button>
      </div>
    </div>
  );
}

/**
 * Outside the window: an approved template of the conversation's channel, with its parameters.
 * The API's problems with them (422 TEMPLATE_PARAMETERS) are shown next to their inputs.
 */
function TemplateSender({ conversation: c }: { conversation: Conversation }) {
  const [list] = useQuery({ query: TEMPLATES, variables: { channelId: c.channel.id } });
  const [state, send] = useMutation(SEND_TEMPLATE);
  const [choice, setChoice] = useState<TemplateChoice>(NO_CHOICE);
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [sent, setSent] = useState<string | null>(null);
  const templates = approved(list.data?.templates.edges.map((e) => e.node) ?? []);
  const choose = (next: TemplateChoice) => {
    setChoice(next);
    setSent(null);
    if (next.template !== choice.template) setProblems([]);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const template = choice.template;
    if (!template) return;
    const parameters = parametersOf(shapeOf(template), choice.values);
    const r = await send({
      id: c.id,
      input: { name: template.name, language: template.language, parameters },
    });
    setProblems(fieldProblems(r.error));
    if (!r.error) {
      setChoice(NO_CHOICE);
      setSent(`${template.name} sent.`);
    }
  };
  const unsupported = choice.template ? shapeOf(choice.template).unsupported.length > 0 : false;
  return (
    <form class="template-form stack" onSubmit={submit} aria-label="Send a template">
      <ErrorNote error={list.error ?? (problems.length ? null : state.error)} />
      {list.data && !templates.length && (
        <p class="note">
          This channel has no approved template: none can reach the customer until they write.
        </p>
      )}
      {templates.length > 0 && (
        <TemplatePicker templates={templates} choice={choice} onChoice={choose} problems={problems} />
      )}
      {sent && <p class="note" role="status">{sent}</p>}
      {choice.template && (
        <div class="buttons">
          <button type="submit" disabled={state.fetching || unsupported}>Send template</button>
        </div>
      )}
    </form>
  );
}
