// Reads and checks a file of books off the page's thread: 100,000 rows take seconds of work
// that would otherwise freeze the page.
import {
  BookFileError,
  checkRow,
  parseBookFile,
  sameBookKey,
} from "@book-catalogue/rules/import-rows.js";

export type ReadRow = ReturnType<typeof checkRow> & { key?: string };
export type ReadAnswer = { rows: ReadRow[] } | { problem: string; notBooks: boolean };

const scope = globalThis as unknown as {
  onmessage: (event: MessageEvent<string>) => void;
  postMessage(answer: ReadAnswer): void;
};

scope.onmessage = (event) => {
  try {
    const rows = parseBookFile(event.data).map((fields): ReadRow => {
      const row = checkRow(fields);
      return row.book ? { ...row, key: sameBookKey(row.book) } : row;
    });
    scope.postMessage({ rows });
  } catch (error) {
    scope.postMessage({
      problem: (error as Error).message,
      notBooks: error instanceof BookFileError,
    });
  }
};
