// A file's rows as books to import: reading a JSON or CSV file, plain reasons for the rows
// that cannot be imported, and the rule that finds a row already in the catalogue or the file. Free of
// Node: the command line and the page import alike.
import { parse as parseCsv } from "csv-parse/browser/esm/sync";
import { type BookField, checkBook, type FieldProblem, type NewBook } from "./book.js";
import { restoreCell } from "./book-csv.js";
import { foldedWords } from "./search.js";

/** A row as read from a file: the line it starts on, and its fields as the file had them. */
export interface RowFields {
  line: number;
  title?: unknown;
  author?: unknown;
  year?: unknown;
}

export type CheckedRow =
  | { line: number; book: NewBook; problems?: undefined; needsYear?: undefined }
  | {
      line: number;
      book?: undefined;
      problems: string[];
      title?: string;
      /** When the year is all the row lacks: its title and author, to be given a year. */
      needsYear?: { title: string; author: string };
    };

const BLANK = /^\s*$/u;
const WHOLE_NUMBER = /^\s*-?\d+\s*$/;

/** A year as the file wrote it: a number, or text that is one (as CSV has it). */
function yearOf(value: unknown): number | string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") {
    if (BLANK.test(value)) return undefined;
    return WHOLE_NUMBER.test(value) ? Number(value) : value;
  }
  return typeof value === "number" ? value : String(value);
}

/** A field's problem in words a librarian reads, after the field's name. */
function describe(field: BookField, problem: FieldProblem): string {
  switch (problem.kind) {
    case "missing":
      return `the ${field} is missing`;
    case "not-text":
      return `the ${field} must be text`;
    case "empty":
      return `the ${field} is empty`;
    case "too-long":
      return `the ${field} is longer than ${problem.max} characters`;
    case "forbidden-character":
      return `the ${field} holds a NUL or a broken character`;
    case "not-a-year":
      return `the ${field} must be a whole number from ${problem.min} to ${problem.max}`;
  }
}

/** The row's book, or every reason it is not one, in words a librarian reads. */
export function checkRow(row: RowFields): CheckedRow {
  const { problems, book } = checkBook({ ...row, year: yearOf(row.year) });
  if (book !== undefined) return { line: row.line, book };
  const reasons = (["title", "author", "year"] as const).flatMap((field) => {
    const problem = problems[field];
    return problem === undefined ? [] : [describe(field, problem)];
  });
  const title = problems.title === undefined ? (row.title as string) : undefined;
  const onlyYearMissing =
    problems.year?.kind === "missing" && problems.title === undefined && !problems.author;
  return {
    line: row.line,
    problems: reasons,
    ...(title === undefined ? {} : { title }),
    ...(onlyYearMissing
      ? { needsYear: { title: row.title as string, author: row.author as string } }
      : {}),
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

/**
 * Whether each book, asked in the file's order by its sameBookKey, is a duplicate: the
 * catalogue holds it (`existing`), or an earlier row of the file is the same book.
 */
export function duplicateFinder(existing: ReadonlySet<string>): (key: string) => boolean {
  const earlier = new Set<string>();
  return (key) => {
    if (existing.has(key) || earlier.has(key)) return true;
    earlier.add(key);
    return false;
  };
}

/** Each field's column names, in order of preference (Goodreads' last). */
const COLUMNS = {
  title: ["title", "Title"],
  author: ["author", "Author"],
  year: ["year", "Year", "Original Publication Year", "Year Published"],
} as const;

/**
 * The first of the columns with a value, as the file has it; "" when they are all blank. A
 * cell's spaces are its text's, as in RFC 4180 (and as the API keeps a title's): trimmed, a
 * title exported with a space at either end would come back another.
 */
const firstOf = (record: Record<string, string>, names: readonly string[]) =>
  names.map((name) => record[name]).find((value) => value !== undefined && value.trim() !== "") ??
  (names.some((name) => record[name] !== undefined) ? "" : undefined);

/**
 * The line each element of a JSON array starts on. `text` is valid JSON (it was parsed), so
 * strings and nesting are all there is to follow.
 */
function elementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expecting = false;
  for (const ch of text) {
    if (ch === "\n") line += 1;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (depth === 1 && expecting && !/[\s,\]]/.test(ch)) {
      lines.push(line);
      expecting = false;
    }
    if (ch === '"') inString = true;
    else if (ch === "[" || ch === "{") {
      depth += 1;
      if (depth === 1) expecting = true;
    } else if (ch === "]" || ch === "}") depth -= 1;
    else if (ch === "," && depth === 1) expecting = true;
  }
  return lines;
}

/** A file that holds no list of books: its message follows the file's name. */
export class BookFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BookFileError";
  }
}

const NOT_BOOKS =
  "is not a list of books: a JSON array of {title, author, year}, or a CSV file with a header row";

/**
 * A file's rows, each with the line of the file it starts on: a JSON array, or CSV whose
 * header names the columns. Throws BookFileError when the file is neither, or lacks a column.
 */
