// The statements of single books: creates, reads by id, updates and deletes in batches.
import sql, { raw } from "sql-template-tag";
import { type Book, type BookChanges, MAX_BOOK_ID, type NewBook } from "../../rules/book.js";
import { sortKey } from "../../rules/search.js";
import { type ExpectedVersions, versionMatches } from "../book-version.js";
import { BookChangedError, BookIdsExhaustedError } from "../store.js";
import type { Queryable } from "./pool.js";
import { lexemes } from "./search-index.js";

/**
 * What each book derives, as arrays for unnest (`tw, aw, tk, ak`): its search words and sort
 * keys, folded in code the same way on both stores.
 */
export const derivedArrays = (books: readonly Pick<NewBook, "title" | "author">[]) =>
  sql`${books.map((b) => lexemes(b.title))}::text[], ${books.map((b) => lexemes(b.author))}::text[],
    ${books.map((b) => sortKey(b.title))}::text[], ${books.map((b) => sortKey(b.author))}::text[]`;
/** The columns they are written to, and the values written from unnest's `tw, aw, tk, ak`. */
export const DERIVED_COLUMNS = raw("title_words, author_words, title_key, author_key");
export const DERIVED_VALUES = raw(`array_to_tsvector(string_to_array(tw, ' ')),
  array_to_tsvector(string_to_array(aw, ' ')), tk, ak`);

/**
 * Writes the books in one statement; each one's id comes with its place in the list. A book
 * whose id would pass MAX_BOOK_ID is left out, the others written: it is BookIdsExhaustedError.
 */
export async function insertBooks(
  db: Queryable,
  batch: readonly NewBook[],
): Promise<(Book | BookIdsExhaustedError)[]> {
  const ids = await db.query<{ id: number }>(sql`WITH input AS (
      SELECT nextval(pg_get_serial_sequence('books', 'id')) AS id, n, title, author, year,
        tw, aw, tk, ak
      FROM unnest(${batch.map((b) => b.title)}::text[], ${batch.map((b) => b.author)}::text[],
        ${batch.map((b) => b.year)}::integer[], ${derivedArrays(batch)})
        WITH ORDINALITY AS t(title, author, year, tw, aw, tk, ak, n)
    ), added AS (
      INSERT INTO books (id, title, author, year, ${DERIVED_COLUMNS})
      OVERRIDING SYSTEM VALUE
      SELECT id, title, author, year, ${DERIVED_VALUES} FROM input WHERE id <= ${MAX_BOOK_ID}
    )
    SELECT id FROM input ORDER BY n`);
  return batch.map((book, i) => {
    const id = ids[i]?.id as number;
    return id > MAX_BOOK_ID ? new BookIdsExhaustedError() : { id, ...book };
  });
}

/** The books of `ids`, undefined for an id no book has. */
export async function selectBooks(
  db: Queryable,
  ids: readonly number[],
): Promise<(Book | undefined)[]> {
  const rows = await db.query<Book>(
    sql`SELECT id, title, author, year FROM books WHERE id = ANY(${ids}::bigint[])`,
  );
  const byId = new Map(rows.map((book) => [book.id, book]));
  return ids.map((id) => byId.get(id));
}

export interface Update {
  id: number;
  changes: BookChanges;
}

/**
 * Applies each update's present fields and their search words; undefined for an id no book
 * has. One statement a round: the first round holds each book's first update, the next each
 * book's second, and so on, so that an update of a book asked more than once applies to what
 * the one before left. Each statement locks its books in the order of their ids, so two under
 * way at once on the same books wait for each other in turn, never each for the other (a
 * deadlock, which PostgreSQL ends after a second).
 */
export async function updateBooks(
  db: Queryable,
  updates: readonly Update[],
): Promise<(Book | undefined)[]> {
  const rounds: Update[][] = [];
  const asked = new Map<number, number>();
  const roundOf = updates.map((update) => {
    const round = asked.get(update.id) ?? 0;
    asked.set(update.id, round + 1);
    if (round === rounds.length) rounds.push([]);
    rounds[round]?.push(update);
    return round;
  });
  const updated: Map<number, Book>[] = [];
  for (const round of rounds) {
    updated.push(
      await updateInIdOrder(
        db,
        round.toSorted((a, b) => a.id - b.id),
      ),
    );
  }
  return updates.map((u, i) => updated[roundOf[i] as number]?.get(u.id));
}

async function updateInIdOrder(db: Queryable, updates: readonly Update[]) {
  const field = <T>(pick: (changes: BookChanges) => T | undefined) =>
    updates.map((u) => pick(u.changes) ?? null);
  const derived = (fold: (text: string) => string) =>
    sql`${field((c) => c.title && fold(c.title))}::text[], ${field((c) => c.author && fold(c.author))}::text[]`;
  const updated = await db.query<Book>(sql`UPDATE books SET
      title = coalesce(u.title, books.title),
      author = coalesce(u.author, books.author),
      year = coalesce(u.year, books.year),
      title_words = coalesce(array_to_tsvector(string_to_array(u.tw, ' ')), books.title_words),
      author_words = coalesce(array_to_tsvector(string_to_array(u.aw, ' ')), books.author_words),
      title_key = coalesce(u.tk, books.title_key),
      author_key = coalesce(u.ak, books.author_key)
    FROM unnest(${updates.map((u) => u.id)}::bigint[], ${field((c) => c.title)}::text[],
      ${field((c) => c.author)}::text[], ${field((c) => c.year)}::integer[],
      ${derived(lexemes)}, ${derived(sortKey)}) AS u(id, title, author, year, tw, aw, tk, ak)
    WHERE books.id = u.id
    RETURNING books.id, books.title, books.author, books.year`);
  return new Map(updated.map((book) => [book.id, book]));
}

/**
 * Deletes the books of these ids in one statement; true for each that was deleted. An id
 * asked for twice was deleted by the first ask only.
 */
export async function deleteBooks(db: Queryable, ids: readonly number[]): Promise<boolean[]> {
  const deleted = await db.query<{ id: number }>(
    sql`DELETE FROM books WHERE id = ANY(${ids}::bigint[]) RETURNING id`,
  );
  const gone = new Set(deleted.map((row) => row.id));
  return ids.map((id) => gone.delete(id));
}

/**
 * The book of this id, locked until the transaction ends, undefined when there is none;
 * BookChangedError when its version is not one `expected`.
 */
export async function lockExpected(
  tx: Queryable,
  id: number,
  expected: ExpectedVersions,
): Promise<Book | undefined> {
  const [book] = await tx.query<Book>(
    sql`SELECT id, title, author, year FROM books WHERE id = ${id} FOR UPDATE`,
  );
  if (book !== undefined && !versionMatches(book, expected)) throw new BookChangedError();
  return book;
}
