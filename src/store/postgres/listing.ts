// Listing pages, searches and counts on PostgreSQL: one statement per page, searches bounded
// in the books they test and under one time limit for all the reads of a request.

import pg from "pg";
import sql, { empty, raw, type Sql } from "sql-template-tag";
import { type SearchTerm, sortKey } from "../../rules/search.js";
import {
  type BookFilters,
  type BookPage,
  type BookQuery,
  SearchTooBroadError,
  type SortField,
  searchTimeLeft,
} from "../store.js";
import { QUERY_CANCELED } from "./errors.js";
import type { Db, Queryable } from "./pool.js";
import { tsquery } from "./search-index.js";

/** How much work one search may do; tests make it small. */
export interface SearchBounds {
  /** A page a search's window does not fill, with at most this many matches, reads them all. */
  fewMatches: number;
  /** A search tests at most this many books a page in the listing's order (see readPage). */
  window: number;
}

export const SEARCH_BOUNDS: SearchBounds = { fewMatches: 1_000, window: 2_000 };

type Fragment = Sql;
const and = (all: Fragment, condition: Fragment) => sql`${all} AND ${condition}`;
interface SortKey {
  key: Fragment;
  cursor(value: string | number): Fragment;
}
const SORT_KEYS = sortKeysOf();

/**
 * The books with the id and year of books_years, whose index orders and filters by year (a
 * year's index on books would keep its updates from being HOT: migration 9). Triggers keep
 * the two tables equal in every statement.
 */
const BOOKS_BY_YEAR = raw(`(SELECT y.id, b.title, b.author, y.year, b.title_words,
    b.author_words, b.title_key, b.author_key
  FROM books_years y JOIN books b ON b.id = y.id) AS books`);
/** Where a listing of this order and these filters reads its books. */
const booksFor = (sort: SortField | undefined, filters: BookFilters): Fragment =>
  sort === "year" || filters.year !== undefined ? BOOKS_BY_YEAR : raw("books");

export interface Listing {
  /** One page of the listing; a search runs within its time limit. */
  list(query: BookQuery): Promise<BookPage>;
  count(filters: BookFilters): Promise<number>;
}

export function createListing(
  db: Db,
  searchTimeoutMs: number,
  bounds: SearchBounds = SEARCH_BOUNDS,
): Listing {
  const limited = <T>(filters: BookFilters, read: (tx: Queryable) => Promise<T>) =>
    searchWithin(db, filters, searchTimeoutMs, read);
  return {
    list: (query) =>
      query.search === undefined || query.search.length === 0
        ? readPage(db, query, bounds)
        : limited(query, (tx) => readPage(tx, query, bounds)),
    count(filters) {
      const conditions = filterConditions(filters);
      const count = async (tx: Queryable) => {
        const where = conditions.length > 0 ? sql`WHERE ${conditions.reduce(and)}` : empty;
        const [row] = await tx.query<{ count: number }>(
          sql`SELECT count(*) AS count FROM ${booksFor(undefined, filters)} ${where}`,
        );
        return Number(row?.count ?? 0);
      };
      if (filters.search === undefined || filters.search.length === 0) return count(db);
      // Every match is read to count it: under the searches' time limit.
      conditions.push(sql`(title_words || author_words) @@ ${tsquery(filters.search)}::tsquery`);
      return limited(filters, count);
    },
  };
}

/** What a search's transaction sets, sent with its BEGIN (see searchWithin). */
const SEARCH_SETTINGS = { enable_seqscan: "off", plan_cache_mode: "force_custom_plan" };

/**
 * Runs `read` in a transaction whose statements end, together, within `limitMs` of
 * when the search began (searchTimeLeft): each is given what is left as its
 * statement_timeout, and none starts once nothing is left. Only the search's own reads spend
 * that time: the wait for a connection and for the transaction to begin (a store restarting,
 * a pooler holding the query) is the store's, counted in `searchWaited`. A read PostgreSQL ends at the limit is too
 * broad; one that waited for a lock until nearly then (its lock_timeout, a tenth shorter) is
 * the store's, and answers 503 as any other wait for it. The planner is kept off scans of the
 * whole table, and named statements off generic plans: it took a scan for a rare word's
 * matches, more so on a table never analysed, where the word index answers in a few
 * milliseconds (docs/postgresql.md, "Search plans"). The settings end with the transaction,
 * so they hold through a transaction pooler too.
 */
