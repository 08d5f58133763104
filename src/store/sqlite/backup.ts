// Backup and restore on SQLite: a snapshot is one read transaction on a connection of its
// own, so the service's connection writes on (WAL); a restore is one IMMEDIATE transaction.
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { setImmediate as nextTurn } from "node:timers/promises";
import { privateFolder } from "../../private-files.js";
import { type Book, MAX_BOOK_ID } from "../../rules/book.js";
import { sortKey } from "../../rules/search.js";
import {
  ACCOUNT_COLUMNS,
  type AccountRow,
  type StoredAccount,
  storedAccount,
} from "../accounts.js";
import {
  BACKUP_PAGE_SIZE,
  type BackupStore,
  CatalogueNotEmptyError,
  type CatalogueSnapshot,
  checkRestoredNextId,
} from "../backup.js";
import { pendingMigrations, SQLITE_DELETE_COUNTED } from "../migrations.js";
import { StoreOpenError } from "../store.js";
import { restartChangeLog } from "./changes.js";
import { migrate, writeStatement } from "./schema.js";
import { indexedWords } from "./search-index.js";

/**
 * Refuses a catalogue that holds books (or, when the backup holds accounts, accounts) unless
 * `replace`, and then removes them.
 */
function emptyCatalogue(db: DatabaseSync, replace: boolean, withAccounts: boolean): void {
  const present = db.prepare("SELECT count(*) AS n FROM books").get()?.n as number;
  const held = withAccounts
    ? (db.prepare("SELECT count(*) AS n FROM accounts").get()?.n as number)
    : 0;
  if ((present > 0 || held > 0) && !replace) throw new CatalogueNotEmptyError(present, held);
  if (present > 0) {
    db.exec("DROP TRIGGER books_delete_counted");
    db.exec("DELETE FROM books");
    db.exec(`${SQLITE_DELETE_COUNTED}; UPDATE books_change_count SET n = n + 1`);
    db.exec("INSERT INTO books_search (books_search) VALUES ('delete-all')");
  }
  if (held > 0) db.exec("DELETE FROM accounts");
  restartChangeLog(db);
}

/** The backup's accounts, ids and all; AUTOINCREMENT's counter follows the highest id. */
function insertAccounts(db: DatabaseSync, accounts: readonly StoredAccount[]): void {
  const insert = writeStatement(
    db,
    `INSERT INTO accounts (id, name, role, enabled, password_hash, tokens_valid_from)
      VALUES (?, ?, ?, ?, ?, ?)`,
  );
  for (const a of accounts) {
    insert.run(a.id, a.name, a.role, Number(a.enabled), a.passwordHash, a.tokensValidFrom);
  }
}

/**
 * Opens the catalogue at `path` for a backup (`read`: it must exist, and is not changed) or
 * a restore (created and migrated when absent).
 */
export function openSqliteBackup(path: string, purpose: "read" | "restore"): BackupStore {
  const db = openDatabase(path, purpose);
  return {
    readSnapshot: (read) => readSnapshot(db, read),
    restore: async (pages, nextId, replace, accounts) =>
      restore(db, pages, nextId, replace, accounts),
    close: async () => {
      if (db.isOpen) db.close();
    },
  };
}

