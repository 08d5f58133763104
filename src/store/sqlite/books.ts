// The statements of single books: read by id, create, update, delete, each write with its
// search-index rows in the same transaction.
import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from "node:sqlite";
import { type Book, type BookChanges, MAX_BOOK_ID, type NewBook } from "../../rules/book.js";
import { sortKey } from "../../rules/search.js";
import { type ExpectedVersions, versionMatches } from "../book-version.js";
import { BookExistsError, bookJson, type ChangedBy, type ChangeOp } from "../changes.js";
import { BookChangedError, BookIdsExhaustedError, type StoredBook } from "../store.js";
import { writeStatement } from "./schema.js";
import { indexedWords } from "./search-index.js";

/** The fields of `changes` whose values are not the book's already. */
function changesTo(book: Book, changes: BookChanges): BookChanges {
  const changed: BookChanges = {};
  if (changes.title !== undefined && changes.title !== book.title) changed.title = changes.title;
  if (changes.author !== undefined && changes.author !== book.author) {
    changed.author = changes.author;
  }
  if (changes.year !== undefined && changes.year !== book.year) changed.year = changes.year;
  return changed;
}

/**
 * The columns an update sets, and their values: only the fields it changes (with a title or an
 * author, its sort key), so that a change of year rewrites no title or author index entry.
 */
function updateOf(changes: BookChanges): { fields: string; values: SQLInputValue[] } {
  const sets: string[] = [];
  const values: SQLInputValue[] = [];
  for (const field of ["title", "author"] as const) {
    const text = changes[field];
    if (text === undefined) continue;
    sets.push(`${field} = ?, ${field}_key = ?`);
    values.push(text, sortKey(text));
  }
  if (changes.year !== undefined) {
    sets.push("year = ?");
    values.push(changes.year);
  }
  return { fields: sets.join(", "), values };
}

/**
 * The create of bookStatements, indexing with `indexStmt`. A create given an id past the
 * largest is undone (the row and AUTOINCREMENT's counter, before its words are indexed) and
 * answers the error rather than throwing it, so the other writes of its group stand. The check
 * costs a comparison: a trigger doing it would make every insert open a statement journal,
 * several times its cost.
 */
function creating(db: DatabaseSync, indexStmt: StatementSync, log: ChangeLogging) {
  // The book's last_change is its entry's seq, which is known only after the book's id is (the
  // entry holds it). An UPDATE of the new row to set it would be counted as a change of a book
  // (migration 10's trigger, read by the kept-reads cache) and write the row twice; instead
  // the entry's seq is taken first (log.next) and the entry inserted with it.
  const insertStmt = writeStatement(
    db,
    `INSERT INTO books (title, author, year, title_key, author_key, last_change, changed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const undoInsertStmt = writeStatement(db, "DELETE FROM books WHERE id = last_insert_rowid()");
  const unsequenceStmt = writeStatement(
    db,
    "UPDATE sqlite_sequence SET seq = last_insert_rowid() - 1 WHERE name = 'books'",
  );
  return (book: NewBook, by?: ChangedBy): StoredBook | BookIdsExhaustedError => {
    const { title, author, year } = book;
    const [seq, at] = [log.next(), Date.now()];
    const keys = [sortKey(title), sortKey(author)];
    const id = Number(insertStmt.run(title, author, year, ...keys, seq, at).lastInsertRowid);
    if (id > MAX_BOOK_ID) {
      // By last_insert_rowid(): past 2^53 the number read back may be another id.
      undoInsertStmt.run();
      unsequenceStmt.run();
      return new BookIdsExhaustedError();
    }
    indexStmt.run(id, indexedWords(book));
    const created = { id, ...book };
    log("create", created, undefined, by, null, at, seq);
    return { ...created, changedAt: at };
  };
}

/**
 * Appends a change's entry made `at`, in the transaction of the change, after the book's entry
 * `previous` (null for none); with the sequence `seq` when given (taken with `next`), the next
 * otherwise. Returns the entry's sequence, the book's new last_change.
 */
interface ChangeLogging {
  (
    op: ChangeOp,
    after: Book | undefined,
    before: Book | undefined,
    by: ChangedBy | undefined,
    previous: number | null,
    at: number,
    seq?: number,
  ): number;
  /** Takes the next entry's sequence. */
  next(): number;
  /** Starts a transaction's entries: the next sequence is read again at the first. */
  begin(): void;
}

/**
 * The change log's appends. An entry without a given sequence takes AUTOINCREMENT's. One that
 * needs its sequence first (a create's) takes `next`: the largest AUTOINCREMENT gave, or the
 * largest kept, plus one, read once a transaction (which holds the write lock, so no other
 * connection appends meanwhile) and counted on from each entry inserted. Reading it for each
 * create cost the writer's thread about 2.5 µs a create. A sequence taken by a create that is
 * then undone is not given again: a gap, as AUTOINCREMENT leaves after a rollback.
 */
function changeLogging(db: DatabaseSync): ChangeLogging {
  const nextSeqStmt = db.prepare(
    `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'changes'), 0),
      coalesce((SELECT max(seq) FROM changes), 0)) + 1 AS seq`,
  );
  const insertStmt = writeStatement(
    db,
    `INSERT INTO changes (seq, previous, op, book_id, after, before, at, who, account_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  let nextSeq: number | undefined;
  const next = () => {
    nextSeq ??= nextSeqStmt.get()?.seq as number;
    return nextSeq++;
  };
  const log = (...[op, after, before, by, previous, at, seq]: Parameters<ChangeLogging>) => {
    const book = (after ?? before) as Book;
    const { lastInsertRowid } = insertStmt.run(
      seq ?? null,
      previous,
      op,
      book.id,
      after === undefined ? null : bookJson(after),
      before === undefined ? null : bookJson(before),
      at,
      by?.name ?? null,
      by?.account ?? null,
    );
    nextSeq = Number(lastInsertRowid) + 1;
    return nextSeq - 1;
  };
  return Object.assign(log, {
    next,
    begin: () => {
      nextSeq = undefined;
    },
  });
}