async function searchWithin<T>(
  db: Db,
  { searchStarted, searchWaited = { ms: 0 } }: BookFilters,
  limitMs: number,
  read: (tx: Queryable) => Promise<T>,
): Promise<T> {
  const started = searchStarted ?? Date.now();
  searchTimeLeft(started, limitMs, searchWaited);
  const asked = Date.now();
  return db.transaction(
    (tx) => {
      searchWaited.ms += Date.now() - asked;
      return read({
        async query<R>(statement: Sql | string) {
          const timeoutMs = Math.ceil(searchTimeLeft(started, limitMs, searchWaited));
          const lockTimeoutMs = Math.max(1, Math.floor(timeoutMs * 0.9));
          // One statement, bounded in PostgreSQL too (a script would keep the bound before it).
          const one = typeof statement === "string" ? raw(statement) : statement;
          return tx.query<R>(one, { timeoutMs, lockTimeoutMs }).catch((error: unknown) => {
            if (!(error instanceof pg.DatabaseError && error.code === QUERY_CANCELED)) throw error;
            throw new SearchTooBroadError({ cause: error });
          });
        },
      });
    },
    { settings: SEARCH_SETTINGS },
  );
}

/**
 * One page of a listing, read through `tx`: the pool, or a search's transaction.
 *
 * A search first tests a window of the order's index from the cursor: at most
 * `bounds.window` books, enough for a page of a common word, read in a few milliseconds. A
 * page the window does not fill comes from the word index when the search has few matches:
 * they are all read, then sorted (the planner cannot tell a rare word from a common one, so
 * they are read up to a bound). With many matches, the page is the window's, marked
 * partial, its cursor on the window's last book, where the next page goes on looking (as on
 * SQLite).
 */
async function readPage(tx: Queryable, query: BookQuery, bounds: SearchBounds): Promise<BookPage> {
  const filters = filterConditions(query);
  if (query.search === undefined || query.search.length === 0) {
    return readPageOf(tx, query, booksFor(query.sort, query), filters);
  }
  const match = sql`(title_words || author_words) @@ ${tsquery(query.search)}::tsquery`;
  const sort = query.sort ?? "id";
  const [way, back] = query.descending ? [raw("DESC"), raw("ASC")] : [raw("ASC"), raw("DESC")];
  const from = query.after === 0 ? empty : sql`WHERE ${cursorCondition(query)}`;
  // The filters are tested on the window's books, not read through an index.
  const window = sql`(SELECT * FROM ${booksFor(sort, {})} ${from}
    ORDER BY ${SORT_KEYS[sort].key} ${way}, id ${way} LIMIT ${bounds.window})`;
  const inWindow = [eachTermMatches(query.search), ...filters];
  const page = await readPageOf(tx, query, sql`${window} AS books`, inWindow);
  if (page.count === query.limit) return page;
  const value = raw(sort === "id" ? "NULL::text" : sort);
  const [last] = await tx.query<{ n: number; id: number; k: string | number | null }>(
    sql`SELECT count(*) OVER ()::integer AS n, id, ${value} AS k FROM ${window} AS w
      ORDER BY ${SORT_KEYS[sort].key} ${back}, id ${back} LIMIT 1`,
  );
  // The window held every book left in the listing's order: the page is whole.
  if (last === undefined || last.n < bounds.window) return page;
  // The matches, up to one more than few, read through the word index once: the page is
  // theirs when they are few (OFFSET 0 keeps the subquery planned apart).
  const [few] = await tx.query<BookPage & { n: number }>(sql`WITH m AS MATERIALIZED (
      SELECT id, title, author, year, title_key, author_key FROM books WHERE ${match}
      LIMIT ${bounds.fewMatches + 1} OFFSET 0)
    SELECT p.*, (SELECT count(*)::integer FROM m) AS n
    FROM (${pageSql(query, raw("m"), filters)}) p`);
  if (few !== undefined && few.n <= bounds.fewMatches) {
    const { n: _, ...fewPage } = few;
    return fewPage;
  }
  return { ...page, lastId: last.id, lastKey: last.k, partial: true };
}

/**
 * The word index's test, book by book: each term in the title or in the author. Without
 * joining the two tsvectors first, a window is tested three times faster
 * (docs/performance.md).
 */
