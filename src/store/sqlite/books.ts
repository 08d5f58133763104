// The statements of single books: read by id, create, update, delete, each write with its
// search-index rows in the same transaction.
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { type Book, type BookChanges, MAX_BOOK_ID, type NewBook } from "../../rules/book.js";
import { sortKey } from "../../rules/search.js";
import { type ExpectedVersions, versionMatches } from "../book-version.js";
import { BookExistsError, bookJson, type ChangedBy, type ChangeOp } from "../changes.js";
import { BookChangedError, BookIdsExhaustedError } from "../store.js";
import { writeStatement } from "./schema.js";
import { indexedWords } from "./search-index.js";

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
  const insertStmt = writeStatement(
    db,
    "INSERT INTO books (title, author, year, title_key, author_key) VALUES (?, ?, ?, ?, ?)",
  );
  const undoInsertStmt = writeStatement(db, "DELETE FROM books WHERE id = last_insert_rowid()");
  const unsequenceStmt = writeStatement(
    db,
    "UPDATE sqlite_sequence SET seq = last_insert_rowid() - 1 WHERE name = 'books'",
  );
  return (book: NewBook, by?: ChangedBy): Book | BookIdsExhaustedError => {
    const { title, author, year } = book;
    const id = Number(
      insertStmt.run(title, author, year, sortKey(title), sortKey(author)).lastInsertRowid,
    );
    if (id > MAX_BOOK_ID) {
      // By last_insert_rowid(): past 2^53 the number read back may be another id.
      undoInsertStmt.run();
      unsequenceStmt.run();
      return new BookIdsExhaustedError();
    }
    indexStmt.run(id, indexedWords(book));
    const created = { id, ...book };
    log("create", created, undefined, by);
    return created;
  };
}

/** Appends a change's entry, in the transaction of the change. */
type ChangeLogging = (op: ChangeOp, after: Book | undefined, before?: Book, by?: ChangedBy) => void;

function changeLogging(db: DatabaseSync): ChangeLogging {
  const insertStmt = writeStatement(
    db,
    `INSERT INTO changes (op, book_id, after, before, at, who, account_id)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  return (op, after, before, by) => {
    const book = (after ?? before) as Book;
    insertStmt.run(
      op,
      book.id,
      after === undefined ? null : bookJson(after),
      before === undefined ? null : bookJson(before),
      Date.now(),
      by?.name ?? null,
      by?.account ?? null,
    );
  };
}

/**
 * The restore of bookStatements: the book back with its id and the values its last entry, a
 * delete's, kept; undefined when its last entry is no delete (or none is kept).
 */
function restoring(db: DatabaseSync, indexStmt: StatementSync, log: ChangeLogging) {
  const lastStmt = db.prepare(
    "SELECT op, before FROM changes WHERE book_id = ? ORDER BY seq DESC LIMIT 1",
  );
  const insertStmt = writeStatement(
    db,
    "INSERT INTO books (id, title, author, year, title_key, author_key) VALUES (?, ?, ?, ?, ?, ?)",
  );
  return (id: number, by?: ChangedBy): Book | undefined => {
    const last = lastStmt.get(id) as { op: string; before: string | null } | undefined;
    if (last?.op !== "delete" || last.before === null) return undefined;
    const { title, author, year } = JSON.parse(last.before) as Book;
    const book = { id, title, author, year };
    insertStmt.run(id, title, author, year, sortKey(title), sortKey(author));
    indexStmt.run(id, indexedWords(book));
    log("restore", book, undefined, by);
    return book;
  };
}

/** The statements of single books; the writes run inside a group's transaction. */
export function bookStatements(db: DatabaseSync) {
  const getStmt = db.prepare("SELECT id, title, author, year FROM books WHERE id = ?");
  const updateStatements = new Map<string, StatementSync>();
  const removeStmt = writeStatement(db, "DELETE FROM books WHERE id = ?");
  const pingStmt = db.prepare("SELECT 1");
  const changeCountStmt = db.prepare("SELECT n FROM books_change_count");
  const indexStmt = writeStatement(db, "INSERT INTO books_search (rowid, words) VALUES (?, ?)");
  const unindexStmt = writeStatement(db, "DELETE FROM books_search WHERE rowid = ?");
  const log = changeLogging(db);
  const create = creating(db, indexStmt, log);
  const restore = restoring(db, indexStmt, log);
  // node:sqlite rows have no prototype; callers get a plain Book.
  const get = (id: number): Book | undefined => {
    const row = getStmt.get(id);
    return row && ({ id: row.id, title: row.title, author: row.author, year: row.year } as Book);
  };
  /**
   * The book a write changes, read in its transaction; undefined when there is none, the
   * error when its version is not one `expected`.
   */
  const current = (id: number, expected: ExpectedVersions | undefined) => {
    const book = get(id);
    if (book === undefined || expected === undefined || versionMatches(book, expected)) return book;
    return new BookChangedError();
  };
  return {
    get,
    create,
    /**
     * A conditional write that finds another version answers the error rather than throwing
     * it: the other writes of its group stand.
     */
    update(
      id: number,
      changes: BookChanges,
      expected?: ExpectedVersions,
      by?: ChangedBy,
    ): Book | undefined | BookChangedError {
      const before = current(id, expected);
      if (before === undefined || before instanceof BookChangedError) return before;
      const { fields, values } = updateOf(changes);
      if (fields.length === 0) return before;
      let statement = updateStatements.get(fields);
      if (statement === undefined) {
        statement = writeStatement(db, `UPDATE books SET ${fields} WHERE id = ?`);
        updateStatements.set(fields, statement);
      }
      statement.run(...values, id);
      // What the row now holds, without reading it again.
      const book = {
        id,
        title: changes.title ?? before.title,
        author: changes.author ?? before.author,
        year: changes.year ?? before.year,
      };
      if (changes.title !== undefined || changes.author !== undefined) {
        unindexStmt.run(id);
        indexStmt.run(id, indexedWords(book));
      }
      log("update", book, before, by);
      return book;
    },
    remove(id: number, expected?: ExpectedVersions, by?: ChangedBy): boolean | BookChangedError {
      const before = current(id, expected);
      if (before === undefined || before instanceof BookChangedError) return before ?? false;
      removeStmt.run(id);
      unindexStmt.run(id);
      log("delete", undefined, before, by);
      return true;
    },
    /** BookExistsError is answered, not thrown, as a refused update's error is. */
    restore: (id: number, by?: ChangedBy): Book | undefined | BookExistsError =>
      get(id) === undefined ? restore(id, by) : new BookExistsError(),
    ping: () => void pingStmt.get(),
    /** How many books were ever changed or deleted, by any connection (migration 10). */
    changeCount: () => changeCountStmt.get()?.n as number,
  };
}

/** What bookStatements gives: the statements of one connection. */
export type BookStatements = ReturnType<typeof bookStatements>;
