// The book routes' JSON schemas (validation, serialisation and the API description alike),
// built from the book rules, and how a path names a book.
import {
  AUTHOR_MAX,
  type BookChanges,
  MAX_BOOK_ID,
  type NewBook,
  TEXT_PATTERN,
  TITLE_MAX,
  YEAR_MAX,
  YEAR_MIN,
} from "../rules/book.js";

/** A string of 1 to `maxLength` characters, not only whitespace, well-formed, without NUL. */
export const textSchema = (maxLength: number) =>
  ({ type: "string", minLength: 1, maxLength, pattern: TEXT_PATTERN }) as const;

const bookFields = {
  title: textSchema(TITLE_MAX),
  author: textSchema(AUTHOR_MAX),
  year: { type: "integer", minimum: YEAR_MIN, maximum: YEAR_MAX },
} as const;

/** POST /book: all three fields. Unknown fields, `id` among them, are ignored. */
export const newBookSchema = {
  type: "object",
  required: ["title", "author", "year"],
  properties: bookFields,
} as const;

/** PUT /book/{id}: any subset of the fields; `{}` changes nothing. */
export const bookChangesSchema = {
  type: "object",
  properties: bookFields,
} as const;

export const bookSchema = {
  type: "object",
  required: ["id", "title", "author", "year"],
  properties: { id: { type: "integer" }, ...bookFields },
} as const;

/** The largest id a path may name: the largest a book can have. */
export const MAX_ID = MAX_BOOK_ID;
const CANONICAL_ID = /^[1-9][0-9]{0,15}$/;

/** A path id must be a canonical positive integer (no sign, zeros or spaces); else undefined. */
export function parseBookId(raw: string): number | undefined {
  if (!CANONICAL_ID.test(raw)) return undefined;
  const id = Number(raw);
  return id <= MAX_ID ? id : undefined;
}

/** Only the book's own fields, whatever else the body carried. */
export function pickNewBook(body: NewBook): NewBook {
  return { title: body.title, author: body.author, year: body.year };
}

export function pickChanges(body: BookChanges): BookChanges {
  const changes: BookChanges = {};
  if (body.title !== undefined) changes.title = body.title;
  if (body.author !== undefined) changes.author = body.author;
  if (body.year !== undefined) changes.year = body.year;
  return changes;
}
