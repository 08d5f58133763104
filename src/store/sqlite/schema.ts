import { existsSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { sortKey } from "../../rules/search.js";
import { type AppliedMigration, describeMigration } from "../applied-migrations.js";
import { pendingMigrations } from "../migrations.js";
import { SQLITE_CANTOPEN } from "./errors.js";
import { indexedWords } from "./search-index.js";

/** How long a write waits for another connection's lock before it answers 503. */
export const WRITE_LOCK_WAIT_MS = 5_000;

/**
 * A connection to the file at `path` (created when absent), in WAL mode. FULL: a 201 must
 * survive power loss, so each commit waits for its fsync. The wait first: workers opening
 * the file together meet each other's locks at once (the first to open a WAL recovers it).
 */
export function connect(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec(
    `PRAGMA busy_timeout = ${WRITE_LOCK_WAIT_MS}; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL`,
  );
  return db;
}

/**
 * A connection of one of the store's threads (the writer, the counter) to the file the store
 * made and migrated at start. Were it gone (removed under the service), SQLite would make a new,
 * empty one, and every statement would fail on the tables it lacks (500s): SQLite's own
 * "unable to open" instead, a 503, until the file is back.
 */
export function connectExisting(path: string): DatabaseSync {
  if (!existsSync(path)) {
    const gone = new Error(`unable to open database file: ${path} is gone`);
    throw Object.assign(gone, { errcode: SQLITE_CANTOPEN });
  }
  return connect(path);
}

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

/** Brings the schema up to date; returns the steps applied, once committed. */
export function migrate(db: DatabaseSync): AppliedMigration[] {
  // Two processes starting at once apply each step once.
  return transaction(db, () => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      applied_at TEXT NOT NULL DEFAULT (datetime('now'))
    ) STRICT`);
    const applied = db
      .prepare("SELECT version FROM schema_migrations")
      .all()
      .map((row) => row.version as number);
    return pendingMigrations(applied).map((step) => {
      db.exec(step.sqlite);
      const derives = step.derive !== undefined && step.derive !== "postgres words";
      if (derives) derive(db, step.derive === "words and keys");
      db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
      return describeMigration(step, step.sqlite, derives);
    });
  });
}

/** Writes every book's search words, and with `keys` its sort keys (see Migration.derive). */
function derive(db: DatabaseSync, keys: boolean): void {
  const index = writeStatement(db, "INSERT INTO books_search (rowid, words) VALUES (?, ?)");
  const setKeys =
    keys && writeStatement(db, "UPDATE books SET title_key = ?, author_key = ? WHERE id = ?");
  // A thousand at a time in id order: rows are not changed under a statement still reading.
  const next = db.prepare(
    "SELECT id, title, author FROM books WHERE id > ? ORDER BY id LIMIT 1000",
  );
  for (let after = 0; ; ) {
    const books = next.all(after) as unknown as { id: number; title: string; author: string }[];
    if (books.length === 0) return;
    for (const book of books) {
      index.run(book.id, indexedWords(book));
      if (setKeys) setKeys.run(sortKey(book.title), sortKey(book.author), book.id);
    }
    after = books.at(-1)?.id as number;
  }
}
