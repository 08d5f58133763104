import postgres from "postgres";
import type { Book, BookChanges, NewBook } from "../rules/book.js";
import { type SearchTerm, searchWords } from "../rules/search.js";
import { pendingMigrations } from "./migrations.js";
import { createBookCache, createPageCache } from "./read-caches.js";
import {
  type BookFilters,
  type BookPage,
  type BookQuery,
  type BookStore,
  SearchTooBroadError,
  type SortField,
  StoreOpenError,
  StoreUnavailableError,
} from "./store.js";

export interface PostgresOptions {
  poolSize: number;
  connectTimeoutSeconds: number;
  /** The store's address without its password, for messages. */
  description: string;
  /** How long a search may hold a connection of the pool; past it, the search is refused. */
  searchTimeoutMs?: number;
}

// pg_advisory_xact_lock key shared by every instance that migrates this database.
const MIGRATION_LOCK = 0x626f6f6b; // "book"

// Node socket errors, postgres.js connection errors, and SQLSTATE classes 08 (connection
// exception) and 57P (server shutting down or starting): the store is away, not broken.
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "53300",
]);

function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return false;
  return UNAVAILABLE_CODES.has(code) || code.startsWith("08") || code.startsWith("57P");
}

async function run<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if ((error as { code?: unknown }).code === QUERY_CANCELED) {
      throw new SearchTooBroadError({ cause: error });
    }
    throw isUnavailable(error) ? new StoreUnavailableError({ cause: error }) : error;
  }
}

const QUERY_CANCELED = "57014";
const ignore = () => {};
/** Books written or read in one statement at most. */
const MAX_BATCH = 500;

/**
 * `runMany` for items that arrive while `slots` runs are under way, all in one run when a slot
 * is free (at most MAX_BATCH). A run that fails is tried again for each of its items alone,
 * so an item fails only for itself; an unavailable store fails them all at once.
 */
function batched<In, Out>(slots: number, runMany: (items: readonly In[]) => Promise<Out[]>) {
  const waiting: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  let running = 0;
  const start = () => {
    while (running < slots && waiting.length > 0) {
      const batch = waiting.splice(0, MAX_BATCH);
      running += 1;
      void settle(batch).finally(() => {
        running -= 1;
        start();
      });
    }
  };
  async function settle(batch: typeof waiting): Promise<void> {
    try {
      const outs = await runMany(batch.map((w) => w.item));
      for (const [i, w] of batch.entries()) w.resolve(outs[i] as Out);
    } catch (error) {
      if (batch.length === 1 || error instanceof StoreUnavailableError) {
        for (const w of batch) w.reject(error);
        return;
      }
      await Promise.all(
        batch.map((w) => runMany([w.item]).then(([out]) => w.resolve(out as Out), w.reject)),
      );
    }
  }
  return (item: In) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      start();
    });
}

/** A search matching at most this many books reads them all from the word index, then sorts. */
const FEW_MATCHES = 1_000;

/** A field's search words, as its tsvector holds them: one lexeme each. */
const lexemes = (text: string) => searchWords(text).join(" ");

/** The tsquery for the terms: each word a quoted lexeme, a prefix query where it may be one. */
const tsquery = (terms: readonly SearchTerm[]) =>
  terms.map(({ word, prefix }) => `'${word}'${prefix ? ":*" : ""}`).join(" & ");

