/// <reference lib="dom" />
/**
 * Saved replies in "Reply": typing `/` and the start of a shortcut (at the start of the text or
 * after a space) offers the workspace's saved replies with that shortcut; the arrow keys choose one,
 * Enter (or a click) puts its text in place of `/shortcut`, Escape dismisses the offer.
 */
import { useQuery } from "@urql/preact";
import type { JSX, RefObject } from "preact";
import { useEffect, useState } from "preact/hooks";
import { graphql } from "../schema.ts";

const SAVED_REPLIES = graphql(
  `query ConsoleSavedReplies { savedReplies(first: 100) { edges { node { id shortcut content } } } }`,
);

/** `/` and the shortcut typed so far, right before the caret. */
const TYPED_SHORTCUT = /(?:^|\s)\/([\w-]*)$/;

export interface SavedReplyOffer {
  /** The offer's list, or null when nothing is offered. */
  list: JSX.Element | null;
  /** The reply box's keys: true when the offer took the key (not to be sent or typed). */
  onKeyDown(e: KeyboardEvent): boolean;
  /** The caret moved or the text changed (input, click, arrow keys). */
  onCaret(): void;
}

export function useSavedReplyOffer(
  box: RefObject<HTMLTextAreaElement | null>,
  text: string,
  setText: (text: string) => void,
): SavedReplyOffer {
  const [result] = useQuery({ query: SAVED_REPLIES });
  const replies = result.data?.savedReplies.edges.map((e) => e.node) ?? [];
  const [caret, setCaret] = useState(0);
  const [chosen, setChosen] = useState(0);
  // The `/` whose offer Escape dismissed.
  const [dismissed, setDismissed] = useState<number | null>(null);
  const [placeCaret, setPlaceCaret] = useState<number | null>(null);

  const typed = TYPED_SHORTCUT.exec(text.slice(0, caret));
  const query = typed ? typed[1].toLowerCase() : null;
  const slash = typed ? caret - typed[1].length - 1 : -1;
  const matches = query === null || dismissed === slash
    ? []
    : replies.filter((r) => r.shortcut.startsWith(query));
  const index = Math.min(chosen, Math.max(0, matches.length - 1));
  useEffect(() => setChosen(0), [query]);
  useEffect(() => {
    if (placeCaret === null || !box.current) return;
    box.current.setSelectionRange(placeCaret, placeCaret);
    setCaret(placeCaret);
    setPlaceCaret(null);
  }, [placeCaret]);

  const pick = (i: number) => {
    const reply = matches[i];
    if (!reply) return;
    setText(text.slice(0, slash) + reply.content + text.slice(caret));
    setPlaceCaret(slash + reply.content.length);
  };

  const list = matches.length
    ? (
      <ul class="saved-replies" role="listbox" aria-label="Saved replies" id="saved-replies">
        {matches.map((r, i) => (
          <li
            key={r.id}
            id={`saved-reply-${r.id}`}
            role="option"
            aria-selected={i === index}
            // Keeps the focus in "Reply".
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => pick(i)}
          >
            <span class="shortcut">/{r.shortcut}</span> <span class="content">{r.content}</span>
          </li>
        ))}
      </ul>
    )
    : null;

  return {
    list,
    onKeyDown(e) {
      if (!matches.length) return false;
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        const step = e.key === "ArrowDown" ? 1 : -1;
        setChosen((index + step + matches.length) % matches.length);
      } else if (e.key === "Enter" || e.key === "Tab") {
        pick(index);
      } else if (e.key === "Escape") {
        setDismissed(slash);
      } else return false;
      e.preventDefault();
      return true;
    },
    onCaret() {
      if (box.current) setCaret(box.current.selectionStart);
    },
  };
}
