import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createReadCaches } from "../read-caches.js";
import { BookChangedError, type BookStore, StoreOpenError } from "../store.js";
import { bookStatements } from "./books.js";
import { withStoreErrors } from "./errors.js";
import { createGroupCommit } from "./group-commit.js";
import { createListing, SEARCH_BOUNDS } from "./listing.js";
import { migrate } from "./schema.js";
import { createSharedRead } from "./shared-read.js";

/**
 * Opens (creating when absent) the SQLite database at `path`, or in memory for ":memory:",
 * and brings its schema up to date.
 *
 * Writes are group-committed (group-commit.ts); reads of one turn share a read transaction
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
  const commits = createGroupCommit(db, () => {
    sharedRead.end();
    caches.clear();
  });
  const books = bookStatements(db);
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
    count: (filters) => withStoreErrors(() => listing.count(filters)),
    create: (book) => commits.write(() => books.create(book)),
    update: (id, changes, expected) =>
      commits.write(() => books.update(id, changes, expected)).then(unlessChanged),
    remove: (id, expected) => commits.write(() => books.remove(id, expected)).then(unlessChanged),
    ping: () => withStoreErrors(() => books.ping()),
    close: async () => {
      commits.flush();
      if (db.isOpen) {
        sharedRead.end();
        db.close();
      }
    },
  };
}

/** A conditional write's refusal, thrown once the group it was part of has committed. */
function unlessChanged<T>(result: T | BookChangedError): T {
  if (result instanceof BookChangedError) throw result;
  return result;
}

function openDatabase(path: string): DatabaseSync {
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    const db = new DatabaseSync(path);
    // The wait first: workers opening the file together meet each other's locks at once (the
    // first to open a WAL recovers it). FULL: a 201 must survive power loss, so each commit
    // waits for its fsync.
    db.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL");
    migrate(db);
    return db;
  } catch (error) {
    throw new StoreOpenError(
      `cannot prepare the SQLite store at ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
