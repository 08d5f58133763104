import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { Book, BookChanges, NewBook } from "../books/book.js";
import { pendingMigrations } from "./migrations.js";
import { type BookStore, StoreOpenError, StoreUnavailableError } from "./store.js";

const COLUMNS = "id, title, author, year";

// Lock contention past busy_timeout (SQLITE_BUSY, SQLITE_LOCKED and their extended codes) is a
// passing condition, not a server fault.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED)/;

function translate(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && UNAVAILABLE.test(code)
    ? new StoreUnavailableError({ cause: error })
    : error;
}

/** Runs a store operation, turning lock timeouts into StoreUnavailableError. */
function run<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(translate(error));
  }
}

/**
 * Opens (creating when absent) the SQLite database at `path`, or in memory for ":memory:",
 * and brings its schema up to date.
 */
export function openSqliteStore(path: string): BookStore {
  let db: Database.Database;
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    db = new Database(path);
    db.pragma("journal_mode = WAL");
    // FULL: a 201 must survive power loss, so each commit waits for its fsync.
    db.pragma("synchronous = FULL");
    db.pragma("busy_timeout = 5000");
    migrate(db);
  } catch (error) {
    throw new StoreOpenError(
      `cannot prepare the SQLite store at ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }

  const getStmt = db.prepare<[number], Book>(`SELECT ${COLUMNS} FROM books WHERE id = ?`);
  const listStmt = db.prepare<[number, number], Book>(
    `SELECT ${COLUMNS} FROM books WHERE id > ? ORDER BY id LIMIT ?`,
  );
  const createStmt = db.prepare<[string, string, number], Book>(
    `INSERT INTO books (title, author, year) VALUES (?, ?, ?) RETURNING ${COLUMNS}`,
  );
  const updateStmt = db.prepare<[string | null, string | null, number | null, number], Book>(
    `UPDATE books SET title = coalesce(?, title), author = coalesce(?, author),
       year = coalesce(?, year) WHERE id = ? RETURNING ${COLUMNS}`,
  );
  const removeStmt = db.prepare<[number]>("DELETE FROM books WHERE id = ?");
  const pingStmt = db.prepare("SELECT 1");

  return {
    get: (id) => run(() => getStmt.get(id)),
    list: (after, limit) => run(() => listStmt.all(after, limit)),
    create: (book: NewBook) =>
      run(() => createStmt.get(book.title, book.author, book.year) as Book),
    update: (id, changes: BookChanges) =>
      run(() =>
        updateStmt.get(changes.title ?? null, changes.author ?? null, changes.year ?? null, id),
      ),
    remove: (id) => run(() => removeStmt.run(id).changes > 0),
    ping: () => run(() => void pingStmt.get()),
    close: async () => {
      if (db.open) db.close();
    },
  };
}

function migrate(db: Database.Database): void {
  // IMMEDIATE takes the write lock first, so two processes starting at once apply each step once.
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      applied_at TEXT NOT NULL DEFAULT (datetime('now'))
    ) STRICT`);
    const applied = db
      .prepare<[], { version: number }>("SELECT version FROM schema_migrations")
      .all()
      .map((row) => row.version);
    for (const step of pendingMigrations(applied)) {
      db.exec(step.sqlite);
      db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
    }
  }).immediate();
}
