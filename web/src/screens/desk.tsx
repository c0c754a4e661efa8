/// <reference lib="dom" />
/**
 * The agent's desk: the conversation list and the open conversation side by side on a wide screen
 * (one at a time on a narrow one, the conversation with a way back), and the keyboard: `j`/`k` the
 * next and previous conversation of the list, `r` to "Reply", `?` the list of shortcuts. The desk
 * stays mounted while conversations open and close, so the list keeps its filters and its place.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { can, type Role } from "../session.ts";
import { navigate } from "../router.ts";
import { DeskContext, useInboxFeed } from "../inbox.ts";
import { NotificationsButton, useNotifications, useTitleCount } from "../alerts.tsx";
import { ConversationList, type ListFilters, NO_FILTERS } from "./conversations.tsx";
import { ConversationScreen, REPLY_ID } from "./conversation.tsx";

/** The shortcuts as the "?" dialog lists them. */
export const SHORTCUTS: [keys: string, what: string][] = [
  ["j", "Open the next conversation of the list"],
  ["k", "Open the previous conversation of the list"],
  ["r", "Write in “Reply”"],
  ["Enter", "Send the reply (in “Reply”)"],
  ["Shift + Enter", "A new line in the reply"],
  ["?", "This list"],
  ["Escape", "Close this list"],
];

export function DeskScreen(
  { openId, agentId, role, userId }: { openId?: string; agentId?: string; role: Role; userId: string },
) {
  const desk = useInboxFeed(userId);
  return (
    <DeskContext.Provider value={desk}>
      <Desk openId={openId} agentId={agentId} role={role} />
    </DeskContext.Provider>
  );
}

function Desk({ openId, agentId, role }: { openId?: string; agentId?: string; role: Role }) {
  const [filters, setFilters] = useState<ListFilters>(() => ({ ...NO_FILTERS, agentId: agentId ?? "" }));
  // An agent named by the address (#/conversations/{agentId}) is chosen in the filter.
  useEffect(() => {
    if (agentId) setFilters((f) => ({ ...f, agentId }));
  }, [agentId]);
  useTitleCount();
  useNotifications(openId);
  const [showKeys, setShowKeys] = useState(false);
  const latestOpen = useRef(openId);
  latestOpen.current = openId;

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      if (document.querySelector("dialog[open]")) return;
      const ids = shownRows();
      const at = latestOpen.current ? ids.indexOf(latestOpen.current) : -1;
      if (e.key === "j" || e.key === "k") {
        const next = at < 0
          ? ids[0]
          : ids[Math.max(0, Math.min(ids.length - 1, at + (e.key === "j" ? 1 : -1)))];
        if (next && next !== latestOpen.current) navigate("conversation", next);
      } else if (e.key === "r") {
        const reply = document.getElementById(REPLY_ID) as HTMLTextAreaElement | null;
        if (!reply || reply.disabled) return;
        reply.focus();
      } else if (e.key === "?") {
        setShowKeys(true);
      } else return;
      // Not typed into what now has the focus ("r" into "Reply").
      e.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  return (
    <div class={`desk${openId ? " has-open" : ""}`}>
      <section class="desk-list" aria-label="Conversation list">
        <ConversationList filters={filters} onFilters={setFilters} openId={openId} />
        <div class="desk-foot">
          {can.attend(role) && <NotificationsButton />}
          <p class="muted keys-hint">Press ? for keyboard shortcuts.</p>
        </div>
      </section>
      <div class="desk-open">
        {openId
          ? <ConversationScreen key={openId} id={openId} role={role} />
          : <p class="muted choose">Choose a conversation, or press j to open the first.</p>}
      </div>
      {showKeys && <ShortcutsDialog onClose={() => setShowKeys(false)} />}
    </div>
  );
}

/** The conversations of the list as shown, in order (every page loaded). */
const shownRows = () =>
  [...document.querySelectorAll<HTMLElement>("ul.conversations > li[data-id]")].map((li) => li.dataset.id!);

/** Whether a key pressed in `target` is being typed (a field, a list box, editable text). */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** The shortcuts, in a modal dialog: Escape (the browser's own) or "Done" closes it. */
function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  // Open before it is painted: a key pressed as it appears reaches the dialog.
  useLayoutEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} class="shortcuts" aria-labelledby="shortcuts-title" onClose={onClose}>
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map(([keys, what]) => (
          <div key={keys}>
            <dt>
              <kbd>{keys}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <form method="dialog">
        <button type="submit">Done</button>
      </form>
    </dialog>
  );
}