export async function openPostgresStore(url: string, options: PostgresOptions): Promise<BookStore> {
  const { searchTimeoutMs = 1_000 } = options;
  const sql = postgres(url, {
    max: options.poolSize,
    connect_timeout: options.connectTimeoutSeconds,
    onnotice: () => {},
    // BIGINT ids travel as JSON numbers; ids stay below 2^53 (see parseBookId).
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: Number },
    },
    connection: { application_name: "book-catalogue" },
  });

  try {
    await migrate(sql);
  } catch (error) {
    await sql.end({ timeout: 0 }).catch(() => {});
    const reason = isUnavailable(error)
      ? `cannot reach PostgreSQL at ${options.description}`
      : `cannot prepare the PostgreSQL schema at ${options.description}`;
    const detail = (error as { code?: string }).code ?? (error as Error).message;
    throw new StoreOpenError(`${reason} (${detail})`, { cause: error });
  }

  type Fragment = postgres.PendingQuery<postgres.Row[]>;
  const and = (all: Fragment, condition: Fragment) => sql`${all} AND ${condition}`;
  // Each order's sort key, as its index is built, and a cursor's value made comparable to it.
  // Titles and authors compare as lower-case bytes ("C"): the order SQLite's NOCASE gives ASCII.
  const byText = (column: "title" | "author") => ({
    key: sql`lower(${sql(column)}) COLLATE "C"`,
    cursor: (value: string | number) => sql`lower(${String(value)}) COLLATE "C"`,
  });
  const SORT_KEYS: Record<SortField, { key: Fragment; cursor(value: string | number): Fragment }> =
    {
      id: { key: sql`id`, cursor: () => sql`NULL` },
      title: byText("title"),
      author: byText("author"),
      year: { key: sql`year`, cursor: (value) => sql`${Number(value)}::integer` },
    };

  // Listing pages and books read by id, kept until a commit changes books (see list and get).
  const pages = createPageCache();
  const books = createBookCache();
  let pagesCommits = -1;
  /** The commit count now, with the caches emptied when it has moved. */
  async function freshCommits(): Promise<number> {
    const commits = await latestCommits();
    if (commits > pagesCommits) {
      pages.clear();
      books.clear();
      pagesCommits = commits;
    }
    return commits;
  }

  // The count of commits that changed books. Listings that arrive together share one read,
  // but never one that began before they arrived: such a listing waits for the next read,
  // so it sees every commit answered before it. Under load this is one small query per
  // round trip, not one per listing (measured: GET /books of 1,000 books from 0.27 to
  // 0.55 of the baseline, in a quick run).
  let reading: Promise<number> | undefined;
  let nextRead: Promise<number> | undefined;
  const readCommits = async () => {
    const [row] = await sql<{ commits: number }[]>`
      SELECT coalesce(sum(commits), 0)::bigint AS commits FROM books_changes`;
    return row?.commits ?? 0;
  };
  function latestCommits(): Promise<number> {
    if (reading === undefined) {
      reading = readCommits().finally(() => {
        reading = undefined;
      });
      return reading;
    }
    nextRead ??= reading.then(ignore, ignore).then(() => {
      nextRead = undefined;
      return latestCommits();
    });
    return nextRead;
  }

  function readSearchable(query: BookQuery): Promise<BookPage> {
    if (query.search === undefined || query.search.length === 0) return readPage(sql, query);
    // A search runs with a time limit, so none holds a connection of the pool for long.
    return sql.begin(async (tx) => {
      await tx`SELECT set_config('statement_timeout', ${String(searchTimeoutMs)}, true)`;
      return readPage(tx, query);
    });
  }

  /** One page of a listing, read through `db`: the pool, or a search's transaction. */
  async function readPage(db: postgres.Sql | postgres.TransactionSql, query: BookQuery) {
    const conditions: Fragment[] = [];
    let books = sql`books`;
    if (query.search !== undefined && query.search.length > 0) {
      const match = sql`(title_words || author_words) @@ ${tsquery(query.search)}::tsquery`;
      // The planner cannot tell a rare word from a common one (prefix queries, and words
      // below the statistics' most common ones, get one estimate), and walking the order's
      // index for a rare word reads the whole table. So count up to a bound first: few
      // matches are read through the word index alone (OFFSET 0 keeps that subquery planned
      // apart), then sorted; many are found soon enough walking the order's index.
      const [probe] = await db<{ n: number }[]>`SELECT count(*)::integer AS n
        FROM (SELECT 1 FROM books WHERE ${match} LIMIT ${FEW_MATCHES + 1}) m`;
      if ((probe?.n ?? 0) <= FEW_MATCHES) {
        books = sql`(SELECT id, title, author, year FROM books WHERE ${match} OFFSET 0) AS books`;
      } else {
        conditions.push(match);
      }
    }
    conditions.push(...filterConditions(query));
    const sort = query.sort ?? "id";
    if (sort === "id" && !query.descending) {
      // The common case, kept to one pass: ascending ids, the last of them the greatest.
      const where = [sql`id > ${query.after}`, ...conditions].reduce(and);
      // row_to_json writes compact JSON, as the SQLite store and the serializer do.
      const [page] = await db<BookPage[]>`SELECT
          coalesce(string_agg(row_to_json(b)::text, ',' ORDER BY b.id), '') AS json,
          count(*)::integer AS count, coalesce(max(b.id), 0) AS "lastId", NULL AS "lastKey"
        FROM (SELECT id, title, author, year FROM ${books}
              WHERE ${where} ORDER BY id LIMIT ${query.limit}) b`;
      return page as BookPage;
    }
    const { key, cursor } = SORT_KEYS[sort];
    const [way, back] = query.descending ? [sql`DESC`, sql`ASC`] : [sql`ASC`, sql`DESC`];
    if (query.after !== 0) {
      const past = query.descending ? sql`<` : sql`>`;
      conditions.unshift(
        sort === "id"
          ? sql`id ${past} ${query.after}`
          : sql`(${key}, id) ${past} (${cursor(query.afterKey ?? "")}, ${query.after})`,
      );
    }
    const where = conditions.length > 0 ? sql`WHERE ${conditions.reduce(and)}` : sql``;
    const value = sort === "id" ? sql`NULL::text` : sql(sort);
    // Sorted by s (the field's sort key, or the id again), then the id.
    const [page] = await db<BookPage[]>`WITH page AS (
        SELECT id, title, author, year, ${value} AS k, ${key} AS s FROM ${books} ${where}
        ORDER BY ${key} ${way}, id ${way} LIMIT ${query.limit})
      SELECT coalesce(string_agg(row_to_json(b)::text, ',' ORDER BY p.s ${way}, p.id ${way}), '')
          AS json,
        count(*)::integer AS count,
        coalesce((array_agg(p.id ORDER BY p.s ${back}, p.id ${back}))[1], 0) AS "lastId",
        (array_agg(p.k ORDER BY p.s ${back}, p.id ${back}))[1] AS "lastKey"
      FROM page p, LATERAL (SELECT p.id, p.title, p.author, p.year) b`;
    return page as BookPage;
  }

  /** The conditions of the author and year filters. */
  function filterConditions(filters: BookFilters): Fragment[] {
    const conditions: Fragment[] = [];
    if (filters.author !== undefined) {
      // The index is on the author without case; the second test keeps the match exact.
      conditions.push(
        sql`lower(author) COLLATE "C" = lower(${filters.author}) AND author = ${filters.author}`,
      );
    }
    if (filters.year !== undefined) conditions.push(sql`year = ${filters.year}`);
    return conditions;
  }

  // Creates and reads by id are sent together: those that arrive while as many statements of
  // their kind as the pool has connections are under way go in one statement when one of
  // those ends, creates in one commit (one WAL flush). A statement each held POST /book to 0.10 of the baseline on 2 cores, and GET
  // /book/{id} of books not kept to 0.15; see docs/performance.md.
  const createBooks = batched(options.poolSize, (books: readonly NewBook[]) =>
    run(() => insertBooks(books)),
  );
  const readBooks = batched(options.poolSize, (ids: readonly number[]) =>
    run(() => selectBooks(ids)),
  );
  /** Writes the books in one statement; each one's id comes with its place in the list. */
  async function insertBooks(batch: readonly NewBook[]): Promise<Book[]> {
    const ids = await sql<{ id: number }[]>`WITH input AS (
        SELECT nextval(pg_get_serial_sequence('books', 'id')) AS id, n, title, author, year,
          tw, aw
        FROM unnest(${batch.map((b) => b.title)}::text[], ${batch.map((b) => b.author)}::text[],
          ${batch.map((b) => b.year)}::integer[], ${batch.map((b) => lexemes(b.title))}::text[],
          ${batch.map((b) => lexemes(b.author))}::text[])
          WITH ORDINALITY AS t(title, author, year, tw, aw, n)
      ), added AS (
        INSERT INTO books (id, title, author, year, title_words, author_words)
        OVERRIDING SYSTEM VALUE
        SELECT id, title, author, year, array_to_tsvector(string_to_array(tw, ' ')),
          array_to_tsvector(string_to_array(aw, ' '))
        FROM input
      )
      SELECT id FROM input ORDER BY n`;
    return batch.map((book, i) => ({ id: ids[i]?.id as number, ...book }));
  }
  /** The books of these ids, in their order; undefined for an id no book has. */
  async function selectBooks(ids: readonly number[]): Promise<(Book | undefined)[]> {
    const found = await sql<Book[]>`SELECT id, title, author, year FROM books
      WHERE id = ANY(${ids as number[]}::bigint[])`;
    const byId = new Map(found.map((book) => [book.id, book]));
    return ids.map((id) => byId.get(id));
  }

  return {
    get: (id) =>
      run(async () => {
        // As listing pages (below): books that arrive together share one read of the commit
        // count, and a book read under the latest count is kept until it moves. Measured on
        // 2 cores: GET /book/{id} from 0.15 to 0.64 of the baseline.
        const commits = await freshCommits();
        const kept = commits === pagesCommits ? books.get(id) : undefined;
        if (kept !== undefined) return kept;
        const book = await readBooks(id);
        if (book !== undefined && commits === pagesCommits) books.set(book);
        return book;
      }),
    list: (query) =>
      run(async () => {
        // Pages are kept while no commit has changed books, in any process or instance. The
        // count is read before the page, so a page kept under a count holds every commit it
        // counts; a later commit changes the count, and the pages kept are forgotten.
        const commits = await freshCommits();
        const key = JSON.stringify(query);
        const kept = commits === pagesCommits ? pages.get(key) : undefined;
        if (kept !== undefined) return kept;
        const page = await readSearchable(query);
        // A reader that saw an older count than the latest one keeps nothing.
        if (commits === pagesCommits) pages.set(key, page);
        return page;
      }),
    count: (filters) =>
      run(async () => {
        const conditions = filterConditions(filters);
        const count = async (db: postgres.Sql | postgres.TransactionSql) => {
          const where = conditions.length > 0 ? sql`WHERE ${conditions.reduce(and)}` : sql``;
          const [row] = await db<{ count: string }[]>`SELECT count(*) AS count FROM books ${where}`;
          return Number(row?.count ?? 0);
        };
        if (filters.search === undefined || filters.search.length === 0) return count(sql);
        // Every match is read to count it: under the searches' time limit.
        conditions.push(sql`(title_words || author_words) @@ ${tsquery(filters.search)}::tsquery`);
        return sql.begin(async (tx) => {
          await tx`SELECT set_config('statement_timeout', ${String(searchTimeoutMs)}, true)`;
          return count(tx);
        });
      }),
    create: createBooks,
    update: (id, changes: BookChanges) =>
      run(async () => {
        const [updated] = await sql<Book[]>`UPDATE books SET
            title = coalesce(${changes.title ?? null}::text, title),
            author = coalesce(${changes.author ?? null}::text, author),
            year = coalesce(${changes.year ?? null}::integer, year),
            title_words = coalesce(array_to_tsvector(string_to_array(
              ${changes.title === undefined ? null : lexemes(changes.title)}::text, ' ')), title_words),
            author_words = coalesce(array_to_tsvector(string_to_array(
              ${changes.author === undefined ? null : lexemes(changes.author)}::text, ' ')), author_words)
          WHERE id = ${id} RETURNING id, title, author, year`;
        return updated;
      }),
    remove: (id) => run(async () => (await sql`DELETE FROM books WHERE id = ${id}`).count > 0),
    ping: () =>
      run(async () => {
        await sql`SELECT 1`;
      }),
    close: () => sql.end({ timeout: 5 }),
  };
}

