import postgres from "postgres";
import type { NewBook } from "../../rules/book.js";
import { createReadCaches } from "../read-caches.js";
import { type BookStore, StoreOpenError } from "../store.js";
import { batched } from "./batching.js";
import { deleteBook, insertBooks, selectBooks, updateBook } from "./books.js";
import { createCommitCounter } from "./commit-counter.js";
import { isUnavailable, withStoreErrors } from "./errors.js";
import { createListing } from "./listing.js";
import { migrate } from "./schema.js";

export interface PostgresOptions {
  poolSize: number;
  connectTimeoutSeconds: number;
  /** The store's address without its password, for messages. */
  description: string;
  /** How long a search may hold a connection of the pool; past it, the search is refused. */
  searchTimeoutMs?: number;
}

/**
 * Connects a pool, brings the schema up to date, and serves books from it. Listing pages and
 * books read by id are kept while no commit has changed books, in any process or instance
 * (commit-counter.ts); creates and reads by id that arrive while the pool is busy go in one
 * statement (batching.ts).
 */
export async function openPostgresStore(url: string, options: PostgresOptions): Promise<BookStore> {
  const sql = await connect(url, options);
  const listing = createListing(sql, options.searchTimeoutMs ?? 1_000);
  const caches = createReadCaches();
  const latestCommits = createCommitCounter(sql);
  /**
   * The commit count now, with what is kept emptied when it has moved. A reader keeps and uses
   * what is kept only while its count is still the caches' version: one that saw an older
   * count than the latest keeps nothing.
   */
  async function freshCommits(): Promise<number> {
    const commits = await latestCommits();
    if (commits > (caches.version ?? -1)) caches.moveTo(commits);
    return commits;
  }
  // Creates and reads by id are sent together: those that arrive while as many statements of
  // their kind as the pool has connections are under way go in one statement when one of
  // those ends, creates in one commit (one WAL flush). See docs/performance.md.
  const createBooks = batched(options.poolSize, (books: readonly NewBook[]) =>
    withStoreErrors(() => insertBooks(sql, books)),
  );
  const readBooks = batched(options.poolSize, (ids: readonly number[]) =>
    withStoreErrors(() => selectBooks(sql, ids)),
  );

  return {
    get: (id) =>
      withStoreErrors(async () => {
        // As listing pages: a book read under the latest count is kept until it moves.
        const commits = await freshCommits();
        const kept = commits === caches.version ? caches.books.get(id) : undefined;
        if (kept !== undefined) return kept;
        const book = await readBooks(id);
        if (book !== undefined && commits === caches.version) caches.books.set(book);
        return book;
      }),
    list: (query) =>
      withStoreErrors(async () => {
        // The count is read before the page, so a page kept under a count holds every commit
        // it counts; a later commit changes the count, and the pages kept are forgotten.
        const commits = await freshCommits();
        const key = JSON.stringify(query);
        const kept = commits === caches.version ? caches.pages.get(key) : undefined;
        if (kept !== undefined) return kept;
        const page = await listing.list(query);
        if (commits === caches.version) caches.pages.set(key, page);
        return page;
      }),
    count: (filters) => withStoreErrors(() => listing.count(filters)),
    create: createBooks,
    update: (id, changes) => withStoreErrors(() => updateBook(sql, id, changes)),
    remove: (id) => withStoreErrors(() => deleteBook(sql, id)),
    ping: () =>
      withStoreErrors(async () => {
        await sql`SELECT 1`;
      }),
    close: () => sql.end({ timeout: 5 }),
  };
}

/**
 * A pool on a schema `prepare` has brought up to date (by default: migrated), or
 * StoreOpenError naming what failed (never the password).
 */
export async function connect(
  url: string,
  options: PostgresOptions & { applicationName?: string; failure?: string },
  prepare: (sql: postgres.Sql) => Promise<void> = migrate,
): Promise<postgres.Sql> {
  const sql = postgres(url, {
    max: options.poolSize,
    connect_timeout: options.connectTimeoutSeconds,
    onnotice: () => {},
    // BIGINT ids travel as JSON numbers; ids stay below 2^53 (see parseBookId).
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: Number },
    },
    connection: { application_name: options.applicationName ?? "book-catalogue" },
  });
  try {
    await prepare(sql);
    return sql;
  } catch (error) {
    await sql.end({ timeout: 0 }).catch(() => {});
    const reason = isUnavailable(error)
      ? `cannot reach PostgreSQL at ${options.description}`
      : `${options.failure ?? "cannot prepare the PostgreSQL schema at"} ${options.description}`;
    throw new StoreOpenError(`${reason}: ${describeFailure(error, url)}`, { cause: error });
  }
}

/**
 * PostgreSQL's own words with their code ('database "x" does not exist (3D000)'): they say
 * what to do. They hold no password, and the URL's is blanked should one ever appear.
 */
function describeFailure(error: unknown, url: string): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === "string" && message !== "" ? message : String(error);
  const password = URL.canParse(url) ? decodeURIComponent(new URL(url).password) : "";
  const safe = password === "" ? text : text.replaceAll(password, "[redacted]");
  return typeof code === "string" && !safe.includes(code) ? `${safe} (${code})` : safe;
}