/**
 * The restore of bookStatements: the book back with its id and the values its delete entry
 * (deleted_books) kept; undefined when the book was not deleted, or its entry is trimmed.
 */
function restoring(db: DatabaseSync, indexStmt: StatementSync, log: ChangeLogging) {
  const lastStmt = db.prepare(
    `SELECT c.seq, c.before FROM deleted_books d JOIN changes c ON c.seq = d.last_change
     WHERE d.id = ?`,
  );
  const insertStmt = writeStatement(
    db,
    `INSERT INTO books (id, title, author, year, title_key, author_key, last_change, changed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const undeleteStmt = writeStatement(db, "DELETE FROM deleted_books WHERE id = ?");
  return (id: number, by?: ChangedBy): StoredBook | undefined => {
    const last = lastStmt.get(id) as { seq: number; before: string | null } | undefined;
    if (last === undefined || last.before === null) return undefined;
    const { title, author, year } = JSON.parse(last.before) as Book;
    const book = { id, title, author, year };
    // The entry first: its seq is the book's last_change, written with the row.
    const at = Date.now();
    const seq = log("restore", book, undefined, by, last.seq, at);
    insertStmt.run(id, title, author, year, sortKey(title), sortKey(author), seq, at);
    indexStmt.run(id, indexedWords(book));
    undeleteStmt.run(id);
    return { ...book, changedAt: at };
  };
}

/** A row of books as a plain book (node:sqlite rows have no prototype), with its changed_at. */
const storedBook = (row: Record<string, SQLOutputValue>): StoredBook => ({
  id: row.id as number,
  title: row.title as string,
  author: row.author as string,
  year: row.year as number,
  changedAt: row.changed_at as number | null,
});

/** The book a write changes and its newest entry; undefined when there is none. */
type Current = (
  id: number,
  expected: ExpectedVersions | undefined,
) => { book: StoredBook; lastChange: number | null } | undefined | BookChangedError;

/**
 * The update of bookStatements: only the fields it changes are written (one statement for each
 * set of them), with the entry's seq and time; an update that changes none (no field, or each
 * to the value it has) answers the book unwritten, and logs nothing.
 */
function updating(
  db: DatabaseSync,
  current: Current,
  log: ChangeLogging,
  indexStmt: StatementSync,
  unindexStmt: StatementSync,
) {
  const updateStatements = new Map<string, StatementSync>();
  return (
    id: number,
    changes: BookChanges,
    expected?: ExpectedVersions,
    by?: ChangedBy,
  ): StoredBook | undefined | BookChangedError => {
    const found = current(id, expected);
    if (found === undefined || found instanceof BookChangedError) return found;
    const before = found.book;
    const changed = changesTo(before, changes);
    const { fields, values } = updateOf(changed);
    if (fields.length === 0) return before;
    let statement = updateStatements.get(fields);
    if (statement === undefined) {
      statement = writeStatement(
        db,
        `UPDATE books SET ${fields}, last_change = ?, changed_at = ? WHERE id = ?`,
      );
      updateStatements.set(fields, statement);
    }
    // What the row now holds, without reading it again.
    const at = Date.now();
    const book = {
      id,
      title: changed.title ?? before.title,
      author: changed.author ?? before.author,
      year: changed.year ?? before.year,
      changedAt: at,
    };
    // The entry first, so that its seq is set in the update of the fields: one update of the
    // row, counted once (migration 10), no second write of it.
    const seq = log("update", book, before, by, found.lastChange, at);
    statement.run(...values, seq, at, id);
    if (changed.title !== undefined || changed.author !== undefined) {
      unindexStmt.run(id);
      indexStmt.run(id, indexedWords(book));
    }
    return book;
  };
}

/** The statements of single books; the writes run inside a group's transaction. */
export function bookStatements(db: DatabaseSync) {
  const getStmt = db.prepare("SELECT id, title, author, year, changed_at FROM books WHERE id = ?");
  const currentStmt = db.prepare(
    "SELECT id, title, author, year, last_change, changed_at FROM books WHERE id = ?",
  );
  const deletedStmt = writeStatement(
    db,
    "INSERT OR REPLACE INTO deleted_books (id, last_change) VALUES (?, ?)",
  );
  const removeStmt = writeStatement(db, "DELETE FROM books WHERE id = ?");
  const pingStmt = db.prepare("SELECT 1");
  const changeCountStmt = db.prepare("SELECT n FROM books_change_count");
  const indexStmt = writeStatement(db, "INSERT INTO books_search (rowid, words) VALUES (?, ?)");
  const unindexStmt = writeStatement(db, "DELETE FROM books_search WHERE rowid = ?");
  const log = changeLogging(db);
  const create = creating(db, indexStmt, log);
  const restore = restoring(db, indexStmt, log);
  const get = (id: number): StoredBook | undefined => {
    const row = getStmt.get(id);
    return row && storedBook(row);
  };
  /**
   * The book a write changes, read in its transaction; undefined when there is none, the
   * error when its version is not one `expected`.
   */
  const current: Current = (id, expected) => {
    const row = currentStmt.get(id);
    if (row === undefined) return undefined;
    const book = storedBook(row);
    if (expected !== undefined && !versionMatches(book, expected)) return new BookChangedError();
    return { book, lastChange: row.last_change as number | null };
  };
  return {
    get,
    create,
    /**
     * A conditional write that finds another version answers the error rather than throwing
     * it: the other writes of its group stand.
     */
    update: updating(db, current, log, indexStmt, unindexStmt),
    remove(id: number, expected?: ExpectedVersions, by?: ChangedBy): boolean | BookChangedError {
      const found = current(id, expected);
      if (found === undefined || found instanceof BookChangedError) return found ?? false;
      removeStmt.run(id);
      unindexStmt.run(id);
      const seq = log("delete", undefined, found.book, by, found.lastChange, Date.now());
      deletedStmt.run(id, seq);
      return true;
    },
    /** BookExistsError is answered, not thrown, as a refused update's error is. */
    restore: (id: number, by?: ChangedBy): StoredBook | undefined | BookExistsError =>
      get(id) === undefined ? restore(id, by) : new BookExistsError(),
    /** Starts a transaction's writes (the change log's next sequence is read again). */
    beginWrites: log.begin,
    ping: () => void pingStmt.get(),
    /** How many books were ever changed or deleted, by any connection (migration 10). */
    changeCount: () => changeCountStmt.get()?.n as number,
  };
}

/** What bookStatements gives: the statements of one connection. */
export type BookStatements = ReturnType<typeof bookStatements>;