async function migrate(sql: postgres.Sql): Promise<void> {
  await sql.begin(async (tx) => {
    // Instances starting together wait here in turn; the first applies, the rest find it done.
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`;
    const rows = await tx<{ version: number }[]>`SELECT version FROM schema_migrations`;
    for (const step of pendingMigrations(rows.map((row) => row.version))) {
      await tx.unsafe(step.postgres);
      if (step.indexWords) await indexWords(tx);
      await tx`INSERT INTO schema_migrations (version) VALUES (${step.version})`;
    }
  });
}

/** Writes every book's search words, a thousand books a statement, in id order. */
async function indexWords(tx: postgres.TransactionSql): Promise<void> {
  for (let after = 0; ; ) {
    const books = await tx<{ id: number; title: string; author: string }[]>`
      SELECT id, title, author FROM books WHERE id > ${after} ORDER BY id LIMIT 1000`;
    const last = books.at(-1);
    if (last === undefined) return;
    await tx`UPDATE books SET
        title_words = array_to_tsvector(string_to_array(w.title, ' ')),
        author_words = array_to_tsvector(string_to_array(w.author, ' '))
      FROM unnest(${books.map((b) => b.id)}::bigint[], ${books.map((b) => lexemes(b.title))}::text[],
        ${books.map((b) => lexemes(b.author))}::text[]) AS w(id, title, author)
      WHERE books.id = w.id`;
    after = last.id;
  }
}
