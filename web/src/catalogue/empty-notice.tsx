// Said at the top, where the eye is, when there is nothing to list: with what to do next.
import { howWordsMatch, type WordMatch } from "@book-catalogue/rules/search.js";
import { AddAndImport } from "./add-and-import.js";

/** How search matched the words of a search that found nothing, all of one kind. */
const ALL_WORDS: Record<WordMatch, string> = {
  start: "search matches the start of words in titles and authors.",
  inside: "search matches these characters anywhere inside titles and authors.",
  whole: "search matches a single letter or digit as a whole word only, in titles and authors.",
};
/** How search matched some of the words, in a search of words of several kinds. */
const SOME_WORDS: Record<WordMatch, string> = {
  start: "at the start of words",
  inside: "anywhere inside",
  whole: "as a whole word",
};

/**
 * What the search looked for, as the service reads it: the start of words, anywhere inside
 * for a script written without spaces (Han, kana, Hangul, Thai), a single letter as a word.
 */
export function noMatchHint(q: string): string {
  const kinds = new Map<WordMatch, string[]>();
  for (const { word, match } of howWordsMatch(q))
    kinds.set(match, [...(kinds.get(match) ?? []), word]);
  const [only] = kinds.keys();
  if (kinds.size <= 1) return ALL_WORDS[only ?? "start"];
  const parts = [...kinds].map(([match, words]) => `“${words.join(" ")}” ${SOME_WORDS[match]}`);
  return `search matches ${parts.join(", ")}, in titles and authors.`;
}

interface Props {
  /** The search that found nothing; without one, the catalogue itself is empty. */
  q: string | undefined;
  /** Whether the role may add books: else the notice only says the catalogue is empty. */
  writable: boolean;
  onClearSearch: () => void;
  onAdd: () => void;
  onImport: () => void;
}

export function EmptyNotice({ q, writable, onClearSearch, onAdd, onImport }: Props) {
  if (q) {
    return (
      <div class="empty">
        <p>
          No book matches “<strong>{q}</strong>”: {noMatchHint(q)}
        </p>
        <button type="button" onClick={onClearSearch}>
          Clear the search
        </button>
      </div>
    );
  }
  if (!writable) {
    return (
      <div class="empty">
        <p>
          <strong>The catalogue is empty.</strong> A librarian can add books to it.
        </p>
      </div>
    );
  }
  return (
    <div class="empty">
      <p>
        <strong>The catalogue is empty.</strong> Add the first book, or import a file: a CSV or JSON
        list of books, or a Goodreads library export.
      </p>
      <AddAndImport writable onAdd={onAdd} onImport={onImport} />
    </div>
  );
}
