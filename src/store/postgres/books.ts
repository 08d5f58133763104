// The statements of single books: creates, reads by id, updates and deletes in batches, each
// write with its change log entries in the same statement.
import sql, { raw } from "sql-template-tag";
import { type Book, type BookChanges, MAX_BOOK_ID, type NewBook } from "../../rules/book.js";
import { sortKey } from "../../rules/search.js";
import { type ExpectedVersions, versionMatches } from "../book-version.js";
import { BookExistsError, type ChangedBy } from "../changes.js";
import { BookChangedError, BookIdsExhaustedError, type StoredBook } from "../store.js";
import type { Bounds, Queryable } from "./pool.js";
import { lexemes } from "./search-index.js";

/** Every statement that writes books takes their lock first (statement.ts). */
const WRITES: Bounds = { lockBookWrites: true };

/**
 * Appends entries to the change log: followed by a SELECT of its columns' values, `previous`
 * (the book's entry before, its last_change) first. LOG_AT is the same with the entries' seq
 * before it, taken in the statement (NEXT_SEQ) so that the book's last_change is set to it
 * in the same statement (migration 13).
 */
const LOG = raw("INSERT INTO changes (previous, op, book_id, after, before, at, who, account_id)");
const LOG_AT = raw(`INSERT INTO changes (seq, previous, op, book_id, after, before, at, who,
  account_id) OVERRIDING SYSTEM VALUE`);
/**
 * The next seq of the log, taken in the order the statement's rows come. The sequence's name
 * is looked up once a statement (an InitPlan), not once a row (a catalogue scan each).
 */
const NEXT_SEQ = raw("nextval((SELECT pg_get_serial_sequence('changes', 'seq'))::regclass)");
/** The book `row` names as an entry keeps it (bookJson's keys, in its order). */
const jsonOf = (row: string) =>
  raw(`json_build_object('id', ${row}.id, 'title', ${row}.title, 'author', ${row}.author,
    'year', ${row}.year)::text`);
/** Who made each write, as arrays for unnest (`who, account`); null when unknown. */
const byArrays = (items: readonly { by?: ChangedBy | undefined }[]) =>
  sql`${items.map((i) => i.by?.name ?? null)}::text[],
    ${items.map((i) => i.by?.account ?? null)}::bigint[]`;

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

/** A create, by whom. */
export interface Create {
  book: NewBook;
  by?: ChangedBy | undefined;
}

/**
 * Writes the books in one statement, each with its entry made `at`; each one's id comes with
 * its place in the list. A book whose id would pass MAX_BOOK_ID is left out, the others
 * written: it is BookIdsExhaustedError.
 */
export async function insertBooks(
  db: Queryable,
  creates: readonly Create[],
  at = Date.now(),
): Promise<(StoredBook | BookIdsExhaustedError)[]> {
  const batch = creates.map((c) => c.book);
  const ids = await db.query<{ id: number }>(
    sql`WITH ided AS (
      SELECT nextval(pg_get_serial_sequence('books', 'id')) AS id, n, title, author, year,
        tw, aw, tk, ak, who, account
      FROM unnest(${batch.map((b) => b.title)}::text[], ${batch.map((b) => b.author)}::text[],
        ${batch.map((b) => b.year)}::integer[], ${derivedArrays(batch)}, ${byArrays(creates)})
        WITH ORDINALITY AS t(title, author, year, tw, aw, tk, ak, who, account, n)
    ), input AS (
      -- Each entry's seq, in the books' order, for the book written only (a volatile
      -- function keeps ided a query of its own, evaluated first).
      SELECT ided.*, CASE WHEN id <= ${MAX_BOOK_ID} THEN ${NEXT_SEQ} END AS seq FROM ided
    ), added AS (
      INSERT INTO books (id, title, author, year, ${DERIVED_COLUMNS}, last_change, changed_at)
      OVERRIDING SYSTEM VALUE
      SELECT id, title, author, year, ${DERIVED_VALUES}, seq, ${at}::bigint
      FROM input WHERE id <= ${MAX_BOOK_ID}
    ), logged AS (
      ${LOG_AT} SELECT seq, NULL::bigint, 'create', id, ${jsonOf("input")}, NULL, ${at}::bigint,
        who, account
      FROM input WHERE id <= ${MAX_BOOK_ID} ORDER BY n
    )
    SELECT id FROM input ORDER BY n`,
    WRITES,
  );
  return batch.map((book, i) => {
    const id = ids[i]?.id as number;
    return id > MAX_BOOK_ID ? new BookIdsExhaustedError() : { id, ...book, changedAt: at };
  });
}

