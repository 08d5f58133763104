// A book as a line of exported CSV, the same from the command line and the page, and the rule
// that keeps a spreadsheet from running a cell as a formula (OWASP "CSV injection"), with its
// exact undoing on import. Free of Node.
import type { Book } from "./book.js";

/** The UTF-8 byte-order mark, without which Excel reads a CSV file as the system's code page. */
export const CSV_BOM = "\uFEFF";

export const CSV_HEADER = "id,title,author,year\n";

/**
 * A cell a spreadsheet would run: one starting with =, +, -, @, tab or carriage return, after
 * any single quotes. The quotes count so that the prefix can always be told apart from a
 * title's own leading quote: "'=x" is exported as "''=x" and imported back as "'=x".
 */
const RUNS_AS_FORMULA = /^'*[=+\-@\t\r]/;
const NEUTRALISED = /^'+[=+\-@\t\r]/;

/** A text cell as a spreadsheet opens it safely: a leading ' when it would run as a formula. */
export function neutraliseCell(text: string): string {
  return RUNS_AS_FORMULA.test(text) ? `'${text}` : text;
}

/** neutraliseCell undone: a cell that starts with ' then a formula's character loses one '. */
export function restoreCell(text: string): string {
  return NEUTRALISED.test(text) ? text.slice(1) : text;
}

const quoted = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/**
 * One book as a line under CSV_HEADER. Title and author are neutralised; id and year are whole
 * numbers, which a spreadsheet reads as numbers (a year of -500 stays -500).
 */
export function csvLine(book: Book): string {
  return `${book.id},${quoted(neutraliseCell(book.title))},${quoted(neutraliseCell(book.author))},${book.year}\n`;
}
