// The statements of single books: read by id, create, update, delete, each write with its
// search-index rows in the same transaction.
import type { DatabaseSync } from "node:sqlite";
import type { Book, BookChanges, NewBook } from "../../rules/book.js";
import { writeStatement } from "./schema.js";
import { indexedWords } from "./search-index.js";

/** The statements of single books; the writes run inside a group's transaction. */
export function bookStatements(db: DatabaseSync) {
  const getStmt = db.prepare("SELECT id, title, author, year FROM books WHERE id = ?");
  const insertStmt = writeStatement(db, "INSERT INTO books (title, author, year) VALUES (?, ?, ?)");
  const updateStmt = writeStatement(
    db,
    `UPDATE books SET title = coalesce(?, title), author = coalesce(?, author),
       year = coalesce(?, year) WHERE id = ?`,
  );
  const removeStmt = writeStatement(db, "DELETE FROM books WHERE id = ?");
  const pingStmt = db.prepare("SELECT 1");
  const indexStmt = writeStatement(db, "INSERT INTO books_search (rowid, words) VALUES (?, ?)");
  const unindexStmt = writeStatement(db, "DELETE FROM books_search WHERE rowid = ?");
  // node:sqlite rows have no prototype; callers get a plain Book.
  const get = (id: number): Book | undefined => {
    const row = getStmt.get(id);
    return row && ({ id: row.id, title: row.title, author: row.author, year: row.year } as Book);
  };
  return {
    get,
    create(book: NewBook): Book {
      const id = Number(insertStmt.run(book.title, book.author, book.year).lastInsertRowid);
      indexStmt.run(id, indexedWords(book));
      return { id, ...book };
    },
    update(id: number, changes: BookChanges): Book | undefined {
      const { title = null, author = null, year = null } = changes;
      if (updateStmt.run(title, author, year, id).changes === 0n) return undefined;
      const book = get(id) as Book;
      if (title !== null || author !== null) {
        unindexStmt.run(id);
        indexStmt.run(id, indexedWords(book));
      }
      return book;
    },
    remove(id: number): boolean {
      if (removeStmt.run(id).changes === 0n) return false;
      unindexStmt.run(id);
      return true;
    },
    ping: () => void pingStmt.get(),
  };
}
