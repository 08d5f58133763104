import cluster from "node:cluster";
import { accessSync, constants, existsSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { privateFolder } from "../../private-files.js";
import type { Book } from "../../rules/book.js";
import { type MigrationLog, type MigrationTurn, takeTurns } from "../applied-migrations.js";
import { withDeadline } from "../deadline.js";
import { type BookStore, StoreOpenError, StoreUnavailableError } from "../store.js";
import { sqliteAccounts } from "./accounts.js";
import { bookStatements } from "./books.js";
import { sqliteChangeLog } from "./changes.js";
import { localCounter, threadCounter } from "./count.js";
import { withStoreErrors } from "./errors.js";
import { type Changed, type Write, writeStatements } from "./group-commit.js";
import { createKeptReads } from "./kept-reads.js";
import { createListing, SEARCH_BOUNDS } from "./listing.js";
import type { MigrateRequest } from "./migrate-thread.js";
import { settle } from "./outcome.js";
import { watchPrimary, writerInPrimary } from "./primary-writer.js";
import { connect, migrate, schemaCurrent } from "./schema.js";
import { createSharedRead } from "./shared-read.js";
import { openThreadChannel } from "./thread-channel.js";
import { localWriter, threadWriter } from "./writer.js";

/** How long a write may wait for its answer unless told otherwise (DB_TIMEOUT_SECONDS). */
const DEFAULT_TIMEOUT_MS = 5_000;
/** The end of a write's time in which the writer no longer begins it (half, if shorter). */
const COMMIT_MARGIN_MS = 1_000;

/**
 * Opens (creating when absent) the SQLite database at `path`, or in memory for ":memory:",
 * and brings its schema up to date.
 *
 * Writes go to the writer (writer.ts): a thread of its own with its own connection, which
 * commits them in groups (group-commit.ts); reads of one turn share a read transaction
 * (shared-read.ts); listing pages are kept until the database changes, books read by id
 * until a commit changes them (kept-reads.ts). Statements never use RETURNING: SQLite runs its WAL auto-checkpoint only
 * when a statement steps to completion, so RETURNING writes let the WAL grow without bound.
 */
export function openSqliteStore(
  path: string,
  bounds = SEARCH_BOUNDS,
  timeoutMs = DEFAULT_TIMEOUT_MS,
  migrationLog?: MigrationLog,
): BookStore {
  const db = openDatabase(path, migrationLog);
  const books = bookStatements(db);
  // Writes sent and not yet answered: a change the writer has not yet told of may be theirs.
  let writing = 0;
  // A kept book costs a map lookup instead of a read (see docs/performance.md).
  const kept = createKeptReads(db, books.changeCount, () => writing);
  const sharedRead = createSharedRead(db);
  const listing = createListing(db, kept, bounds);
  // Reads after a commit see it: the turn's read transaction ends, what it changed is forgotten.
  const onCommit = (changed?: Changed) => {
    sharedRead.end();
    kept.committed(changed);
  };
  const inMemory = path === ":memory:";
  // A worker of WORKERS above 1 writes through the primary's writer (primary-writer.ts).
  const writer = inMemory
    ? localWriter(db, writeStatements(db), sharedRead.end, onCommit)
    : cluster.isWorker
      ? writerInPrimary(onCommit)
      : threadWriter(path, onCommit);
  // A write the writer has not answered within the store's timeout (a disk that hangs, a lock
  // held elsewhere) answers 503. So that such a 503 has written nothing, the writer does not
  // begin a write in the last part of its time (COMMIT_MARGIN_MS), which a commit needs to be
  // answered: only a commit that hangs longer (the disk) may land after its 503.
  const margin = Math.min(COMMIT_MARGIN_MS, timeoutMs / 2);
  const write = (sent: Write) => {
    writing++;
    const answered = writer.write({ ...sent, deadline: Date.now() + timeoutMs - margin });
    return withDeadline(
      answered.finally(() => writing--),
      timeoutMs,
      () => new StoreUnavailableError(),
    );
  };
  const counter = inMemory ? localCounter(db, bounds.limitMs) : threadCounter(path, bounds.limitMs);
  const accounts = sqliteAccounts(db, write);

  return {
    get: (id) =>
      withStoreErrors(() => {
        sharedRead.enter(kept.beginRead);
        return kept.book(id, books.get);
      }),
    list: (query) => withStoreErrors(() => listing.list(query)),
    count: (filters) => counter.count(filters),
    create: (book, by) => write({ op: "create", book, by }) as Promise<Book>,
    update: (id, changes, expected, by) =>
      write({ op: "update", id, changes, expected, by }) as Promise<Book | undefined>,
    remove: (id, expected, by) => write({ op: "remove", id, expected, by }) as Promise<boolean>,
    restore: (id, by) => write({ op: "restore", id, by }) as Promise<Book | undefined>,
    accounts,
    changes: {
      ...sqliteChangeLog(db, (kept) => write({ op: "trim changes", kept }) as Promise<number>),
      // A worker is told of every worker's commits by the primary; one process hears its own.
      ...(cluster.isWorker ? { watch: watchPrimary } : {}),
    },
    ping: async () => {
      await withStoreErrors(() => books.ping());
      await writer.ping?.();
    },
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

function openDatabase(path: string, migrationLog?: MigrationLog): DatabaseSync {
  try {
    // Others who may write the folder could plant the -wal or -shm SQLite opens beside it.
    if (path !== ":memory:") privateFolder(dirname(path), "its folder");
    const db = connect(path);
    // A current schema takes no write lock here: one another connection holds is no wait on
    // the event loop (a file is migrated before, off it: migrateSqliteFile).
    if (!schemaCurrent(db)) for (const applied of migrate(db)) migrationLog?.applied(applied);
    // This connection only reads once the schema is ready (in WAL, readers take no lock that
    // a writer holds): no read sleeps on the event loop waiting for one.
    if (path !== ":memory:") db.exec(`PRAGMA busy_timeout = ${READ_LOCK_WAIT_MS}`);
    return db;
  } catch (error) {
    throw cannotPrepare(path, error);
  }
}

/**
 * Brings the schema of the file at `path` (made when absent) up to date before the store
 * opens, telling `log` as it goes: in turns (schema.ts), run in a thread of their own
 * (migrate-thread.ts), so the event loop goes on whatever a turn waits for.
 */
export async function migrateSqliteFile(path: string, log?: MigrationLog): Promise<void> {
  try {
    privateFolder(dirname(path), "its folder");
    const db = connect(path);
    try {
      if (schemaCurrent(db)) return;
    } finally {
      db.close();
    }
    const thread = openThreadChannel<MigrateRequest>("migrate-thread", path);
    const ask = async <T>(request: MigrateRequest) => settle(await thread.send(request)) as T;
    try {
      await takeTurns(
        () => ask<MigrationTurn>("turn"),
        (through) => ask<{ of: number; done: number }>({ through }),
        log,
      );
    } finally {
      await thread.close();
    }
  } catch (error) {
    throw cannotPrepare(path, error);
  }
}

function cannotPrepare(path: string, error: unknown): StoreOpenError {
  // From the migrating thread, a lock or a file out of reach comes with SQLite's own words.
  const cause = error instanceof StoreUnavailableError ? error.cause : undefined;
  const reason = (path !== ":memory:" && notWritable(path)) || ((cause ?? error) as Error).message;
  return new StoreOpenError(`cannot prepare the SQLite store at ${path}: ${reason}`, {
    cause: error,
  });
}

/**
 * Why the service cannot write where the database lives, when that is why it failed: SQLite
 * says only "unable to open database file" of a folder it cannot create the file, its -wal
 * or its -shm in.
 */
function notWritable(path: string): string | undefined {
  let folder = dirname(path);
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  const places = existsSync(path) ? [folder, path] : [folder];
  for (const place of places) {
    try {
      accessSync(place, constants.W_OK);
    } catch (error) {
      const what = place === path ? "the file" : "the folder";
      const why =
        (error as NodeJS.ErrnoException).code === "EROFS"
          ? "a read-only file system"
          : "its permissions";
      return `${what} ${place} is not writable by this user (${why}): the service writes ${basename(path)} and its -wal and -shm files in ${dirname(path)}`;
    }
  }
  return undefined;
}
