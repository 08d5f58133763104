import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import {
  DatabaseSync,
  type SQLInputValue,
  type SQLOutputValue,
  type StatementSync,
} from "node:sqlite";
import type { Book, BookChanges, NewBook } from "../rules/book.js";
import { matchesTerms, type SearchTerm, searchWords } from "../rules/search.js";
import { pendingMigrations } from "./migrations.js";
import { createBookCache, createPageCache } from "./page-cache.js";
import {
  type BookFilters,
  type BookPage,
  type BookQuery,
  type BookStore,
  type SortField,
  StoreOpenError,
  StoreUnavailableError,
} from "./store.js";

// Lock contention past busy_timeout (SQLITE_BUSY, SQLITE_LOCKED and their extended codes) is a
// passing condition, not a server fault.
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

function translate(error: unknown): unknown {
  const code = (error as { errcode?: unknown }).errcode;
  const primary = typeof code === "number" ? code & 0xff : undefined;
  return primary === SQLITE_BUSY || primary === SQLITE_LOCKED
    ? new StoreUnavailableError({ cause: error })
    : error;
}

/** Runs a read, turning lock timeouts into StoreUnavailableError. */
function read<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(translate(error));
  }
}

/** How much work one search may do; tests make it small. */
export interface SearchBounds {
  /**
   * A search that matches at most this many books is answered exactly from its matches: they
   * are read from the index, then filtered and sorted, a few milliseconds at most.
   */
  fewMatches: number;
  /**
   * A search that matches more reads the listing's order (the id order of the word index, or
   * the sort field's index) at most this many books at a time, and a page that is not full by
   * then is answered as it is, marked partial, with the cursor on the last book examined. So
   * no search holds the event loop for more than a few milliseconds, whatever it asks.
   */
  window: number;
}

// Measured at a million books: the first read at most 5 ms, the second (books tested here,
// one by one, for a search of many but sparse matches sorted by a field) about 10 ms.
const SEARCH_BOUNDS: SearchBounds = { fewMatches: 5_000, window: 2_000 };

/** The words the search index keeps for a book. */
const indexedWords = (book: { title: string; author: string }) =>
  [...new Set([...searchWords(book.title), ...searchWords(book.author)])].join(" ");

/** The FTS5 query for the terms: each a quoted word, a prefix query where it may be one. */
const matchExpression = (terms: readonly SearchTerm[]) =>
  terms.map(({ word, prefix }) => `"${word}"${prefix ? "*" : ""}`).join(" ");

