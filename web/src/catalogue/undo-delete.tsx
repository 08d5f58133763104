// After a delete: a notice with Undo for a few seconds (POST /book/{id}/restore). It stays while
// the pointer is over it or the focus in it; the focus goes to Undo, as the row deleted is gone
// (the page's status has said what was deleted; Undo is described by the notice's words).
import type { Book, BookCatalogueClient } from "book-catalogue";
import { CatalogueError } from "book-catalogue";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { describeFailure, endsSession } from "../session.js";

/** How long Undo is offered, once neither the pointer nor the focus is on it. */
const UNDO_MS = 10_000;

interface Props {
  client: BookCatalogueClient;
  /** The book just deleted here; undefined when there is nothing to undo. */
  deleted: Book | undefined;
  /** The book is back; the notice goes. */
  onRestored: (book: Book) => void;
  /** Undo is no longer offered. */
  onDismiss: () => void;
  /** Escape in the notice: Undo is no longer offered, and the focus goes back to the rows. */
  onEscape: () => void;
  onFailure: (error: unknown) => void;
}

/** Why a restore was refused, in the page's words. */
function whyNot(error: unknown): string {
  if (error instanceof CatalogueError && error.status === 409) return "It is back already.";
  if (error instanceof CatalogueError && error.status === 404) {
    return "It can no longer be brought back.";
  }
  return describeFailure(error);
}

/**
 * The focus to the first button of the row now at `index` (the one after a book deleted), or
 * of the last row; to the search box when no row is left.
 */
export function focusRowAt(index: number): void {
  const rows = document.querySelectorAll("tbody tr");
  const row = rows[Math.min(Math.max(index, 0), rows.length - 1)];
  const target = row?.querySelector("button") ?? document.querySelector<HTMLElement>("#search");
  target?.focus();
}

export function UndoNotice(props: Props) {
  const { client, deleted, onRestored, onDismiss, onEscape, onFailure } = props;
  const [held, setHeld] = useState(0);
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<string>();
  const undo = useRef<HTMLButtonElement>(null);
  useLayoutEffect(() => {
    setRefused(undefined);
    setHeld(0);
    undo.current?.focus();
  }, [deleted]);
  useEffect(() => {
    if (deleted === undefined || held > 0) return;
    const timer = setTimeout(onDismiss, UNDO_MS);
    return () => clearTimeout(timer);
  }, [deleted, held > 0]);

  const restore = async (book: Book) => {
    setBusy(true);
    try {
      onRestored(await client.restore(book.id));
      onDismiss();
    } catch (error) {
      if (endsSession(error)) onFailure(error);
      else setRefused(whyNot(error));
    }
    setBusy(false);
  };
  const hold = (by: number) => () => setHeld((n) => Math.max(0, n + by));
  return (
    <div class="undo-frame">
      {deleted && (
        // biome-ignore lint/a11y/noStaticElementInteractions: hovering only holds the notice.
        <div
          class="notice undo"
          onMouseEnter={hold(1)}
          onMouseLeave={hold(-1)}
          onFocusIn={hold(1)}
          onFocusOut={hold(-1)}
          onKeyDown={(event) => event.key === "Escape" && onEscape()}
        >
          <p id="undo-what">
            Deleted “{deleted.title}”. <span role="status">{refused}</span>
          </p>
          <button
            type="button"
            ref={undo}
            aria-describedby="undo-what"
            disabled={busy}
            onClick={() => restore(deleted)}
          >
            {busy ? "Undoing…" : "Undo"}
          </button>
        </div>
      )}
    </div>
  );
}
