// The statements of single books: creates and reads by id in batches, updates, deletes.
import type postgres from "postgres";
import type { Book, BookChanges, NewBook } from "../../rules/book.js";
import { lexemes } from "./search-index.js";

/** Writes the books in one statement; each one's id comes with its place in the list. */
export async function insertBooks(sql: postgres.Sql, batch: readonly NewBook[]): Promise<Book[]> {
  const ids = await sql<{ id: number }[]>`WITH input AS (
      SELECT nextval(pg_get_serial_sequence('books', 'id')) AS id, n, title, author, year,
        tw, aw
      FROM unnest(${batch.map((b) => b.title)}::text[], ${batch.map((b) => b.author)}::text[],
        ${batch.map((b) => b.year)}::integer[], ${batch.map((b) => lexemes(b.title))}::text[],
        ${batch.map((b) => lexemes(b.author))}::text[])
        WITH ORDINALITY AS t(title, author, year, tw, aw, n)
    ), added AS (
      INSERT INTO books (id, title, author, year, title_words, author_words)
      OVERRIDING SYSTEM VALUE
      SELECT id, title, author, year, array_to_tsvector(string_to_array(tw, ' ')),
        array_to_tsvector(string_to_array(aw, ' '))
      FROM input
    )
    SELECT id FROM input ORDER BY n`;
  return batch.map((book, i) => ({ id: ids[i]?.id as number, ...book }));
}

/** The books of these ids, in their order; undefined for an id no book has. */
export async function selectBooks(
  sql: postgres.Sql,
  ids: readonly number[],
): Promise<(Book | undefined)[]> {
  const found = await sql<Book[]>`SELECT id, title, author, year FROM books
    WHERE id = ANY(${ids as number[]}::bigint[])`;
  const byId = new Map(found.map((book) => [book.id, book]));
  return ids.map((id) => byId.get(id));
}

/** Applies the present fields and their search words; undefined when there is no such book. */
export async function updateBook(
  sql: postgres.Sql,
  id: number,
  changes: BookChanges,
): Promise<Book | undefined> {
  const [updated] = await sql<Book[]>`UPDATE books SET
      title = coalesce(${changes.title ?? null}::text, title),
      author = coalesce(${changes.author ?? null}::text, author),
      year = coalesce(${changes.year ?? null}::integer, year),
      title_words = coalesce(array_to_tsvector(string_to_array(
        ${changes.title === undefined ? null : lexemes(changes.title)}::text, ' ')), title_words),
      author_words = coalesce(array_to_tsvector(string_to_array(
        ${changes.author === undefined ? null : lexemes(changes.author)}::text, ' ')), author_words)
    WHERE id = ${id} RETURNING id, title, author, year`;
  return updated;
}

export async function deleteBook(sql: postgres.Sql, id: number): Promise<boolean> {
  return (await sql`DELETE FROM books WHERE id = ${id}`).count > 0;
}
