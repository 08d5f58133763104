// Said at the top, where the eye is, when there is nothing to list: with what to do next.
import { AddAndImport } from "./add-and-import.js";

interface Props {
  /** The search that found nothing; without one, the catalogue itself is empty. */
  q: string | undefined;
  onClearSearch: () => void;
  onAdd: () => void;
  onImport: () => void;
}

export function EmptyNotice({ q, onClearSearch, onAdd, onImport }: Props) {
  if (q) {
    return (
      <div class="empty">
        <p>
          No book matches “<strong>{q}</strong>”: search matches the start of words in titles and
          authors.
        </p>
        <button type="button" onClick={onClearSearch}>
          Clear the search
        </button>
      </div>
    );
  }
  return (
    <div class="empty">
      <p>
        <strong>The catalogue is empty.</strong> Add the first book, or import a file: a CSV or JSON
        list of books, or a Goodreads library export.
      </p>
      <AddAndImport onAdd={onAdd} onImport={onImport} />
    </div>
  );
}
