import type { MigrationLog } from "../applied-migrations.js";
import type { ExpectedVersions } from "../book-version.js";
import { withDeadline } from "../deadline.js";
import {
  BookIdsExhaustedError,
  type BookStore,
  StoreOpenError,
  StoreUnavailableError,
} from "../store.js";
import { postgresAccounts } from "./accounts.js";
import { type Batched, batching } from "./batching.js";
import {
  type Create,
  type Delete,
  deleteBooks,
  insertBooks,
  lockExpected,
  restoreBook,
  type Update,
  updateBooks,
} from "./books.js";
import { postgresChangeLog } from "./changes.js";
import { isUnavailable, withStoreErrors } from "./errors.js";
import { createKeptReads } from "./kept-reads.js";
import { createListing, type SearchBounds } from "./listing.js";
import { type Db, openDb, type Queryable } from "./pool.js";
import { migrate } from "./schema.js";
import { type PostgresAddress, parsePostgresUrl } from "./url.js";

export interface PostgresOptions {
  poolSize: number;
  /** How long a statement, or the wait for a connection, may take before 503. */
  timeoutMs: number;
  /** Named prepared statements: off behind a transaction pooler (DB_PREPARED_STATEMENTS). */
  preparedStatements: boolean;
  /** The store's address without its password, for messages. */
  description: string;
  /**
   * How long the reads of one request's search may take in all (BookQuery.searchStarted);
   * past it, the search is refused.
   */
  searchTimeoutMs?: number;
  /** How many books a search reads at most (listing.ts); tests make them small. */
  searchBounds?: SearchBounds;
  /** How long migrations may take (schema.ts; tests make it short). */
  migrationTimeoutMs?: number;
  /** Told each migration applied at start-up, and the progress of long ones. */
  migrationLog?: MigrationLog;
  /** A direct or session-pooled address to LISTEN for changes on (listen.ts). */
  listenUrl?: string;
}

/** How long start-up waits for PostgreSQL to answer before giving up. */
export const STORE_OPEN_TIMEOUT_SECONDS = 10;

/**
 * Connects a pool, brings the schema up to date, and serves books from it. Listing pages are
 * kept while no commit has changed books, in any process or instance (commit-counter.ts);
 * writes and reads by id that arrive together (in one turn, or while the pool is busy) go in
 * one statement (batching.ts).
 */
export async function openPostgresStore(url: string, options: PostgresOptions): Promise<BookStore> {
  const db = await connect(url, options);
  const listing = createListing(db, options.searchTimeoutMs ?? 1_000, options.searchBounds);
  const batched = batching(options.poolSize);
  const kept = createKeptReads(db, batched, listing);
  return {
    get: (id) => withStoreErrors(() => kept.get(id)),
    list: (query) => withStoreErrors(() => kept.list(query)),
    count: (filters) => withStoreErrors(() => listing.count(filters)),
    ...bookWrites(db, batched),
    accounts: postgresAccounts(db),
    changes: postgresChangeLog(db, options.listenUrl),
    ping: () =>
      withStoreErrors(async () => {
        await db.query("SELECT 1");
      }),
    close: () => db.end(),
  };
}

/**
 * The store's book writes, each with its change log entries (books.ts). Creates, updates and
 * deletes are sent together (as reads by id, kept-reads.ts): those that arrive in one turn, or
 * while another write commits, go in one statement, in one commit (one WAL flush); one write is
 * under way at a time. See docs/performance.md. A conditional write or a restore has a
 * transaction of its own.
 */
