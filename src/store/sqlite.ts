import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { Book, BookChanges, NewBook } from "../books/book.js";
import { pendingMigrations } from "./migrations.js";
import {
  type BookPage,
  type BookQuery,
  type BookStore,
  type SortField,
  StoreOpenError,
  StoreUnavailableError,
} from "./store.js";

// Lock contention past busy_timeout (SQLITE_BUSY, SQLITE_LOCKED and their extended codes) is a
// passing condition, not a server fault.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED)/;

function translate(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && UNAVAILABLE.test(code)
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

/** Memory the cached listing pages may hold (about 100,000 books). */
const LIST_CACHE_BYTES = 8 * 1024 * 1024;

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
export function openSqliteStore(path: string): BookStore {
  let db: Database.Database;
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    db = new Database(path);
    db.pragma("journal_mode = WAL");
    // FULL: a 201 must survive power loss, so each commit waits for its fsync.
    db.pragma("synchronous = FULL");
    db.pragma("busy_timeout = 5000");
    migrate(db);
  } catch (error) {
    throw new StoreOpenError(
      `cannot prepare the SQLite store at ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }

  const getStmt = db.prepare<[number], Book>(
    "SELECT id, title, author, year FROM books WHERE id = ?",
  );
  const insertStmt = db.prepare<[string, string, number]>(
    "INSERT INTO books (title, author, year) VALUES (?, ?, ?)",
  );
  const updateStmt = db.prepare<[string | null, string | null, number | null, number]>(
    `UPDATE books SET title = coalesce(?, title), author = coalesce(?, author),
       year = coalesce(?, year) WHERE id = ?`,
  );
  const removeStmt = db.prepare<[number]>("DELETE FROM books WHERE id = ?");
  const pingStmt = db.prepare("SELECT 1");

  // Listing pages kept until the catalogue changes: this connection's commits clear them, and
  // PRAGMA data_version moves when any other connection commits. A 1,000-book listing costs
  // over a millisecond of SQLite time; from here, a few microseconds.
  const dataVersionStmt = db.prepare<[], number>("PRAGMA data_version").pluck();
  const pages = new Map<string, BookPage>();
  let pagesVersion = -1;
  let pagesBytes = 0;
  const forgetPages = () => {
    pages.clear();
    pagesBytes = 0;
  };
  // One statement per combination of filters, prepared when first needed.
  const listStatements = new Map<string, Database.Statement<Record<string, unknown>, BookPage>>();
  function listStatement(kind: ListKind) {
    const key = JSON.stringify(kind);
    let statement = listStatements.get(key);
    if (statement === undefined) {
      statement = db.prepare<Record<string, unknown>, BookPage>(listSql(kind));
      listStatements.set(key, statement);
    }
    return statement;
  }

  function list(query: BookQuery): BookPage {
    const version = dataVersionStmt.get() as number;
    if (version !== pagesVersion) {
      forgetPages();
      pagesVersion = version;
    }
    const key = JSON.stringify(query);
    let page = pages.get(key);
    if (page === undefined) {
      const { kind, parameters } = listParameters(query);
      page = listStatement(kind).get(parameters) as BookPage;
      if (pagesBytes + page.json.length <= LIST_CACHE_BYTES) {
        pages.set(key, page);
        pagesBytes += page.json.length;
      }
    }
    return page;
  }

  let pending: PendingWrite[] = [];
  const commitAll = db.transaction((batch: PendingWrite[]) => batch.map((write) => write.apply()));

  function flush(): void {
    const batch = pending;
    pending = [];
    forgetPages();
    try {
      const results = commitAll.immediate(batch);
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
          write.resolve(commitAll.immediate([write])[0]);
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
    get: (id) => read(() => getStmt.get(id)),
    list: (query) => read(() => list(query)),
    create: (book: NewBook) =>
      write(() => {
        const { lastInsertRowid } = insertStmt.run(book.title, book.author, book.year);
        return { id: Number(lastInsertRowid), ...book };
      }),
    update: (id, changes: BookChanges) =>
      write(() => {
        const { title = null, author = null, year = null } = changes;
        return updateStmt.run(title, author, year, id).changes > 0 ? getStmt.get(id) : undefined;
      }),
    remove: (id) => write(() => removeStmt.run(id).changes > 0),
    ping: () => read(() => void pingStmt.get()),
    close: async () => {
      if (pending.length > 0) flush();
      if (db.open) db.close();
    },
  };
}

/** What shapes a listing statement: its order, whether it starts after a cursor, its filters. */
interface ListKind {
  sort: SortField;
  descending: boolean;
  cursor: boolean;
  text: boolean;
  author: boolean;
  year: boolean;
}

function listParameters(query: BookQuery) {
  const parameters: Record<string, unknown> = { after: query.after, limit: query.limit };
  if (query.afterKey !== undefined) parameters.afterKey = query.afterKey;
  // LIKE ignores case for ASCII letters; the text is matched literally.
  if (query.q !== undefined) parameters.like = `%${query.q.replace(/[\\%_]/g, "\\$&")}%`;
  if (query.author !== undefined) parameters.author = query.author;
  if (query.year !== undefined) parameters.year = query.year;
  const kind: ListKind = {
    sort: query.sort ?? "id",
    descending: query.descending ?? false,
    cursor: query.after !== 0,
    text: query.q !== undefined,
    author: query.author !== undefined,
    year: query.year !== undefined,
  };
  return { kind, parameters };
}

// Titles and authors sort without regard to (ASCII) case, as their indexes are built.
const COLLATION: Record<SortField, string> = {
  id: "",
  title: " COLLATE NOCASE",
  author: " COLLATE NOCASE",
  year: "",
};

function listSql(kind: ListKind): string {
  const conditions: string[] = [];
  if (kind.text) conditions.push("(title LIKE @like ESCAPE '\\' OR author LIKE @like ESCAPE '\\')");
  // The index is on the author without case; the second test keeps the match exact.
  if (kind.author) conditions.push("author = @author COLLATE NOCASE AND author = @author");
  if (kind.year) conditions.push("year = @year");
  const json = "json_object('id', id, 'title', title, 'author', author, 'year', year)";
  if (kind.sort === "id" && !kind.descending) {
    // The common case, kept to one pass: ascending ids, the last of them the greatest.
    conditions.unshift("id > @after");
    return `SELECT coalesce(group_concat(json, ',' ORDER BY id), '') AS json, count(*) AS count,
        coalesce(max(id), 0) AS lastId, NULL AS lastKey
      FROM (SELECT id, ${json} AS json FROM books WHERE ${conditions.join(" AND ")}
            ORDER BY id LIMIT @limit)`;
  }
  // Sorted by the field (or the id again), then the id; `last` is the page's last book.
  const field = `${kind.sort}${COLLATION[kind.sort]}`;
  const k = `k${COLLATION[kind.sort]}`;
  const [way, back, past] = kind.descending ? ["DESC", "ASC", "<"] : ["ASC", "DESC", ">"];
  if (kind.cursor) {
    conditions.unshift(
      // The collation goes on the cursor's side: on the column's, SQLite scans the index
      // from its start instead of seeking.
      kind.sort === "id"
        ? `id ${past} @after`
        : `(${kind.sort}, id) ${past} (@afterKey${COLLATION[kind.sort]}, @after)`,
    );
  }
  const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
  return `WITH page AS (
      SELECT id, ${kind.sort} AS k, ${json} AS json FROM books ${where}
      ORDER BY ${field} ${way}, id ${way} LIMIT @limit),
    last AS (SELECT id, k FROM page ORDER BY ${k} ${back}, id ${back} LIMIT 1)
    SELECT (SELECT coalesce(group_concat(json, ',' ORDER BY ${k} ${way}, id ${way}), '')
        FROM page) AS json,
      (SELECT count(*) FROM page) AS count,
      coalesce((SELECT id FROM last), 0) AS lastId,
      (SELECT ${kind.sort === "id" ? "NULL" : "k"} FROM last) AS lastKey`;
}

function migrate(db: Database.Database): void {
  // IMMEDIATE takes the write lock first, so two processes starting at once apply each step once.
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      applied_at TEXT NOT NULL DEFAULT (datetime('now'))
    ) STRICT`);
    const applied = db
      .prepare<[], { version: number }>("SELECT version FROM schema_migrations")
      .all()
      .map((row) => row.version);
    for (const step of pendingMigrations(applied)) {
      db.exec(step.sqlite);
      db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
    }
  }).immediate();
}
