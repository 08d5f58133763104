// Above and below the table: to the first page, the previous, where the page is in the
// listing, the next, and the last.
import type { ListingState } from "./use-listing.js";
import type { WalkState } from "./use-walk.js";

export interface PagerMoves {
  first: () => void;
  previous: () => void;
  next: () => void;
  last: () => void;
}

interface Props {
  walk: WalkState;
  listing: ListingState;
  /** How many pages the count fills, once counted. */
  pages: number | undefined;
  moves: PagerMoves;
  /** The pager above the table carries the status that is announced; the one below repeats it. */
  place: "above" | "below";
}

/** "Page 2 of 3: books 21 to 40.", or why the page shows no books. */
function pageStatus({ walk, listing, pages }: Props): string {
  const { books } = listing;
  if (listing.loading) return "Loading…";
  // A search may answer pages short of full (docs/api.md): then the count tells no page number.
  const counted =
    pages !== undefined &&
    (walk.page < pages || (walk.page === pages && listing.next === undefined));
  const where = counted ? ` of ${pages}` : "";
  if (books !== undefined && books.length > 0) {
    const last = walk.first + books.length - 1;
    return `Page ${walk.page}${where}: books ${walk.first} to ${last}.`;
  }
  if (listing.next !== undefined) return "None in this stretch of the catalogue: Next searches on.";
  if (walk.page > 1) return "No more books here: go back a page.";
  return `No book matches “${walk.search.trim()}”.`;
}

/**
 * A move, off while loading or where it cannot go: marked so (`aria-disabled`) rather than
 * disabled, so that a button pressed keeps the keyboard's focus as the page changes under it,
 * to the last page too, where Next and Last are off.
 */
function Move(props: { label: string; off: boolean; onMove: () => void; secondary?: boolean }) {
  const { label, off, onMove, secondary = false } = props;
  return (
    <button
      type="button"
      class={secondary ? "secondary" : undefined}
      aria-disabled={off}
      onClick={off ? undefined : onMove}
    >
      {label}
    </button>
  );
}

export function Pager(props: Props) {
  const { walk, listing, pages, moves, place } = props;
  const { loading, next } = listing;
  // One page in all: nothing to move to, so only where the books are, and once.
  const single = walk.page === 1 && next === undefined;
  if (single && place === "below") return null;
  const atFirst = loading || walk.page === 1;
  const atLast = loading || next === undefined;
  const status = pageStatus(props);
  return (
    <nav
      class={`pages pages-${place}${single ? " pages-single" : ""}`}
      aria-label={`Pages, ${place} the table`}
    >
      {!single && (
        <div class="page-moves">
          <Move label="First" off={atFirst} onMove={moves.first} secondary />
          <Move label="Previous" off={atFirst} onMove={moves.previous} />
        </div>
      )}
      {place === "above" ? (
        <span id="page-status" class="page-status" aria-live="polite">
          {status}
        </span>
      ) : (
        <span class="page-status">{status}</span>
      )}
      {!single && (
        <div class="page-moves">
          <Move label="Next" off={atLast} onMove={moves.next} />
          <Move label="Last" off={atLast || pages === undefined} onMove={moves.last} secondary />
        </div>
      )}
    </nav>
  );
}