function eachTermMatches(terms: readonly SearchTerm[]): Fragment {
  return terms
    .map((term) => {
      const words = tsquery([term]);
      return sql`(title_words @@ ${words}::tsquery OR author_words @@ ${words}::tsquery)`;
    })
    .reduce(and);
}

/** The condition that starts a listing after its cursor. */
function cursorCondition(query: BookQuery): Fragment {
  const sort = query.sort ?? "id";
  const past = raw(query.descending ? "<" : ">");
  const { key, cursor } = SORT_KEYS[sort];
  return sort === "id"
    ? sql`id ${past} ${query.after}`
    : sql`(${key}, id) ${past} (${cursor(query.afterKey ?? "")}, ${query.after})`;
}

async function readPageOf(
  tx: Queryable,
  query: BookQuery,
  books: Fragment,
  conditions: Fragment[],
): Promise<BookPage> {
  const [page] = await tx.query<BookPage>(pageSql(query, books, conditions));
  return page as BookPage;
}

/** The statement of one page of `books` (a table, a subquery or a CTE's name). */
function pageSql(query: BookQuery, books: Fragment, conditions: Fragment[]): Fragment {
  const sort = query.sort ?? "id";
  if (sort === "id" && !query.descending) {
    // The common case, kept to one pass: ascending ids, the last of them the greatest.
    const where = [sql`id > ${query.after}`, ...conditions].reduce(and);
    // row_to_json writes compact JSON, as the SQLite store and the serializer do.
    return sql`SELECT
        coalesce(string_agg(row_to_json(b)::text, ',' ORDER BY b.id), '') AS json,
        count(*)::integer AS count, coalesce(max(b.id), 0) AS "lastId", NULL AS "lastKey"
      FROM (SELECT id, title, author, year FROM ${books}
            WHERE ${where} ORDER BY id LIMIT ${query.limit}) b`;
  }
  // Sorted by s (the field's sort key, or the id again), then the id.
  const { key } = SORT_KEYS[sort];
  const [way, back] = query.descending ? [raw("DESC"), raw("ASC")] : [raw("ASC"), raw("DESC")];
  const all = query.after === 0 ? conditions : [cursorCondition(query), ...conditions];
  const where = all.length > 0 ? sql`WHERE ${all.reduce(and)}` : empty;
  const value = raw(sort === "id" ? "NULL::text" : sort);
  return sql`WITH page AS (
      SELECT id, title, author, year, ${value} AS k, ${key} AS s FROM ${books} ${where}
      ORDER BY ${key} ${way}, id ${way} LIMIT ${query.limit})
    SELECT coalesce(string_agg(row_to_json(b)::text, ',' ORDER BY p.s ${way}, p.id ${way}), '')
        AS json,
      count(*)::integer AS count,
      coalesce((array_agg(p.id ORDER BY p.s ${back}, p.id ${back}))[1], 0) AS "lastId",
      (array_agg(p.k ORDER BY p.s ${back}, p.id ${back}))[1] AS "lastKey"
    FROM page p, LATERAL (SELECT p.id, p.title, p.author, p.year) b`;
}

/** The conditions of the author and year filters. */
function filterConditions(filters: BookFilters): Fragment[] {
  const conditions: Fragment[] = [];
  if (filters.author !== undefined) {
    // The index is on the author's sort key; the second test keeps the match exact.
    conditions.push(sql`author_key = ${sortKey(filters.author)} AND author = ${filters.author}`);
  }
  if (filters.year !== undefined) conditions.push(sql`year = ${filters.year}`);
  return conditions;
}

/**
 * Each order's sort key, as its index is built, and a cursor's value made comparable to it.
 * Titles and authors compare by their sort keys (rules/search.ts), in the columns' "C"
 * collation: code point order, as SQLite's BINARY.
 */
function sortKeysOf(): Record<SortField, SortKey> {
  const byText = (column: "title_key" | "author_key") => ({
    key: raw(column),
    cursor: (value: string | number) => sql`${sortKey(String(value))}::text COLLATE "C"`,
  });
  return {
    id: { key: raw("id"), cursor: () => raw("NULL") },
    title: byText("title_key"),
    author: byText("author_key"),
    year: { key: raw("year"), cursor: (value) => sql`${Number(value)}::integer` },
  };
}
