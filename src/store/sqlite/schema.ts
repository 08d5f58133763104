import { existsSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { sortKey, unspacedCharacters } from "../../rules/search.js";
import {
  type AppliedMigration,
  describeMigration,
  MIGRATION_BATCH,
  type MigrationTurn,
} from "../applied-migrations.js";
import { derivesOn, type Migration, pendingMigrations } from "../migrations.js";
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

/**
 * Brings the schema up to date in turns (IMMEDIATE transactions); returns the steps applied.
 * A step that writes every book writes MIGRATION_BATCH books a turn, recording how far it
 * has come: a start after a crash carries on from there.
 */
export function migrate(db: DatabaseSync): AppliedMigration[] {
  const applied: AppliedMigration[] = [];
  for (;;) {
    const turn = migrationTurn(db);
    applied.push(...turn.applied);
    if (turn.deriving === undefined) return applied;
  }
}

/** Whether the schema is current: no step left (a file just made has none applied). */
export function schemaCurrent(db: DatabaseSync): boolean {
  const made = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").get();
  if (made === undefined) return false;
  const versions = db.prepare("SELECT version FROM schema_migrations").all();
  return pendingMigrations(versions.map((row) => row.version as number)).length === 0;
}

/** A turn of migrating: one IMMEDIATE transaction (see nextTurn). */
export const migrationTurn = (db: DatabaseSync): MigrationTurn =>
  transaction(db, () => nextTurn(db));

/** The books, and those up to `through` (written by a step before this turn). */
export function booksThrough(db: DatabaseSync, through: number): { of: number; done: number } {
  const row = db
    .prepare("SELECT count(*) AS of, count(*) FILTER (WHERE id <= ?) AS done FROM books")
    .get(through);
  return { of: Number(row?.of ?? 0), done: Number(row?.done ?? 0) };
}

/**
 * Applies the steps left, up to a batch of books written by a step that writes every book
 * and has more left. Two processes starting at once take turns (each turn is IMMEDIATE).
 */
function nextTurn(db: DatabaseSync): MigrationTurn {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      applied_at TEXT NOT NULL DEFAULT (datetime('now'))
    ) STRICT;
    CREATE TABLE IF NOT EXISTS schema_migration_progress (
      version INTEGER PRIMARY KEY,
      derived_through INTEGER NOT NULL
    ) STRICT`);
  const versions = db.prepare("SELECT version FROM schema_migrations").all();
  const applied: AppliedMigration[] = [];
  for (const step of pendingMigrations(versions.map((row) => row.version as number))) {
    const derives = derivesOn(step, "sqlite");
    const begun = db
      .prepare("SELECT derived_through AS n FROM schema_migration_progress WHERE version = ?")
      .get(step.version)?.n as number | undefined;
    if (begun === undefined) db.exec(step.sqlite);
    const through = derives ? derive(db, step, begun ?? 0) : undefined;
    if (through !== undefined) {
      db.prepare("INSERT OR REPLACE INTO schema_migration_progress VALUES (?, ?)").run(
        step.version,
        through,
      );
      return { applied, deriving: { version: step.version, through } };
    }
    db.prepare("DELETE FROM schema_migration_progress WHERE version = ?").run(step.version);
    db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
    applied.push(describeMigration(step, step.sqlite, derives));
  }
  return { applied };
}

/**
 * Writes what the step derives (see Migration.derive) for up to MIGRATION_BATCH books after
 * `after`: their search words, the sort keys too, or only the words of those written without
 * spaces, replaced. Returns the last id read, or undefined when there was none left.
 */
function derive(db: DatabaseSync, step: Migration, after: number): number | undefined {
  const index = writeStatement(db, "INSERT INTO books_search (rowid, words) VALUES (?, ?)");
  const setKeys =
    step.derive === "words and keys" &&
    writeStatement(db, "UPDATE books SET title_key = ?, author_key = ? WHERE id = ?");
  const remove =
    step.derive === "sqlite unspaced words" &&
    writeStatement(db, "DELETE FROM books_search WHERE rowid = ?");
  // Read whole before any is written: rows are not changed under a statement still reading.
  const books = db
    .prepare("SELECT id, title, author FROM books WHERE id > ? ORDER BY id LIMIT ?")
    .all(after, MIGRATION_BATCH) as unknown as { id: number; title: string; author: string }[];
  for (const book of books) {
    if (remove) {
      if (unspacedCharacters(`${book.title} ${book.author}`).length === 0) continue;
      remove.run(book.id);
    }
    index.run(book.id, indexedWords(book));
    if (setKeys) setKeys.run(sortKey(book.title), sortKey(book.author), book.id);
  }
  return books.at(-1)?.id;
}
