// Listing pages, searches and counts on PostgreSQL: one statement per page, searches bounded
// in the books they test and under a time limit.
import sql, { empty, raw, type Sql } from "sql-template-tag";
import { sortKey } from "../../rules/search.js";
import type { BookFilters, BookPage, BookQuery, SortField } from "../store.js";
import type { Db, Queryable } from "./pool.js";
import { tsquery } from "./search-index.js";

/** How much work one search may do; tests make it small. */
export interface SearchBounds {
  /** A search matching at most this many books reads them all from the word index, then sorts. */
  fewMatches: number;
  /** A search matching more tests at most this many books a page (see searchSource). */
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
  /** Runs `read` in a transaction whose statements stop at the searches' time limit. */
  const limited = <T>(read: (tx: Queryable) => Promise<T>) =>
    db.transaction(async (tx) => {
      await tx.query(sql`SELECT set_config('statement_timeout', ${String(searchTimeoutMs)}, true)`);
      return read(tx);
    });

  return {
    list: (query) =>
      query.search === undefined || query.search.length === 0
        ? readPage(db, query, bounds)
        : limited((tx) => readPage(tx, query, bounds)),
    count(filters) {
      const conditions = filterConditions(filters);
      const count = async (tx: Queryable) => {
        const where = conditions.length > 0 ? sql`WHERE ${conditions.reduce(and)}` : empty;
        const [row] = await tx.query<{ count: number }>(
          sql`SELECT count(*) AS count FROM books ${where}`,
        );
        return Number(row?.count ?? 0);
      };
      if (filters.search === undefined || filters.search.length === 0) return count(db);
      // Every match is read to count it: under the searches' time limit.
      conditions.push(sql`(title_words || author_words) @@ ${tsquery(filters.search)}::tsquery`);
      return limited(count);
    },
  };
}

/**
 * The books a search reads from. The planner cannot tell a rare word from a common one
 * (prefix queries, and words below the statistics' most common ones, get one estimate), and
 * walking the order's index for a rare word reads the whole table. So count up to a bound
 * first: few matches are read through the word index alone (OFFSET 0 keeps that subquery
 * planned apart), then sorted. Many are looked for in a window of the order's index from
 * the cursor: at most `bounds.window` books are tested, and a page not full by then is answered as it
 * is, marked partial (see readPage), as on SQLite.
 */
async function searchSource(
  tx: Queryable,
  query: BookQuery,
  conditions: Fragment[],
  bounds: SearchBounds,
) {
  if (query.search === undefined || query.search.length === 0) return { books: raw("books") };
  const match = sql`(title_words || author_words) @@ ${tsquery(query.search)}::tsquery`;
  const [probe] = await tx.query<{ n: number }>(sql`SELECT count(*)::integer AS n
    FROM (SELECT 1 FROM books WHERE ${match} LIMIT ${bounds.fewMatches + 1}) m`);
  if ((probe?.n ?? 0) <= bounds.fewMatches) {
    return {
      books: sql`(SELECT id, title, author, year, title_key, author_key FROM books
        WHERE ${match} OFFSET 0) AS books`,
    };
  }
  conditions.push(match);
  const { key } = SORT_KEYS[query.sort ?? "id"];
  const way = raw(query.descending ? "DESC" : "ASC");
  const from = query.after === 0 ? empty : sql`WHERE ${cursorCondition(query)}`;
  const window = sql`(SELECT * FROM books ${from}
    ORDER BY ${key} ${way}, id ${way} LIMIT ${bounds.window})`;
  return { books: sql`${window} AS books`, window };
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

/**
 * One page of a listing, read through `tx`: the pool, or a search's transaction. A search's
 * page read from a window and not full is partial when the window was: its cursor is then
 * the window's last book, where the next page goes on looking.
 */
async function readPage(tx: Queryable, query: BookQuery, bounds: SearchBounds): Promise<BookPage> {
  const conditions: Fragment[] = [];
  const { books, window } = await searchSource(tx, query, conditions, bounds);
  conditions.push(...filterConditions(query));
  const page = await readPageOf(tx, query, books, conditions);
  if (window === undefined || page.count === query.limit) return page;
  const sort = query.sort ?? "id";
  const back = raw(query.descending ? "ASC" : "DESC");
  const value = raw(sort === "id" ? "NULL::text" : sort);
  const [last] = await tx.query<{ n: number; id: number; k: string | number | null }>(
    sql`SELECT count(*) OVER ()::integer AS n, id, ${value} AS k FROM ${window} AS w
      ORDER BY ${SORT_KEYS[sort].key} ${back}, id ${back} LIMIT 1`,
  );
  if (last === undefined || last.n < bounds.window) return page;
  return { ...page, lastId: last.id, lastKey: last.k, partial: true };
}

async function readPageOf(
  tx: Queryable,
  query: BookQuery,
  books: Fragment,
  conditions: Fragment[],
): Promise<BookPage> {
  const sort = query.sort ?? "id";
  if (sort === "id" && !query.descending) {
    // The common case, kept to one pass: ascending ids, the last of them the greatest.
    const where = [sql`id > ${query.after}`, ...conditions].reduce(and);
    // row_to_json writes compact JSON, as the SQLite store and the serializer do.
    const [page] = await tx.query<BookPage>(sql`SELECT
        coalesce(string_agg(row_to_json(b)::text, ',' ORDER BY b.id), '') AS json,
        count(*)::integer AS count, coalesce(max(b.id), 0) AS "lastId", NULL AS "lastKey"
      FROM (SELECT id, title, author, year FROM ${books}
            WHERE ${where} ORDER BY id LIMIT ${query.limit}) b`);
    return page as BookPage;
  }
  return readSortedPage(tx, query, books, conditions);
}

/** A page sorted by s (the field's sort key, or the id again), then the id. */
async function readSortedPage(
  tx: Queryable,
  query: BookQuery,
  books: Fragment,
  conditions: Fragment[],
) {
  const sort = query.sort ?? "id";
  const { key } = SORT_KEYS[sort];
  const [way, back] = query.descending ? [raw("DESC"), raw("ASC")] : [raw("ASC"), raw("DESC")];
  if (query.after !== 0) conditions.unshift(cursorCondition(query));
  const where = conditions.length > 0 ? sql`WHERE ${conditions.reduce(and)}` : empty;
  const value = raw(sort === "id" ? "NULL::text" : sort);
  const [page] = await tx.query<BookPage>(sql`WITH page AS (
      SELECT id, title, author, year, ${value} AS k, ${key} AS s FROM ${books} ${where}
      ORDER BY ${key} ${way}, id ${way} LIMIT ${query.limit})
    SELECT coalesce(string_agg(row_to_json(b)::text, ',' ORDER BY p.s ${way}, p.id ${way}), '')
        AS json,
      count(*)::integer AS count,
      coalesce((array_agg(p.id ORDER BY p.s ${back}, p.id ${back}))[1], 0) AS "lastId",
      (array_agg(p.k ORDER BY p.s ${back}, p.id ${back}))[1] AS "lastKey"
    FROM page p, LATERAL (SELECT p.id, p.title, p.author, p.year) b`);
  return page as BookPage;
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