/** The books of `ids`, undefined for an id no book has. */
export async function selectBooks(
  db: Queryable,
  ids: readonly number[],
): Promise<(StoredBook | undefined)[]> {
  const rows = await db.query<StoredBook>(
    sql`SELECT id, title, author, year, changed_at AS "changedAt" FROM books
      WHERE id = ANY(${ids}::bigint[])`,
  );
  const byId = new Map(rows.map((book) => [book.id, book]));
  return ids.map((id) => byId.get(id));
}

export interface Update {
  id: number;
  changes: BookChanges;
  by?: ChangedBy | undefined;
}

/**
 * Applies each update's present fields and their search words, with an entry made `at` for
 * each book changed; undefined for an id no book has. An update that changes no field (none
 * present, or each the value it has) writes nothing and logs nothing. One statement a round:
 * the first round holds each book's first update, the next each book's second, and so on, so
 * that an update of a book asked more than once applies to what the one before left. Each
 * statement locks its books in the order of their ids, so two under way at once on the same
 * books wait for each other in turn, never each for the other (a deadlock, which PostgreSQL
 * ends after a second).
 */
export async function updateBooks(
  db: Queryable,
  updates: readonly Update[],
  at = Date.now(),
): Promise<(StoredBook | undefined)[]> {
  const rounds: Update[][] = [];
  const asked = new Map<number, number>();
  const roundOf = updates.map((update) => {
    const round = asked.get(update.id) ?? 0;
    asked.set(update.id, round + 1);
    if (round === rounds.length) rounds.push([]);
    rounds[round]?.push(update);
    return round;
  });
  const updated: Map<number, StoredBook>[] = [];
  for (const round of rounds) {
    updated.push(
      await updateInIdOrder(
        db,
        round.toSorted((a, b) => a.id - b.id),
        at,
      ),
    );
  }
  return updates.map((u, i) => updated[roundOf[i] as number]?.get(u.id));
}

/**
 * One round of updateBooks. The entries' `before` is the books as the statement's snapshot has
 * them: taken after the lock of book writes, that is what the update changes. An update of no
 * field is answered the book as it is, unwritten.
 */
async function updateInIdOrder(db: Queryable, updates: readonly Update[], at: number) {
  const field = <T>(pick: (changes: BookChanges) => T | undefined) =>
    updates.map((u) => pick(u.changes) ?? null);
  const derived = (fold: (text: string) => string) =>
    sql`${field((c) => c.title && fold(c.title))}::text[], ${field((c) => c.author && fold(c.author))}::text[]`;
  const updated = await db.query<StoredBook>(
    sql`WITH u AS (
      -- Each book as the statement's snapshot has it (the lateral join reads them in the
      -- order of the ids), and the seq of its entry for the books this changes only (a field
      -- absent is NULL, and NULL <> x is not true): the book's last_change is set to it in
      -- the update of its fields.
      SELECT t.*, b.found, b.old_title, b.old_author, b.old_year, b.last_change, b.changed_at,
        CASE WHEN b.found AND (t.title <> b.old_title OR t.author <> b.old_author
            OR t.year <> b.old_year)
          THEN ${NEXT_SEQ} END AS seq
      FROM unnest(${updates.map((u) => u.id)}::bigint[], ${field((c) => c.title)}::text[],
        ${field((c) => c.author)}::text[], ${field((c) => c.year)}::integer[],
        ${derived(lexemes)}, ${derived(sortKey)}, ${byArrays(updates)})
        AS t(id, title, author, year, tw, aw, tk, ak, who, account)
      LEFT JOIN LATERAL (
        SELECT true AS found, title AS old_title, author AS old_author, year AS old_year,
          last_change, changed_at
        FROM books WHERE books.id = t.id
      ) AS b ON true
    ), old AS (
      SELECT id, old_title AS title, old_author AS author, old_year AS year, last_change,
        changed_at, seq
      FROM u WHERE found
    ), updated AS (
      UPDATE books SET
        title = coalesce(u.title, books.title),
        author = coalesce(u.author, books.author),
        year = coalesce(u.year, books.year),
        title_words = coalesce(array_to_tsvector(string_to_array(u.tw, ' ')), books.title_words),
        author_words = coalesce(array_to_tsvector(string_to_array(u.aw, ' ')), books.author_words),
        title_key = coalesce(u.tk, books.title_key),
        author_key = coalesce(u.ak, books.author_key),
        last_change = u.seq,
        changed_at = ${at}::bigint
      FROM u
      WHERE books.id = u.id AND u.seq IS NOT NULL
      RETURNING books.id, books.title, books.author, books.year, books.changed_at, u.who,
        u.account, u.seq
    ), logged AS (
      ${LOG_AT} SELECT updated.seq, old.last_change, 'update', updated.id, ${jsonOf("updated")},
        ${jsonOf("old")}, ${at}::bigint, who, account
      FROM updated JOIN old ON old.id = updated.id ORDER BY updated.id
    )
    SELECT id, title, author, year, changed_at AS "changedAt" FROM updated
    UNION ALL
    SELECT id, title, author, year, changed_at FROM old WHERE seq IS NULL`,
    WRITES,
  );
  return new Map(updated.map((book) => [book.id, book]));
}

