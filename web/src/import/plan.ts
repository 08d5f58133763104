// What an import will do, from the preview and the years the librarian gave the rows that
// had none: the books to send in the file's order, and the counts the preview shows.
import { checkRow, duplicateFinder, sameBookKey } from "@book-catalogue/rules/import-rows.js";
import type { NewBook } from "book-catalogue";
import type { Preview, PreviewBook } from "./read-preview.js";

/** The most rows a table of the preview lists; a count says how many more. */
export const LISTED_ROWS = 100;

/** The years typed for rows without one, by the row's line; "" or none skips the row. */
export type GivenYears = Readonly<Record<number, string>>;

export interface Plan {
  /** The books to send, in the file's order. */
  books: NewBook[];
  /**
   * Books not in the catalogue yet, and those that are, or that an earlier row of the file
   * is (skipped unless kept).
   */
  fresh: number;
  duplicates: number;
  /** Rows without a year that were given one, and those left without (skipped). */
  given: number;
  withoutYear: number;
  /** Why a typed year is not one, by the row's line: the import waits until it is. */
  wrongYears: ReadonlyMap<number, string>;
}

export function planImport(preview: Preview, years: GivenYears, keepDuplicates: boolean): Plan {
  const rows: PreviewBook[] = [];
  const wrongYears = new Map<number, string>();
  let withoutYear = 0;
  for (const row of preview.noYear) {
    const typed = years[row.line] ?? "";
    const checked = checkRow({ ...row, year: typed });
    if (checked.book) {
      const key = sameBookKey(checked.book);
      rows.push({ line: row.line, book: checked.book, key, duplicate: false });
    } else {
      withoutYear += 1;
      if (typed.trim() !== "") wrongYears.set(row.line, checked.problems.join("; "));
    }
  }
  const given = rows.length;
  const all = given === 0 ? preview.books : inFileOrder(preview, rows);
  const duplicates = all.filter((row) => row.duplicate).length;
  return {
    books: all.filter((row) => keepDuplicates || !row.duplicate).map((row) => row.book),
    fresh: all.length - duplicates,
    duplicates,
    given,
    withoutYear,
    wrongYears,
  };
}

/** The preview's books with the rows given a year, in the file's order, duplicates marked anew. */
function inFileOrder(preview: Preview, given: PreviewBook[]): PreviewBook[] {
  const isDuplicate = duplicateFinder(preview.existing);
  return [...preview.books, ...given]
    .sort((a, b) => a.line - b.line)
    .map((row) => ({ ...row, duplicate: isDuplicate(row.key) }));
}
