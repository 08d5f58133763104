import type { DatabaseSync, StatementSync } from "node:sqlite";
import { pendingMigrations } from "../migrations.js";
import { indexedWords } from "./search-index.js";

/**
 * A statement that writes. Its run() reports SQLite's last inserted rowid whatever the
 * statement, and FTS5 leaves there the rowids of its own pages (a tombstone page's is above
 * 2^53): read as a number, Node 26 throws RangeError and the write fails. As BigInts they
 * read safely; ids themselves stay below 2^53 (see parseBookId).
 */
export function writeStatement(db: DatabaseSync, sql: string): StatementSync {
  const statement = db.prepare(sql);
  statement.setReadBigInts(true);
  return statement;
}

/**
 * Runs `body` in one IMMEDIATE transaction: the write lock is taken first, so a busy database
 * fails here, before any change, and two processes never interleave their steps.
 */
export function transaction<T>(db: DatabaseSync, body: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = body();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}

export function migrate(db: DatabaseSync): void {
  // Two processes starting at once apply each step once.
  transaction(db, () => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      applied_at TEXT NOT NULL DEFAULT (datetime('now'))
    ) STRICT`);
    const applied = db
      .prepare("SELECT version FROM schema_migrations")
      .all()
      .map((row) => row.version as number);
    for (const step of pendingMigrations(applied)) {
      db.exec(step.sqlite);
      if (step.indexWords) {
        const index = writeStatement(db, "INSERT INTO books_search (rowid, words) VALUES (?, ?)");
        for (const book of db.prepare("SELECT id, title, author FROM books").iterate()) {
          index.run(book.id as number, indexedWords(book as { title: string; author: string }));
        }
      }
      db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
    }
  });
}
