// Below the table: Previous, where the page is in the listing, and Next.
import type { ListingState } from "./use-listing.js";
import type { WalkState } from "./use-walk.js";

interface Props {
  walk: WalkState;
  listing: ListingState;
}

/** "Page 2: books 21 to 40.", or why the page shows no books. */
function pageStatus({ walk, listing }: Props): string {
  const { books } = listing;
  if (listing.loading) return "Loading…";
  if (books !== undefined && books.length > 0) {
    return `Page ${walk.page}: books ${walk.first} to ${walk.first + books.length - 1}.`;
  }
  if (listing.next !== undefined) return "None in this stretch of the catalogue: Next searches on.";
  if (walk.page > 1) return "No more books here: go back a page.";
  if (walk.search.trim()) return `No book matches “${walk.search.trim()}”.`;
  return "The catalogue is empty.";
}

export function Pager({ walk, listing }: Props) {
  const { loading, next } = listing;
  return (
    <nav class="pages" aria-label="Pages">
      <button type="button" disabled={loading || walk.page === 1} onClick={walk.previous}>
        Previous
      </button>
      <span id="page-status" aria-live="polite">
        {pageStatus({ walk, listing })}
      </span>
      <button
        type="button"
        disabled={loading || next === undefined}
        onClick={() => {
          if (next !== undefined) walk.forward(next, listing.books?.length ?? 0);
        }}
      >
        Next
      </button>
    </nav>
  );
}
