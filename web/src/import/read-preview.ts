// A chosen file read into the import's preview: its rows read and checked by a worker, each
// book compared with the catalogue's.
import { BookFileError, duplicateFinder, sameBookKey } from "@book-catalogue/rules/import-rows.js";
import type { BookCatalogueClient, NewBook } from "book-catalogue";
import { EXPORT_PAGE } from "../export/export-books.js";
import type { ReadAnswer, ReadRow } from "../read-file.worker.js";

export interface Preview {
  name: string;
  rows: number;
  /**
   * The books of the file in its order, each with its sameBookKey, marked when the catalogue
   * or an earlier row has it already.
   */
  books: PreviewBook[];
  /** Rows that lack only a year: given one in the preview, else skipped. */
  noYear: NoYearRow[];
  /** Rows that cannot be imported as they are, and why. */
  refused: { line: number; title?: string; reason: string }[];
  /** The catalogue's books as sameBookKey has them, to compare a row given a year with. */
  existing: Set<string>;
}

export interface PreviewBook {
  line: number;
  book: NewBook;
  key: string;
  duplicate: boolean;
}

export interface NoYearRow {
  line: number;
  title: string;
  author: string;
}

/** Throws BookFileError for a file that is not a list of books. */
export async function readPreview(client: BookCatalogueClient, file: File): Promise<Preview> {
  const rows = await readRows(await file.text());
  // The catalogue's books before the import: a row equal to one of them, or to an earlier row
  // of the file, is a duplicate.
  const existing = new Set<string>();
  for await (const book of client.books({ limit: EXPORT_PAGE })) existing.add(sameBookKey(book));
  const isDuplicate = duplicateFinder(existing);
  const preview: Preview = {
    name: file.name,
    rows: rows.length,
    books: [],
    noYear: [],
    refused: [],
    existing,
  };
  for (const row of rows) {
    if (row.needsYear) {
      preview.noYear.push({ line: row.line, ...row.needsYear });
    } else if (row.problems) {
      const reason = row.problems.join("; ");
      preview.refused.push({
        line: row.line,
        reason,
        ...(row.title ? { title: row.title } : {}),
      });
    } else {
      const key = row.key ?? sameBookKey(row.book);
      preview.books.push({ line: row.line, book: row.book, key, duplicate: isDuplicate(key) });
    }
  }
  return preview;
}

/** The file's rows, read and checked by a worker (see read-file.worker.ts). */
function readRows(text: string): Promise<ReadRow[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("../read-file.worker.ts", import.meta.url), {
      type: "module",
    });
    worker.onmessage = ({ data }: MessageEvent<ReadAnswer>) => {
      worker.terminate();
      if ("rows" in data) resolve(data.rows);
      else reject(data.notBooks ? new BookFileError(data.problem) : new Error(data.problem));
    };
    worker.onerror = (event) => {
      worker.terminate();
      reject(new Error(event.message));
    };
    worker.postMessage(text);
  });
}