/** A delete, by whom. */
export interface Delete {
  id: number;
  by?: ChangedBy | undefined;
}

/**
 * Deletes the books of these ids in one statement, each with its entry made `at`; true for
 * each that was deleted. An id asked for twice was deleted (and logged) by the first ask only.
 */
export async function deleteBooks(
  db: Queryable,
  deletes: readonly Delete[],
  at = Date.now(),
): Promise<boolean[]> {
  const ids = deletes.map((d) => d.id);
  const deleted = await db.query<{ id: number }>(
    sql`WITH asked AS (
      SELECT DISTINCT ON (id) id, who, account
      FROM unnest(${ids}::bigint[], ${byArrays(deletes)}) WITH ORDINALITY AS a(id, who, account, n)
      ORDER BY id, n
    ), gone AS (
      DELETE FROM books WHERE id = ANY(${ids}::bigint[])
      RETURNING id, title, author, year, last_change
    ), logged AS (
      ${LOG} SELECT gone.last_change, 'delete', gone.id, NULL, ${jsonOf("gone")}, ${at}::bigint,
        who, account
      FROM gone JOIN asked ON asked.id = gone.id ORDER BY gone.id
      RETURNING seq, book_id
    ), kept AS (
      -- What a restore brings back, and where the book's history starts.
      INSERT INTO deleted_books (id, last_change) SELECT book_id, seq FROM logged
      ON CONFLICT (id) DO UPDATE SET last_change = EXCLUDED.last_change
    )
    SELECT id FROM gone`,
    WRITES,
  );
  const gone = new Set(deleted.map((row) => row.id));
  return ids.map((id) => gone.delete(id));
}

/**
 * Brings the book `id` back with the values its delete entry (deleted_books) kept, and logs
 * it: in `tx`, whose first statement this is. Undefined when the book was not deleted or its
 * entry is trimmed; BookExistsError when the book exists.
 */
export async function restoreBook(
  tx: Queryable,
  id: number,
  by?: ChangedBy,
  at = Date.now(),
): Promise<StoredBook | undefined> {
  const [found] = await tx.query<{ present: boolean; seq: number | null; before: string | null }>(
    sql`SELECT EXISTS (SELECT FROM books WHERE id = ${id}) AS present, last.seq, last.before
      FROM (SELECT 1) AS one LEFT JOIN (SELECT c.seq, c.before FROM deleted_books d
        JOIN changes c ON c.seq = d.last_change WHERE d.id = ${id}) AS last ON true`,
    WRITES,
  );
  if (found?.present) throw new BookExistsError();
  if (found?.seq == null || found.before === null) return undefined;
  const { title, author, year } = JSON.parse(found.before) as Book;
  const book = { id, title, author, year };
  await tx.query(
    sql`WITH next AS (
      SELECT ${NEXT_SEQ} AS seq
    ), added AS (
      INSERT INTO books (id, title, author, year, ${DERIVED_COLUMNS}, last_change, changed_at)
      OVERRIDING SYSTEM VALUE
      SELECT ${id}::bigint, title, author, year, ${DERIVED_VALUES}, next.seq, ${at}::bigint
      FROM unnest(${[title]}::text[], ${[author]}::text[], ${[year]}::integer[],
        ${derivedArrays([book])}) AS t(title, author, year, tw, aw, tk, ak), next
      RETURNING id, title, author, year, last_change
    ), undeleted AS (
      DELETE FROM deleted_books WHERE id = ${id}
    )
    ${LOG_AT} SELECT last_change, ${found.seq}::bigint, 'restore', id, ${jsonOf("added")}, NULL,
      ${at}::bigint, ${by?.name ?? null}::text, ${by?.account ?? null}::bigint
    FROM added`,
    WRITES,
  );
  return { ...book, changedAt: at };
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
  // The transaction's first statement: it takes the lock of book writes before the book's.
  const [book] = await tx.query<StoredBook>(
    sql`SELECT id, title, author, year, changed_at AS "changedAt" FROM books WHERE id = ${id}
      FOR UPDATE`,
    WRITES,
  );
  if (book !== undefined && !versionMatches(book, expected)) throw new BookChangedError();
  return book;
}