export function parseBookFile(contents: string): RowFields[] {
  const text = contents.replace(/^\uFEFF/, "");
  if (/^\s*[[{]/.test(text)) {
    let items: unknown;
    try {
      items = JSON.parse(text);
    } catch (error) {
      throw new BookFileError(`is not valid JSON: ${(error as Error).message}`);
    }
    if (!Array.isArray(items)) throw new BookFileError(NOT_BOOKS);
    const lines = elementLines(text);
    return items.map((item, i) => {
      const fields =
        item !== null && typeof item === "object" ? (item as Record<string, unknown>) : {};
      return {
        line: lines[i] ?? i + 1,
        title: fields.title,
        author: fields.author,
        year: fields.year,
      };
    });
  }
  return csvRows(text);
}

/**
 * The line each record starts on, from the offsets csv-parse gives: the UTF-8 byte just after
 * each record (its own line count is where a record ends, and counts a CRLF inside quotes
 * twice). A line break is CRLF, LF or CR alone; empty lines before a record are skipped, as
 * the parser skips them.
 */
function startLines(text: string) {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  let line = 1;
  const step = () => {
    const byte = bytes[at];
    if (byte === 0x0a || (byte === 0x0d && bytes[at + 1] !== 0x0a)) line += 1;
    at += 1;
  };
  return (previousEnd: number) => {
    while (at < previousEnd) step();
    while (bytes[at] === 0x0a || bytes[at] === 0x0d) step();
    return line;
  };
}

/**
 * The most characters a CSV record may hold: far above a book's row, even with the many
 * columns (a review among them) of a Goodreads export. The parser stops as soon as a record
 * passes it, so a file of one endless line costs no more than reading it once.
 */
export const MAX_CSV_RECORD_CHARS = 1 << 20;

/**
 * The first line longer than `max` characters, or undefined (CRLF, LF or CR alone ends a
 * line): found in one pass, before the parser, whose cost grows with what it is given.
 */
function lineLongerThan(text: string, max: number): number | undefined {
  let [line, start, lf, cr] = [1, 0, -1, -1];
  for (;;) {
    if (lf < start) lf = text.indexOf("\n", start);
    if (cr < start) cr = text.indexOf("\r", start);
    const end = Math.min(lf === -1 ? text.length : lf, cr === -1 ? text.length : cr);
    if (end - start > max) return line;
    if (end === text.length) return undefined;
    start = end + (text.startsWith("\r\n", end) ? 2 : 1);
    line += 1;
  }
}

/** The rows of a CSV file under its header, with the cells export neutralised restored. */
function csvRows(text: string): RowFields[] {
  const tooLong = lineLongerThan(text, MAX_CSV_RECORD_CHARS);
  if (tooLong !== undefined) {
    throw new BookFileError(
      `has a line (${tooLong}) longer than ${MAX_CSV_RECORD_CHARS} characters, more than a book's row`,
    );
  }
  let records: { record: string[]; info: { bytes: number } }[];
  try {
    records = parseCsv(text, {
      info: true,
      skip_empty_lines: true,
      relax_column_count: true,
      // Goodreads writes ISBNs as ="0441013593", which strict CSV would refuse.
      relax_quotes: true,
      max_record_size: MAX_CSV_RECORD_CHARS,
    }) as unknown as typeof records;
  } catch (error) {
    const { code, lines } = error as { code?: string; lines?: number };
    if (code === "CSV_MAX_RECORD_SIZE") {
      throw new BookFileError(
        `has a row (line ${lines}) longer than ${MAX_CSV_RECORD_CHARS} characters, more than a book's row`,
      );
    }
    throw new BookFileError(`${NOT_BOOKS} (${(error as Error).message})`);
  }
  const header = records[0]?.record;
  if (header === undefined) throw new BookFileError(NOT_BOOKS);
  const missing = Object.entries(COLUMNS)
    .filter(([, names]) => !names.some((name) => header.includes(name)))
    .map(([field, names]) => `${field} (${names.map((n) => `"${n}"`).join(" or ")})`);
  if (missing.length > 0) {
    throw new BookFileError(
      `has no column for the ${missing.join(", nor for the ")}; its header: ${header.join(",")}`,
    );
  }
  const lineAfter = startLines(text);
  return records.slice(1).map(({ record: cells }, i) => {
    const record: Record<string, string> = {};
    header.forEach((name, column) => {
      const cell = cells[column];
      if (cell !== undefined) record[name] = cell;
    });
    const text = (names: readonly string[]) => {
      const value = firstOf(record, names);
      return value === undefined ? undefined : restoreCell(value);
    };
    return {
      line: lineAfter((records[i] as (typeof records)[number]).info.bytes),
      title: text(COLUMNS.title),
      author: text(COLUMNS.author),
      year: firstOf(record, COLUMNS.year),
    };
  });
}