interface PendingWrite {
  apply: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Opens (creating when absent) the SQLite database at `path`, or in memory for ":memory:",
 * and brings its schema up to date.
 *
 * Writes are group-committed: those that arrive while the event loop is busy are applied in
 * one transaction, so they share one fsync, and each resolves only after that commit.
 * Statements never use RETURNING: SQLite runs its WAL auto-checkpoint only when a statement
 * steps to completion, so RETURNING writes let the WAL grow without bound.
 */
export function openSqliteStore(path: string, bounds = SEARCH_BOUNDS): BookStore {
  let db: DatabaseSync;
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    db = new DatabaseSync(path);
    // FULL: a 201 must survive power loss, so each commit waits for its fsync.
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000");
    migrate(db);
  } catch (error) {
    throw new StoreOpenError(
      `cannot prepare the SQLite store at ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }

  // Reads of single books that arrive in one turn of the event loop share one read
  // transaction, ended at the end of the turn or before the next write. Each transaction of
  // its own locks and unlocks the WAL's read mark and checks the file (three system calls,
  // 2.3 µs of the 3.1 µs a read costs), a fifth of GET /book/{id} throughput. The snapshot is
  // never older than the turn: books are read as their requests are parsed, in the poll
  // phase, and the transaction ends in the check phase that follows.
  // Their run() reports the last inserted rowid too (see writeStatement).
  const beginStmt = writeStatement(db, "BEGIN");
  const commitStmt = writeStatement(db, "COMMIT");
  let sharedRead = false;
  const endSharedRead = () => {
    if (!sharedRead) return;
    sharedRead = false;
    // Asked of the connection, not assumed: a BEGIN that failed leaves nothing to end.
    if (db.isTransaction) commitStmt.run();
  };
  const getStmt = db.prepare("SELECT id, title, author, year FROM books WHERE id = ?");
  // node:sqlite rows have no prototype; callers get a plain Book.
  const getBook = (id: number): Book | undefined => {
    const row = getStmt.get(id);
    return row && ({ id: row.id, title: row.title, author: row.author, year: row.year } as Book);
  };
  const insertStmt = writeStatement(db, "INSERT INTO books (title, author, year) VALUES (?, ?, ?)");
  const updateStmt = writeStatement(
    db,
    `UPDATE books SET title = coalesce(?, title), author = coalesce(?, author),
       year = coalesce(?, year) WHERE id = ?`,
  );
  const removeStmt = writeStatement(db, "DELETE FROM books WHERE id = ?");
  const pingStmt = db.prepare("SELECT 1");
  const indexStmt = writeStatement(db, "INSERT INTO books_search (rowid, words) VALUES (?, ?)");
  const unindexStmt = writeStatement(db, "DELETE FROM books_search WHERE rowid = ?");
  const matchesStmt = db.prepare(
    "SELECT rowid AS id FROM books_search WHERE books_search MATCH ? LIMIT ?",
  );
  // Listing pages kept until the catalogue changes: this connection's commits clear them, and
  // PRAGMA data_version moves when any other connection commits. A 1,000-book listing costs
  // over a millisecond of SQLite time; from here, a few microseconds.
  const dataVersionStmt = db.prepare("PRAGMA data_version");
  const dataVersion = () => (dataVersionStmt.get() as { data_version: number }).data_version;
  const pages = createPageCache();
  let pagesVersion = -1;
  // Books read by id are kept the same way, checked once a turn as the shared read begins
  // (below): a kept book costs a Map lookup, where a read costs SQLite about 1 µs and makes
  // a new object.
  const books = createBookCache();
  let booksVersion = -1;
  const forgetReads = () => {
    pages.clear();
    books.clear();
  };
  // Listing, search and count statements: one per shape, prepared when first needed, so a
  // request builds no SQL.
  const statements = new Map<string, StatementSync>();
  function statementFor<Shape>(toSql: (shape: Shape) => string, shape: Shape) {
    const key = `${toSql.name} ${JSON.stringify(shape)}`;
    let statement = statements.get(key);
    if (statement === undefined) {
      statement = db.prepare(toSql(shape));
      statements.set(key, statement);
    }
    return statement;
  }

  // A search counts its matches in the word index: every one of them is read, which is why
  // a total is computed only when asked for.
  function count(filters: BookFilters): number {
    const search = filters.search !== undefined && filters.search.length > 0;
    const shape = {
      search,
      author: filters.author !== undefined,
      year: filters.year !== undefined,
    };
    const statement = statementFor(countSql, shape);
    const parameters: Record<string, SQLInputValue> = {};
    if (search) parameters.match = matchExpression(filters.search ?? []);
    if (filters.author !== undefined) parameters.author = filters.author;
    if (filters.year !== undefined) parameters.year = filters.year;
    return (statement.get(parameters) as { count: number }).count;
  }

  function list(query: BookQuery): BookPage {
    const version = dataVersion();
    if (version !== pagesVersion) {
      pages.clear();
      pagesVersion = version;
    }
    const key = JSON.stringify(query);
    let page = pages.get(key);
    if (page === undefined) {
      page = readPage(query);
      pages.set(key, page);
    }
    return page;
  }

  function readPage(query: BookQuery): BookPage {
    if (query.search === undefined || query.search.length === 0) {
      const { kind, parameters } = listParameters(query);
      return { ...(statementFor(listSql, kind).get(parameters) as unknown as BookPage) };
    }
    const match = matchExpression(query.search);
    const ids = matchesStmt.all(match, bounds.fewMatches + 1).map((row) => row.id as number);
    if (ids.length <= bounds.fewMatches) {
      const { kind, parameters } = listParameters(query, JSON.stringify(ids));
      return { ...(statementFor(listSql, kind).get(parameters) as unknown as BookPage) };
    }
    return scanPage(query, query.search, match);
  }

  /**
   * A search with many matches: books in the listing's order from the cursor, at most
   * `bounds.window` of them, tested here one by one until the page is full. By id the word
   * index gives them (each matches; the filters may still drop some); by a field, the field's
   * index. Reading stops at the page's last book, so a common word costs a page's worth.
   */
  function scanPage(query: BookQuery, terms: readonly SearchTerm[], match: string): BookPage {
    const kind: ListKind = { ...listKind(query), author: false, year: false };
    const parameters: Record<string, SQLInputValue> = { window: bounds.window };
    if (kind.cursor) parameters.after = query.after;
    if (kind.cursor && kind.sort !== "id") parameters.afterKey = query.afterKey ?? null;
    if (kind.sort === "id") parameters.match = match;
    const statement = statementFor(scanSql, kind);
    const books: Book[] = [];
    let examined = 0;
    let last: Record<string, SQLOutputValue> | undefined;
    for (const row of statement.iterate(parameters)) {
      examined += 1;
      last = row;
      const book = { id: row.id, title: row.title, author: row.author, year: row.year } as Book;
      if (query.author !== undefined && book.author !== query.author) continue;
      if (query.year !== undefined && book.year !== query.year) continue;
      if (kind.sort !== "id" && !matchesTerms(terms, book.title, book.author)) continue;
      books.push(book);
      if (books.length === query.limit) break;
    }
    const key = (row: Record<string, SQLOutputValue>) =>
      kind.sort === "id" ? null : (row[kind.sort] as string | number);
    const lastBook = books.at(-1);
    const page: BookPage = {
      json: books.map((book) => JSON.stringify(book)).join(","),
      count: books.length,
      lastId: lastBook?.id ?? 0,
      lastKey:
        lastBook === undefined ? null : key(lastBook as unknown as Record<string, SQLOutputValue>),
    };
    if (examined === bounds.window && books.length < query.limit && last !== undefined) {
      return { ...page, lastId: last.id as number, lastKey: key(last), partial: true };
    }
    return page;
  }

  let pending: PendingWrite[] = [];
  const commitAll = (batch: PendingWrite[]) => transaction(db, () => batch.map((w) => w.apply()));

  function flush(): void {
    const batch = pending;
    pending = [];
    endSharedRead();
    forgetReads();
    try {
      const results = commitAll(batch);
      for (const [i, write] of batch.entries()) write.resolve(results[i]);
    } catch (error) {
      const translated = translate(error);
      if (batch.length === 1 || translated instanceof StoreUnavailableError) {
        for (const write of batch) write.reject(translated);
        return;
      }
      // One write's failure must not fail the others: replay them one by one.
      for (const write of batch) {
        try {
          write.resolve(commitAll([write])[0]);
        } catch (single) {
          write.reject(translate(single));
        }
      }
    }
  }

  function write<T>(apply: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ apply, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  return {
    get: (id) =>
      read(() => {
        if (!sharedRead) {
          // Marked first, so the end of the turn comes whatever BEGIN does.
          sharedRead = true;
          setImmediate(endSharedRead);
          beginStmt.run();
          // The transaction's first read: its snapshot's version.
          const version = dataVersion();
          if (version !== booksVersion) {
            books.clear();
            booksVersion = version;
          }
        }
        const kept = books.get(id);
        if (kept !== undefined) return kept;
        const book = getBook(id);
        if (book !== undefined) books.set(book);
        return book;
      }),
    list: (query) => read(() => list(query)),
    count: (filters) => read(() => count(filters)),
    create: (book: NewBook) =>
      write(() => {
        const id = Number(insertStmt.run(book.title, book.author, book.year).lastInsertRowid);
        indexStmt.run(id, indexedWords(book));
        return { id, ...book };
      }),
    update: (id, changes: BookChanges) =>
      write(() => {
        const { title = null, author = null, year = null } = changes;
        if (updateStmt.run(title, author, year, id).changes === 0n) return undefined;
        const book = getBook(id) as Book;
        if (title !== null || author !== null) {
          unindexStmt.run(id);
          indexStmt.run(id, indexedWords(book));
        }
        return book;
      }),
    remove: (id) =>
      write(() => {
        if (removeStmt.run(id).changes === 0n) return false;
        unindexStmt.run(id);
        return true;
      }),
    ping: () => read(() => void pingStmt.get()),
    close: async () => {
      if (pending.length > 0) flush();
      if (db.isOpen) {
        endSharedRead();
        db.close();
      }
    },
  };
}

/** What shapes a listing statement: its order, whether it starts after a cursor, its filters. */
interface ListKind {
  sort: SortField;
  descending: boolean;
  cursor: boolean;
  /** A search whose few matching ids are given. */
  few: boolean;
  author: boolean;
  year: boolean;
}

function listKind(query: BookQuery, ids?: string): ListKind {
  return {
    sort: query.sort ?? "id",
    descending: query.descending ?? false,
    cursor: query.after !== 0,
    few: ids !== undefined,
    author: query.author !== undefined,
    year: query.year !== undefined,
  };
}

/** The statement's kind and parameters; `ids`, the JSON ids of a search's few matches. */
function listParameters(query: BookQuery, ids?: string) {
  const kind = listKind(query, ids);
  // Only the parameters the statement names: node:sqlite refuses any other.
  const parameters: Record<string, SQLInputValue> = { limit: query.limit };
  if (kind.cursor || (kind.sort === "id" && !kind.descending)) parameters.after = query.after;
  if (kind.cursor && kind.sort !== "id") parameters.afterKey = query.afterKey ?? null;
  if (ids !== undefined) parameters.ids = ids;
  if (query.author !== undefined) parameters.author = query.author;
  if (query.year !== undefined) parameters.year = query.year;
  return { kind, parameters };
}

// Titles and authors sort without regard to (ASCII) case, as their indexes are built.
const COLLATION: Record<SortField, string> = {
  id: "",
  title: " COLLATE NOCASE",
  author: " COLLATE NOCASE",
  year: "",
};

/** The condition that starts a sorted listing after its cursor. */
function cursorCondition(kind: ListKind, past: string): string {
  // The collation goes on the cursor's side: on the column's, SQLite scans the index from
  // its start instead of seeking.
  return kind.sort === "id"
    ? `id ${past} @after`
    : `(${kind.sort}, id) ${past} (@afterKey${COLLATION[kind.sort]}, @after)`;
}

/** The conditions of the author and year filters. */
function filterConditions(kind: { author: boolean; year: boolean }): string[] {
  const conditions: string[] = [];
  // The index is on the author without case; the second test keeps the match exact.
  if (kind.author) conditions.push("author = @author COLLATE NOCASE AND author = @author");
  if (kind.year) conditions.push("year = @year");
  return conditions;
}

function listSql(kind: ListKind): string {
  const conditions = filterConditions(kind);
  // A search with few matches reads just those books, by id, then filters and sorts them.
  const books = kind.few
    ? "(SELECT books.* FROM json_each(@ids) AS m CROSS JOIN books ON books.id = m.value) AS books"
    : "books";
  const json = "json_object('id', id, 'title', title, 'author', author, 'year', year)";
  if (kind.sort === "id" && !kind.descending) {
    // The common case, kept to one pass: ascending ids, the last of them the greatest.
    conditions.unshift("id > @after");
    return `SELECT coalesce(group_concat(json, ',' ORDER BY id), '') AS json, count(*) AS count,
        coalesce(max(id), 0) AS lastId, NULL AS lastKey
      FROM (SELECT id, ${json} AS json FROM ${books} WHERE ${conditions.join(" AND ")}
            ORDER BY id LIMIT @limit)`;
  }
  // Sorted by the field (or the id again), then the id; `last` is the page's last book.
  const field = `${kind.sort}${COLLATION[kind.sort]}`;
  const k = `k${COLLATION[kind.sort]}`;
  const [way, back, past] = kind.descending ? ["DESC", "ASC", "<"] : ["ASC", "DESC", ">"];
  if (kind.cursor) conditions.unshift(cursorCondition(kind, past));
  const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
  return `WITH page AS (
      SELECT id, ${kind.sort} AS k, ${json} AS json FROM ${books} ${where}
      ORDER BY ${field} ${way}, id ${way} LIMIT @limit),
    last AS (SELECT id, k FROM page ORDER BY ${k} ${back}, id ${back} LIMIT 1)
    SELECT (SELECT coalesce(group_concat(json, ',' ORDER BY ${k} ${way}, id ${way}), '')
        FROM page) AS json,
      (SELECT count(*) FROM page) AS count,
      coalesce((SELECT id FROM last), 0) AS lastId,
      (SELECT ${kind.sort === "id" ? "NULL" : "k"} FROM last) AS lastKey`;
}

/** Counts the books matching a search, an author, a year, or any of them together. */
function countSql(shape: { search: boolean; author: boolean; year: boolean }): string {
  const where = filterConditions(shape);
  if (shape.search && where.length === 0) {
    return "SELECT count(*) AS count FROM books_search WHERE books_search MATCH @match";
  }
  if (shape.search) {
    where.unshift("id IN (SELECT rowid FROM books_search WHERE books_search MATCH @match)");
  }
  return `SELECT count(*) AS count FROM books${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""}`;
}

/** The books a search with many matches examines, in the listing's order, from the cursor. */
function scanSql(kind: ListKind): string {
  const [way, past] = kind.descending ? ["DESC", "<"] : ["ASC", ">"];
  if (kind.sort === "id") {
    const from = kind.cursor ? `AND rowid ${past} @after` : "";
    return `SELECT books.id AS id, title, author, year
      FROM (SELECT rowid AS sid FROM books_search WHERE books_search MATCH @match ${from}
            ORDER BY rowid ${way} LIMIT @window)
      CROSS JOIN books ON books.id = sid`;
  }
  const where = kind.cursor ? `WHERE ${cursorCondition(kind, past)}` : "";
  return `SELECT id, title, author, year FROM books ${where}
    ORDER BY ${kind.sort}${COLLATION[kind.sort]} ${way}, id ${way} LIMIT @window`;
}

/**
 * A statement that writes. Its run() reports SQLite's last inserted rowid whatever the
 * statement, and FTS5 leaves there the rowids of its own pages (a tombstone page's is above
 * 2^53): read as a number, Node 26 throws RangeError and the write fails. As BigInts they
 * read safely; ids themselves stay below 2^53 (see parseBookId).
 */
function writeStatement(db: DatabaseSync, sql: string): StatementSync {
  const statement = db.prepare(sql);
  statement.setReadBigInts(true);
  return statement;
}

/**
 * Runs `body` in one IMMEDIATE transaction: the write lock is taken first, so a busy database
 * fails here, before any change, and two processes never interleave their steps.
 */
function transaction<T>(db: DatabaseSync, body: () => T): T {
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

function migrate(db: DatabaseSync): void {
  // Two processes starting at once apply each step once.
  transaction(db, () => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      applied_at TEXT NOT NULL DEFAULT (datetime('now'))
    ) STRICT`);
    const applied = db
      .prepare("SELECT version FROM schema_migrations")
      .all()
      .map((row) => row.version as number);
    for (const step of pendingMigrations(applied)) {
      db.exec(step.sqlite);
      if (step.indexWords) {
        const index = writeStatement(db, "INSERT INTO books_search (rowid, words) VALUES (?, ?)");
        for (const book of db.prepare("SELECT id, title, author FROM books").iterate()) {
          index.run(book.id as number, indexedWords(book as { title: string; author: string }));
        }
      }
      db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
    }
  });
}
