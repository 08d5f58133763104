// Moving between pages, and showing a book just added: each move ends with the new page's top
// in view (or the added book's row, briefly marked), whichever pager was clicked.

import type { Book, BookCatalogueClient } from "book-catalogue";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { type Jump, lastPage, pageBefore, pageOf, placeOf } from "./jumps.js";
import type { PagerMoves } from "./pager.js";
import { PAGE_SIZE } from "./query.js";
import { type ListingState, refusesCursor } from "./use-listing.js";
import type { WalkState } from "./use-walk.js";

// How long an added book stays marked (its highlight fades out before: styles.css).
const MARKED_MS = 6000;

/** Where the view goes once the page asked for is shown: its top, or a book's row. */
type Target = { to: "top"; from?: number } | { to: "book"; id: number; focus: boolean };

function scrollToTarget(target: Target) {
  if (target.to === "book") {
    const row = document.querySelector(`tr[data-book="${target.id}"]`);
    row?.scrollIntoView({ block: "center" });
    // A book brought back: the keyboard goes on from its row (the control it came from, Undo
    // or the dialog's Bring back, is gone).
    if (target.focus) row?.querySelector("button")?.focus();
    return;
  }
  const above = document.querySelector<HTMLElement>(".pages-above");
  if (above && above.getBoundingClientRect().top < 0) above.scrollIntoView({ block: "start" });
  // Moved from the pager below: the keyboard goes on from the same button above.
  if (target.from !== undefined) {
    above?.querySelectorAll<HTMLButtonElement>("button")[target.from]?.focus();
  }
}

/** Which button of the pager below has the focus, if one has. */
function buttonBelow(): number | undefined {
  const buttons = [...document.querySelectorAll(".pages-below button")];
  const at = buttons.indexOf(document.activeElement as Element);
  return at < 0 ? undefined : at;
}

export function useMoves(
  client: BookCatalogueClient,
  walk: WalkState,
  listing: ListingState,
  fail: (error: unknown) => void,
) {
  const target = useRef<Target>();
  const [marked, setMarked] = useState<number>();
  const { total, books, loading } = listing;
  const pages = total === undefined ? undefined : Math.max(1, Math.ceil(total / PAGE_SIZE));

  // As the page shows, not a frame later: no frame of the new rows where the old ones were.
  useLayoutEffect(() => {
    if (loading || target.current === undefined) return;
    scrollToTarget(target.current);
    target.current = undefined;
  }, [loading]);
  useEffect(() => {
    if (!walk.unplaced) return;
    const { query } = walk;
    placeOf(client, query).then(
      (place) => {
        if (place) walk.place(place.page, place.shownBefore);
      },
      // A cursor refused: the listing drops it (use-listing.ts), and there is nothing to place.
      (error) => refusesCursor(query, error) || fail(error),
    );
  }, []);
  useEffect(() => {
    if (marked === undefined) return;
    const timer = setTimeout(() => setMarked(undefined), MARKED_MS);
    return () => clearTimeout(timer);
  }, [marked]);

  const jump = (find: () => Promise<Jump | undefined>) =>
    find().then((to) => to && walk.jump(to), fail);
  /** Every move: the view goes to the top of the page it reaches. */
  const moving = (move: () => unknown) => () => {
    target.current = { to: "top", from: buttonBelow() };
    setMarked(undefined);
    move();
  };
  const firstOfSearch = () => walk.restart({ q: walk.query.q ?? "" });

  const moves: PagerMoves = {
    first: moving(firstOfSearch),
    previous: moving(() => {
      if (walk.previous()) return;
      const first = books?.[0];
      if (first) void jump(() => pageBefore(client, walk.query, first, walk.page));
      else firstOfSearch();
    }),
    next: moving(() => {
      if (listing.next) walk.forward(listing.next, books?.length ?? 0);
    }),
    last: moving(() => {
      if (total !== undefined) void jump(() => lastPage(client, walk.query, total));
    }),
  };

  /**
   * After Add, or a book brought back (`focus`: the focus to its row): to the book's page (of
   * the search, if it matches), its row marked.
   */
  const showAdded = async (book: Book, focus = false) => {
    target.current = { to: "book", id: book.id, focus };
    setMarked(book.id);
    await jump(() => pageOf(client, walk.query, book));
    listing.reload();
  };
  return { moves, pages, marked, showAdded };
}