function bookWrites(
  db: Db,
  batched: Batched,
): Pick<BookStore, "create" | "update" | "remove" | "restore"> {
  const write = { write: true };
  const createBooks = batched(
    (creates: readonly Create[]) => withStoreErrors(() => insertBooks(db, creates)),
    write,
  );
  const updateBatch = batched(
    (updates: readonly Update[]) => withStoreErrors(() => updateBooks(db, updates)),
    write,
  );
  const deleteBatch = batched(
    (deletes: readonly Delete[]) => withStoreErrors(() => deleteBooks(db, deletes)),
    write,
  );
  /**
   * A write on a condition: in one transaction, after locking the book (and first the lock of
   * book writes, books.ts) and checking it.
   */
  const conditionally = <T>(
    id: number,
    expected: ExpectedVersions,
    write: (tx: Queryable) => Promise<T>,
  ) =>
    withStoreErrors(() =>
      db.transaction(async (tx) =>
        (await lockExpected(tx, id, expected)) === undefined ? undefined : write(tx),
      ),
    );
  return {
    create: (book, by) =>
      createBooks({ book, by }).then((created) => {
        if (created instanceof BookIdsExhaustedError) throw created;
        return created;
      }),
    update: (id, changes, expected, by) =>
      expected === undefined
        ? updateBatch({ id, changes, by })
        : conditionally(
            id,
            expected,
            async (tx) => (await updateBooks(tx, [{ id, changes, by }]))[0],
          ),
    remove: (id, expected, by) =>
      expected === undefined
        ? deleteBatch({ id, by })
        : conditionally(id, expected, async (tx) => (await deleteBooks(tx, [{ id, by }]))[0]).then(
            (done) => done === true,
          ),
    restore: (id, by) => withStoreErrors(() => db.transaction((tx) => restoreBook(tx, id, by))),
  };
}

/**
 * A pool on a schema `prepare` has brought up to date (by default: migrated), or
 * StoreOpenError naming what failed (never the password). PostgreSQL must answer within
 * STORE_OPEN_TIMEOUT_SECONDS; what `prepare` does after is bounded by itself (migrations take
 * minutes on a large catalogue).
 */
export async function connect(
  url: string,
  options: PostgresOptions & { applicationName?: string; failure?: string },
  prepare: (db: Db) => Promise<unknown> = (db) =>
    migrate(db, options.migrationTimeoutMs, options.migrationLog),
): Promise<Db> {
  const address = parsePostgresUrl(url);
  if ("problem" in address) throw new StoreOpenError(address.problem);
  let db: Db | undefined;
  try {
    db = await withinOpenDeadline(reach(address, options), options.description);
    await prepare(db);
    return db;
  } catch (error) {
    await db?.end().catch(() => {});
    if (error instanceof StoreOpenError) throw error;
    const reason = isUnavailable(error)
      ? `cannot reach PostgreSQL at ${options.description}`
      : `${options.failure ?? "cannot prepare the PostgreSQL schema at"} ${options.description}`;
    throw new StoreOpenError(`${reason}: ${describeFailure(error, url)}`, { cause: error });
  }
}

/** A pool on the primary, once it has answered a statement. */
async function reach(
  address: PostgresAddress,
  options: PostgresOptions & { applicationName?: string },
): Promise<Db> {
  const db = await openDb(address, {
    poolSize: options.poolSize,
    timeoutMs: options.timeoutMs,
    preparedStatements: options.preparedStatements,
    applicationName: options.applicationName ?? "book-catalogue",
  });
  try {
    await db.query("SELECT 1");
    return db;
  } catch (error) {
    await db.end().catch(() => {});
    throw error;
  }
}

/**
 * The pool `reaching` gives, or StoreOpenError once STORE_OPEN_TIMEOUT_SECONDS have passed:
 * a server that accepts connections and never answers would hold start-up for ever.
 */
async function withinOpenDeadline(reaching: Promise<Db>, description: string): Promise<Db> {
  let timedOut = false;
  try {
    return await withDeadline(reaching, STORE_OPEN_TIMEOUT_SECONDS * 1000, () => {
      timedOut = true;
      return new StoreOpenError(
        `cannot reach PostgreSQL at ${description} within ${STORE_OPEN_TIMEOUT_SECONDS} s`,
      );
    });
  } finally {
    // A pool that answers after the deadline is ended, not leaked.
    if (timedOut) reaching.then((db) => db.end(), ignore);
  }
}

const ignore = () => {};

/**
 * PostgreSQL's own words with their code ('database "x" does not exist (3D000)'): they say
 * what to do. They hold no password, and the URL's is blanked should one ever appear. A
 * connection that failed says why through its cause (ECONNREFUSED).
 */
function describeFailure(error: unknown, url: string): string {
  const reason = error instanceof StoreUnavailableError && error.cause ? error.cause : error;
  const { code, message } = reason as { code?: unknown; message?: unknown };
  const text = typeof message === "string" && message !== "" ? message : String(reason);
  const password = safeDecode(/^[^:]+:\/\/[^:@/]*:([^@/]*)@/.exec(url)?.[1] ?? "");
  const safe = password === "" ? text : text.replaceAll(password, "[redacted]");
  return typeof code === "string" && !safe.includes(code) ? `${safe} (${code})` : safe;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
