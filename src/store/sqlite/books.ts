// The statements of single books: read by id, create, update, delete, each write with its
// search-index rows in the same transaction.
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { type Book, type BookChanges, MAX_BOOK_ID, type NewBook } from "../../rules/book.js";
import { sortKey } from "../../rules/search.js";
import { type ExpectedVersions, versionMatches } from "../book-version.js";
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
function creating(db: DatabaseSync, indexStmt: StatementSync) {
  const insertStmt = writeStatement(
    db,
    "INSERT INTO books (title, author, year, title_key, author_key) VALUES (?, ?, ?, ?, ?)",
  );
  const undoInsertStmt = writeStatement(db, "DELETE FROM books WHERE id = last_insert_rowid()");
  const unsequenceStmt = writeStatement(
    db,
    "UPDATE sqlite_sequence SET seq = last_insert_rowid() - 1 WHERE name = 'books'",
  );
  return (book: NewBook): Book | BookIdsExhaustedError => {
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
    return { id, ...book };
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
  const create = creating(db, indexStmt);
  // node:sqlite rows have no prototype; callers get a plain Book.
  const get = (id: number): Book | undefined => {
    const row = getStmt.get(id);
    return row && ({ id: row.id, title: row.title, author: row.author, year: row.year } as Book);
  };
  /** Why a conditional write must not go on, read in its transaction; undefined: it may. */
  const precondition = (id: number, expected: ExpectedVersions) => {
    const current = get(id);
    if (current === undefined) return "absent";
    return versionMatches(current, expected) ? undefined : new BookChangedError();
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
    ): Book | undefined | BookChangedError {
      const refused = expected === undefined ? undefined : precondition(id, expected);
      if (refused !== undefined) return refused === "absent" ? undefined : refused;
      const { fields, values } = updateOf(changes);
      if (fields.length === 0) return get(id);
      let statement = updateStatements.get(fields);
      if (statement === undefined) {
        statement = writeStatement(db, `UPDATE books SET ${fields} WHERE id = ?`);
        updateStatements.set(fields, statement);
      }
      if (statement.run(...values, id).changes === 0n) return undefined;
      const book = get(id) as Book;
      if (changes.title !== undefined || changes.author !== undefined) {
        unindexStmt.run(id);
        indexStmt.run(id, indexedWords(book));
      }
      return book;
    },
    remove(id: number, expected?: ExpectedVersions): boolean | BookChangedError {
      const refused = expected === undefined ? undefined : precondition(id, expected);
      if (refused !== undefined) return refused === "absent" ? false : refused;
      if (removeStmt.run(id).changes === 0n) return false;
      unindexStmt.run(id);
      return true;
    },
    ping: () => void pingStmt.get(),
    /** How many books were ever changed or deleted, by any connection (migration 10). */
    changeCount: () => changeCountStmt.get()?.n as number,
  };
}

/** What bookStatements gives: the statements of one connection. */
export type BookStatements = ReturnType<typeof bookStatements>;
