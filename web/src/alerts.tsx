/// <reference lib="dom" />
/**
 * What calls a member back to the desk: the page title's count, `(3) Switchboard`, and a browser
 * notification for each new customer message in a conversation that waits for them, that is one
 * they hold, or a HUMAN one nobody holds. The title counts those conversations' unread messages
 * (this member's, read by the API); notifications need the member's permission, asked from a
 * button (a browser asks only after a click, and a prompt on load is refused by most people).
 */
import { useQuery } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { graphql } from "./schema.ts";
import { navigate } from "./router.ts";
import { type InboxEvent, useDesk } from "./inbox.ts";
import { useRereadOnConnect } from "./ui.tsx";

export const TITLE = "Switchboard";

/** The unread messages of the conversations waiting for this member (theirs, and HUMAN ones nobody holds). */
const WAITING = graphql(`query ConsoleWaiting { workspace { id waiting { unread } } }`);

/** The title with the count of unread messages waiting for this member. */
export function useTitleCount(): number {
  const { version } = useDesk();
  const [result, reread] = useQuery({ query: WAITING });
  useRereadOnConnect(() => reread({ requestPolicy: "network-only" }));
  useEffect(() => {
    if (version > 0) reread({ requestPolicy: "network-only" });
  }, [version]);
  const count = result.data?.workspace.waiting.unread ?? 0;
  useEffect(() => {
    document.title = count > 0 ? `(${count}) ${TITLE}` : TITLE;
  }, [count]);
  useEffect(() => () => void (document.title = TITLE), []);
  return count;
}

/** Whether an event is a customer's new message in a conversation waiting for `userId`. */
export function waitsFor(event: InboxEvent, userId: string): boolean {
  if (event.type !== "MESSAGE_ADDED" || event.message?.sender !== "CUSTOMER") return false;
  const c = event.conversation;
  return c.assignee ? c.assignee.id === userId : c.status === "HUMAN";
}

const supported = () => typeof Notification !== "undefined";

/**
 * Shows a notification for each event waiting for this member, unless its conversation is the
 * one open in a page in view. A click brings the console forward on that conversation.
 */
export function useNotifications(openId: string | undefined) {
  const { event, userId } = useDesk();
  useEffect(() => {
    if (!event || !supported() || Notification.permission !== "granted" || !waitsFor(event, userId)) return;
    const c = event.conversation;
    if (c.id === openId && document.visibilityState === "visible") return;
    const m = event.message!;
    const n = new Notification(c.contactName || c.contactId, {
      body: m.transcript ?? m.text ?? m.content,
      tag: `${c.id}:${m.id}`,
    });
    n.onclick = () => {
      focus();
      navigate("conversation", c.id);
      n.close();
    };
  }, [event]);
}

/** "Turn on notifications", while the browser has not been told yes or no. */
export function NotificationsButton() {
  const [permission, setPermission] = useState(() => supported() ? Notification.permission : "denied");
  if (permission !== "default") {
    return permission === "denied" && supported()
      ? <p class="muted">Notifications are blocked in this browser's settings.</p>
      : null;
  }
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => setPermission(await Notification.requestPermission())}
    >
      Turn on notifications
    </button>
  );
}
