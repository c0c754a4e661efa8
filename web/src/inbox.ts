/// <reference lib="dom" />
/**
 * The desk's live feed and what it keeps current: `inboxEvents` carries every conversation of the
 * workspace as it opens, changes status or holder, gets a message, has a message's delivery state
 * change, or closes. The list, the open conversation (its status, holder, window, and each
 * message's state through the cache) and the title's count all hear this one subscription: the
 * client holds one for them all.
 */
import { createContext } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";
import { useSubscription } from "@urql/preact";
import { graphql, type ResultOf } from "./schema.ts";

/** A message as the conversation shows it. */
export const MessageFields = graphql(`fragment ConsoleMessage on Message {
  id sender type content text transcript status error createdAt mediaSignedUrl resentFromId
  media { id mimeType size fileName error url }
  template { name language }
}`);

export const INBOX_EVENTS = graphql(
  `subscription ConsoleInboxEvents {
    inboxEvents {
      type
      conversation {
        id agentId status contactName contactId lastMessageAt transferSummary unread
        assignee { id name email }
        window { open closesAt }
      }
      message { ...ConsoleMessage }
    }
  }`,
  [MessageFields],
);

export type InboxEvent = ResultOf<typeof INBOX_EVENTS>["inboxEvents"];

/**
 * What the desk's parts share: who is signed in, the feed's latest event, and a count that moves
 * whenever what they read may have changed (an event, a conversation marked read), so each part
 * reads itself again (a burst of events once).
 */
export interface Desk {
  userId: string;
  event: InboxEvent | null;
  version: number;
  /** Read again: something changed that no event announces (this member read a conversation). */
  changed(): void;
}

export const DeskContext = createContext<Desk>({ userId: "", event: null, version: 0, changed: () => {} });

export const useDesk = () => useContext(DeskContext);

/**
 * The desk's parts read again at most this often: a busy workspace sends many events a second,
 * and one read after a burst shows them all (the first event of a quiet spell is read at once).
 */
export const REREAD_GAP_MS = 400;

/** The feed, subscribed once for the desk: events move `version`, a burst of them once. */
export function useInboxFeed(userId: string): Desk {
  const [live] = useSubscription({ query: INBOX_EVENTS });
  const [version, setVersion] = useState(0);
  const [event, setEvent] = useState<InboxEvent | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const lastRead = useRef(0);
  const bump = () => {
    if (timer.current !== null) return;
    const wait = Math.max(0, lastRead.current + REREAD_GAP_MS - Date.now());
    timer.current = setTimeout(() => {
      timer.current = null;
      lastRead.current = Date.now();
      setVersion((v) => v + 1);
    }, wait);
  };
  useEffect(() => () => {
    if (timer.current !== null) clearTimeout(timer.current);
  }, []);
  useEffect(() => {
    if (!live.data) return;
    setEvent(live.data.inboxEvents);
    bump();
  }, [live.data]);
  return {
    userId,
    event,
    version,
    changed: bump,
  };
}