function openDatabase(path: string, purpose: "read" | "restore"): DatabaseSync {
  if (path === ":memory:") throw new StoreOpenError("sqlite::memory: lives in one process only");
  if (purpose === "read" && !existsSync(path)) {
    throw new StoreOpenError(`there is no catalogue at sqlite:${path}`);
  }
  try {
    // As the service does, a restore makes the database's folder; both refuse a shared one.
    privateFolder(dirname(path), "its folder");
    const db = new DatabaseSync(path);
    db.exec("PRAGMA busy_timeout = 5000");
    if (purpose === "restore") {
      db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL");
      migrate(db);
    } else {
      checkSchema(db);
    }
    return db;
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    const doing = purpose === "read" ? "cannot read the catalogue at" : "cannot restore into";
    throw new StoreOpenError(`${doing} sqlite:${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** A catalogue's schema, at a version this build reads; else why not. */
function checkSchema(db: DatabaseSync): void {
  const table = db
    .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (table === undefined) throw new Error("it holds no catalogue (no schema_migrations table)");
  const rows = db.prepare("SELECT version FROM schema_migrations").all();
  pendingMigrations(rows.map((row) => row.version as number));
}

async function readSnapshot<T>(
  db: DatabaseSync,
  read: (snapshot: CatalogueSnapshot) => Promise<T>,
): Promise<T> {
  // A read transaction begins at its first read and holds that snapshot to its end.
  db.exec("BEGIN");
  try {
    const count = db.prepare("SELECT count(*) AS n FROM books").get()?.n as number;
    // Never past the largest id's next, whatever an older build let the counter reach.
    const seq = db
      .prepare("SELECT min(seq, ?) AS seq FROM sqlite_sequence WHERE name = 'books'")
      .get(MAX_BOOK_ID);
    const page = db.prepare(
      "SELECT id, title, author, year FROM books WHERE id > ? ORDER BY id LIMIT ?",
    );
    async function* pages(): AsyncGenerator<Book[]> {
      for (let after = 0; ; ) {
        const rows = page.all(after, BACKUP_PAGE_SIZE) as unknown as Book[];
        if (rows.length === 0) return;
        // node:sqlite rows have no prototype; a Book is a plain object.
        yield rows.map(({ id, title, author, year }) => ({ id, title, author, year }));
        after = (rows.at(-1) as Book).id;
        // The service, when it runs in this process, answers between pages.
        await nextTurn();
      }
    }
    const accounts = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY id`).all();
    return await read({
      count,
      nextId: ((seq?.seq as number | undefined) ?? 0) + 1,
      pages,
      accounts: (accounts as unknown as AccountRow[]).map(storedAccount),
    });
  } finally {
    db.exec("COMMIT");
  }
}

/** Drops the indexes of the books table; returns what makes them again, as they were. */
function withoutBookIndexes(db: DatabaseSync): () => void {
  const indexes = db
    .prepare(
      "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'books' AND sql IS NOT NULL",
    )
    .all() as { name: string; sql: string }[];
  for (const { name } of indexes) db.exec(`DROP INDEX "${name}"`);
  return () => {
    for (const { sql } of indexes) db.exec(sql);
  };
}

async function restore(
  db: DatabaseSync,
  pages: AsyncIterable<Book[]>,
  nextId: number,
  replace: boolean,
  accounts: readonly StoredAccount[] | undefined,
): Promise<number> {
  checkRestoredNextId(nextId);
  // The write lock is taken first: a busy catalogue fails here, before any change.
  db.exec("BEGIN IMMEDIATE");
  try {
    emptyCatalogue(db, replace, accounts !== undefined);
    if (accounts !== undefined) insertAccounts(db, accounts);
    // The books' indexes are built once the books are in, a sort each, not kept up a row at a
    // time (docs/performance.md); the same transaction, so a failed restore leaves them as
    // they were.
    const rebuild = withoutBookIndexes(db);
    const insert = writeStatement(
      db,
      `INSERT INTO books (id, title, author, year, title_key, author_key)
        VALUES (?, ?, ?, ?, ?, ?)`,
    );
    const index = writeStatement(db, "INSERT INTO books_search (rowid, words) VALUES (?, ?)");
    for await (const page of pages) {
      for (const book of page) {
        const { id, title, author, year } = book;
        if (id > MAX_BOOK_ID)
          throw new RangeError(`the id ${id} is past the largest id a book can have`);
        insert.run(id, title, author, year, sortKey(title), sortKey(author));
        index.run(book.id, indexedWords(book));
      }
    }
    rebuild();
    // AUTOINCREMENT's counter: never below what either catalogue has given.
    db.prepare(
      `INSERT INTO sqlite_sequence (name, seq) SELECT 'books', 0
         WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'books')`,
    ).run();
    db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'books'").run(
      BigInt(nextId - 1),
    );
    const seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'books'").get()?.seq;
    db.exec("COMMIT");
    return Number(seq) + 1;
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
