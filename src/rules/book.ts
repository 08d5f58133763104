// What a book is, for the server, the command line and the page alike: its fields, their
// limits, and one check of a candidate book. Free of Node. The server's JSON schemas
// (books/schemas.ts) are built from the same limits and pattern.

export interface Book {
  id: number;
  title: string;
  author: string;
  year: number;
}

export type NewBook = Omit<Book, "id">;
export type BookChanges = Partial<NewBook>;
export type BookField = keyof NewBook;

export const TITLE_MAX = 500;
export const AUTHOR_MAX = 300;
export const YEAR_MIN = -9999;
export const YEAR_MAX = 9999;
/**
 * The largest id a book can have: ids travel as JSON numbers, exact up to 2^53 − 1. Both
 * stores refuse to give a larger one, and a restore to bring one in.
 */
export const MAX_BOOK_ID = Number.MAX_SAFE_INTEGER;

/**
 * A text field: at least one character that is not a space (Unicode's: JavaScript's `\s` and
 * U+0085, next line, which it leaves out), and no NUL nor UTF-16 that is not well formed.
 * Compiled with the `u` flag (as Ajv does), a lone surrogate is a code point of its own, so
 * the class refuses it.
 */
export const TEXT_PATTERN = "^(?![\\s\\u0085]*$)[^\\u0000\\uD800-\\uDFFF]*$";
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what this looks for.
const FORBIDDEN = /[\u0000\uD800-\uDFFF]/u;
const BLANK = /^[\s\u0085]*$/u;

/** Why a field's value is not what a book holds; each caller words it for its reader. */
export type FieldProblem =
  | { kind: "missing" }
  | { kind: "not-text" }
  | { kind: "empty" }
  | { kind: "too-long"; max: number; length: number }
  | { kind: "forbidden-character" }
  | { kind: "not-a-year"; min: number; max: number };

export const TEXT_LIMITS = { title: TITLE_MAX, author: AUTHOR_MAX } as const;

/** A title's or author's problem, or undefined; lengths count characters (code points). */
export function checkText(value: unknown, max: number): FieldProblem | undefined {
  if (value === undefined || value === null) return { kind: "missing" };
  if (typeof value !== "string") return { kind: "not-text" };
  if (BLANK.test(value)) return { kind: "empty" };
  const length = [...value].length;
  if (length > max) return { kind: "too-long", max, length };
  if (FORBIDDEN.test(value)) return { kind: "forbidden-character" };
  return undefined;
}

/** A year's problem, or undefined: a whole number from YEAR_MIN to YEAR_MAX. */
export function checkYear(value: unknown): FieldProblem | undefined {
  if (value === undefined || value === null) return { kind: "missing" };
  const year = typeof value === "number" ? value : Number.NaN;
  if (!Number.isInteger(year) || year < YEAR_MIN || year > YEAR_MAX) {
    return { kind: "not-a-year", min: YEAR_MIN, max: YEAR_MAX };
  }
  return undefined;
}

/** Each field's problem, and the book when there are none: what POST /book accepts. */
export function checkBook(fields: Partial<Record<BookField, unknown>>): {
  problems: Partial<Record<BookField, FieldProblem>>;
  book?: NewBook;
} {
  const problems: Partial<Record<BookField, FieldProblem>> = {};
  const title = checkText(fields.title, TEXT_LIMITS.title);
  if (title) problems.title = title;
  const author = checkText(fields.author, TEXT_LIMITS.author);
  if (author) problems.author = author;
  const year = checkYear(fields.year);
  if (year) problems.year = year;
  if (title || author || year) return { problems };
  const book = { title: fields.title, author: fields.author, year: fields.year } as NewBook;
  return { problems, book };
}
