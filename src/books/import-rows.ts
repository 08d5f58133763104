// A file's rows as books to import: plain reasons for the rows that are not books, and the
// rule that finds a row already in the catalogue. Free of Node, so any importer can use it.
import { AUTHOR_MAX, type NewBook, TITLE_MAX, YEAR_MAX, YEAR_MIN } from "./book.js";
import { foldedWords } from "./search.js";

/** A row as read from a file: the line it starts on, and its fields as the file had them. */
export interface RowFields {
  line: number;
  title?: unknown;
  author?: unknown;
  year?: unknown;
}

export type CheckedRow =
  | { line: number; book: NewBook; problems?: undefined }
  | { line: number; book?: undefined; problems: string[]; title?: string };

// What the service refuses in a text field besides its length (see textSchema): NUL, and
// UTF-16 that is not well formed.
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what this looks for.
const FORBIDDEN = /[\u0000\uD800-\uDFFF]/u;
const BLANK = /^\s*$/u;
const WHOLE_NUMBER = /^\s*-?\d+\s*$/;

function textProblem(name: string, value: unknown, max: number): string | undefined {
  if (value === undefined || value === null) return `the ${name} is missing`;
  if (typeof value !== "string") return `the ${name} must be text`;
  if (BLANK.test(value)) return `the ${name} is empty`;
  if ([...value].length > max) return `the ${name} is longer than ${max} characters`;
  if (FORBIDDEN.test(value)) return `the ${name} holds a NUL or a broken character`;
  return undefined;
}

/** A year as the file wrote it: a number, or text that is one (as CSV has it). */
function yearOf(value: unknown): number | string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") {
    if (BLANK.test(value)) return undefined;
    return WHOLE_NUMBER.test(value) ? Number(value) : value;
  }
  return typeof value === "number" ? value : String(value);
}

/** The row's book, or every reason it is not one, in words a librarian reads. */
export function checkRow(row: RowFields): CheckedRow {
  const problems: string[] = [];
  const titleProblem = textProblem("title", row.title, TITLE_MAX);
  if (titleProblem) problems.push(titleProblem);
  const authorProblem = textProblem("author", row.author, AUTHOR_MAX);
  if (authorProblem) problems.push(authorProblem);
  const year = yearOf(row.year);
  if (year === undefined) problems.push("the year is missing");
  else if (
    typeof year !== "number" ||
    !Number.isInteger(year) ||
    year < YEAR_MIN ||
    year > YEAR_MAX
  ) {
    problems.push(`the year must be a whole number from ${YEAR_MIN} to ${YEAR_MAX}`);
  }
  if (problems.length > 0) {
    const title = typeof row.title === "string" && !titleProblem ? row.title : undefined;
    return { line: row.line, problems, ...(title === undefined ? {} : { title }) };
  }
  return {
    line: row.line,
    book: { title: row.title as string, author: row.author as string, year: year as number },
  };
}

/**
 * Two books are the same book when their titles, authors and years are, compared as search
 * compares words: case, accents and punctuation aside ("Cien años de soledad" and "CIEN ANOS
 * DE SOLEDAD").
 */
export function sameBookKey(book: NewBook): string {
  return `${foldedWords(book.title).join(" ")}\n${foldedWords(book.author).join(" ")}\n${book.year}`;
}
