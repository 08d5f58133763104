import cluster from "node:cluster";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import type { Book } from "../../rules/book.js";
import { createReadCaches } from "../read-caches.js";
import { type BookStore, StoreOpenError } from "../store.js";
import { bookStatements } from "./books.js";
import { localCounter, threadCounter } from "./count.js";
import { withStoreErrors } from "./errors.js";
import { createListing, SEARCH_BOUNDS } from "./listing.js";
import { writerInPrimary } from "./primary-writer.js";
import { connect, migrate } from "./schema.js";
import { createSharedRead } from "./shared-read.js";
import { localWriter, threadWriter } from "./writer.js";

/**
 * Opens (creating when absent) the SQLite database at `path`, or in memory for ":memory:",
 * and brings its schema up to date.
 *
 * Writes go to the writer (writer.ts): a thread of its own with its own connection, which
 * commits them in groups (group-commit.ts); reads of one turn share a read transaction
 * (shared-read.ts); listing pages and books read by id are kept until the database changes
 * (read-caches.ts). Statements never use RETURNING: SQLite runs its WAL auto-checkpoint only
 * when a statement steps to completion, so RETURNING writes let the WAL grow without bound.
 */
export function openSqliteStore(path: string, bounds = SEARCH_BOUNDS): BookStore {
  const db = openDatabase(path);
  // Listing pages and books read by id are kept until the catalogue changes: this
  // connection's commits clear them, and PRAGMA data_version moves when any other connection
  // commits. A kept book costs a map lookup instead of a read (see docs/performance.md).
  const caches = createReadCaches();
  const dataVersionStmt = db.prepare("PRAGMA data_version");
  const dataVersion = () => (dataVersionStmt.get() as { data_version: number }).data_version;
  const sharedRead = createSharedRead(db);
  const listing = createListing(db, caches, dataVersion, bounds);
  // Reads after a commit see it: the turn's read transaction ends, kept reads are forgotten.
  const onCommit = () => {
    sharedRead.end();
    caches.clear();
  };
  const books = bookStatements(db);
  const inMemory = path === ":memory:";
  // A worker of WORKERS above 1 writes through the primary's writer (primary-writer.ts).
  const writer = inMemory
    ? localWriter(db, books, onCommit)
    : cluster.isWorker
      ? writerInPrimary(onCommit)
      : threadWriter(path, onCommit);
  const counter = inMemory ? localCounter(db, bounds.limitMs) : threadCounter(path, bounds.limitMs);
  // Books read by id are checked once a turn, as the shared read begins (its first read: the
  // version of its snapshot).
  const checkVersion = () => {
    const version = dataVersion();
    if (version !== caches.version) caches.moveTo(version);
  };

  return {
    get: (id) =>
      withStoreErrors(() => {
        sharedRead.enter(checkVersion);
        const kept = caches.books.get(id);
        if (kept !== undefined) return kept;
        const book = books.get(id);
        if (book !== undefined) caches.books.set(book);
        return book;
      }),
    list: (query) => withStoreErrors(() => listing.list(query)),
    count: (filters) => counter.count(filters),
    create: (book) => writer.write({ op: "create", book }) as Promise<Book>,
    update: (id, changes, expected) =>
      writer.write({ op: "update", id, changes, expected }) as Promise<Book | undefined>,
    remove: (id, expected) => writer.write({ op: "remove", id, expected }) as Promise<boolean>,
    ping: () => withStoreErrors(() => books.ping()),
    close: async () => {
      await Promise.all([writer.close(), counter.close()]);
      if (db.isOpen) {
        sharedRead.end();
        db.close();
      }
    },
  };
}

// The rare lock a reader meets (another connection recovering the WAL) is waited for this
// long on the event loop at most.
const READ_LOCK_WAIT_MS = 20;

function openDatabase(path: string): DatabaseSync {
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    const db = connect(path);
    migrate(db);
    // This connection only reads once the schema is ready (in WAL, readers take no lock that
    // a writer holds): no read sleeps on the event loop waiting for one.
    if (path !== ":memory:") db.exec(`PRAGMA busy_timeout = ${READ_LOCK_WAIT_MS}`);
    return db;
  } catch (error) {
    throw new StoreOpenError(
      `cannot prepare the SQLite store at ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
