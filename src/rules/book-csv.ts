// A book as a line of exported CSV, the same from the command line and the page. Free of Node.
import type { Book } from "./book.js";

/** The UTF-8 byte-order mark, without which Excel reads a CSV file as the system's code page. */
export const CSV_BOM = "\uFEFF";

export const CSV_HEADER = "id,title,author,year\n";

const quoted = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/** One book as a line under CSV_HEADER. */
export function csvLine(book: Book): string {
  return `${book.id},${quoted(book.title)},${quoted(book.author)},${book.year}\n`;
}
