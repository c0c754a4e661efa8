/// <reference lib="dom" />
/**
 * One conversation: its messages, live (`messageAdded`), media with their transcript or text,
 * and for those who attend chats "Take over", "Release", "Close" and, while a person has it
 * (HUMAN), a "Reply" box with "Send".
 */
import { useMutation, useQuery, useSubscription } from "@urql/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { can, type Role } from "../session.ts";
import { href } from "../router.ts";
import { graphql, type ResultOf } from "../schema.ts";
import { Badge, ErrorNote, Time, useRereadOnConnect } from "../ui.tsx";

const MessageFields = graphql(`fragment ConsoleMessage on Message {
  id sender type content text transcript status createdAt mediaSignedUrl
  media { id mimeType size fileName error url }
}`);

/**
 * A media message's signed URL lives 5 to 10 minutes (docs/behaviour.md "Media"): a conversation
 * with media reads its messages again this often, so a link clicked later still works.
 */
const MEDIA_LINK_REFRESH_MS = 4 * 60_000;

const CONVERSATION = graphql(`query ConsoleConversation($id: ID!) {
  conversation(id: $id) {
    id agentId status contactName contactId transferSummary humanReason closeReason assignedUserId
    channel { id label type }
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

// The status may change elsewhere (the agent hands over, another person takes over or closes).
const STATUS_EVENTS = graphql(`subscription ConsoleConversationStatus($agentId: ID!) {
  conversationEvents(agentId: $agentId) { type conversation { id status transferSummary assignedUserId } }
}`);

/** What a conversation's actions answer. */
const ConversationFields = graphql(`fragment ConsoleConversationState on Conversation {
  id status transferSummary humanReason closeReason assignedUserId
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
const REPLY = graphql(
  `mutation ConsoleReply($id: ID!, $input: ReplyInConversationInput!) {
    replyInConversation(id: $id, input: $input) { ...ConsoleConversationState }
  }`,
  [ConversationFields],
);

type Message = ResultOf<typeof MessageFields>;
type Conversation = ResultOf<typeof CONVERSATION>["conversation"];

export function ConversationScreen({ id, role }: { id: string; role: Role }) {
  const [conv, reread] = useQuery({ query: CONVERSATION, variables: { id } });
  useRereadOnConnect(() => reread({ requestPolicy: "network-only" }));
  const c = conv.data?.conversation;
  if (!c) {
    return (
      <section>
        <ErrorNote error={conv.error} />
        {conv.fetching && <p>Loading…</p>}
      </section>
    );
  }
  return (
    <section class="conversation">
      <p>
        <a href={href("conversations", c.agentId)}>← Conversations</a>
      </p>
      <h1>
        {c.contactName || c.contactId} <Badge value={c.status} />
      </h1>
      <p class="muted">
        {c.contactId} · {c.channel.label}
        {c.status === "HUMAN" && c.transferSummary && <>· handed over: {c.transferSummary}</>}
      </p>
      <StatusFeed agentId={c.agentId} />
      <Messages id={id} />
      {can.attend(role) && <Actions conversation={c} />}
    </section>
  );
}

/** Keeps the status current: the events' conversations update the cached one. */
function StatusFeed({ agentId }: { agentId: string }) {
  useSubscription({ query: STATUS_EVENTS, variables: { agentId } });
  return null;
}

function Messages({ id }: { id: string }) {
  const [result, reread] = useQuery({ query: MESSAGES, variables: { id } });
  const [added] = useSubscription({ query: MESSAGE_ADDED, variables: { id } });
  useRereadOnConnect(() => reread({ requestPolicy: "network-only" }));
  useEffect(() => {
    if (added.data) reread({ requestPolicy: "network-only" });
  }, [added.data]);
  const end = useRef<HTMLLIElement>(null);
  const messages = result.data?.conversationMessages.edges.map((e) => e.node) ?? [];
  const hasMedia = messages.some((m) => m.mediaSignedUrl);
  useEffect(() => {
    if (!hasMedia) return;
    const timer = setInterval(() => reread({ requestPolicy: "network-only" }), MEDIA_LINK_REFRESH_MS);
    return () => clearInterval(timer);
  }, [hasMedia, id]);
  useEffect(() => end.current?.scrollIntoView?.({ block: "nearest" }), [messages.length]);
  return (
    <>
      <ErrorNote error={result.error} />
      <ol class="messages" aria-label="Messages" aria-live="polite">
        {messages.map((m) => <MessageItem key={m.id} message={m} />)}
        <li ref={end} class="end" aria-hidden="true" />
      </ol>
    </>
  );
}

function MessageItem({ message: m }: { message: Message }) {
  return (
    <li class={`message from-${m.sender.toLowerCase()}`} data-sender={m.sender}>
      <div class="meta">
        {m.sender} · <Time value={m.createdAt} />
        {m.status === "FAILED" && <>· not delivered</>}
      </div>
      {m.media ? <MediaView message={m} /> : <p class="text">{m.content}</p>}
    </li>
  );
}

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

function Actions({ conversation: c }: { conversation: Conversation }) {
  const [takeover, doTakeover] = useMutation(TAKEOVER);
  const [release, doRelease] = useMutation(RELEASE);
  const [close, doClose] = useMutation(CLOSE);
  const [reply, doReply] = useMutation(REPLY);
  const [text, setText] = useState("");
  const error = takeover.error ?? release.error ?? close.error ?? reply.error;

  const send = async (e: Event) => {
    e.preventDefault();
    const r = await doReply({ id: c.id, input: { content: text } });
    if (!r.error) setText("");
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
        {c.status !== "CLOSED" && (
          <button
            type="button"
            class="secondary"
            onClick={() => doClose({ id: c.id })}
          >
            Close
          </button>
        )}
      </div>
      {c.status === "HUMAN" && (
        <form class="reply" onSubmit={send}>
          <label>
            Reply
            <textarea
              value={text}
              onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
              rows={3}
              required
            />
          </label>
          <button type="submit" disabled={reply.fetching || !text.trim()}>Send</button>
        </form>
      )}
    </div>
  );
}
