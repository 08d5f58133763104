// Listing pages, searches and counts on PostgreSQL: one statement per page, searches under a
// time limit.
import type postgres from "postgres";
import type { BookFilters, BookPage, BookQuery, SortField } from "../store.js";
import { tsquery } from "./search-index.js";

/** A search matching at most this many books reads them all from the word index, then sorts. */
const FEW_MATCHES = 1_000;

type Fragment = postgres.PendingQuery<postgres.Row[]>;
type Db = postgres.Sql | postgres.TransactionSql;
interface SortKey {
  key: Fragment;
  cursor(value: string | number): Fragment;
}

export interface Listing {
  /** One page of the listing; a search runs within its time limit. */
  list(query: BookQuery): Promise<BookPage>;
  count(filters: BookFilters): Promise<number>;
}

export function createListing(sql: postgres.Sql, searchTimeoutMs: number): Listing {
  const and = (all: Fragment, condition: Fragment) => sql`${all} AND ${condition}`;
  const sortKeys = sortKeysOf(sql);
  /** Runs `read` in a transaction whose statements stop at the searches' time limit. */
  const limited = <T>(read: (tx: postgres.TransactionSql) => Promise<T>) =>
    sql.begin(async (tx) => {
      await tx`SELECT set_config('statement_timeout', ${String(searchTimeoutMs)}, true)`;
      return read(tx);
    }) as Promise<T>;

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

  /**
   * The books a search reads from. The planner cannot tell a rare word from a common one
   * (prefix queries, and words below the statistics' most common ones, get one estimate), and
   * walking the order's index for a rare word reads the whole table. So count up to a bound
   * first: few matches are read through the word index alone (OFFSET 0 keeps that subquery
   * planned apart), then sorted; many are found soon enough walking the order's index.
   * (Wrapped in an object: a fragment is a thenable, which an async function would run.)
   */
  async function searchSource(db: Db, query: BookQuery, conditions: Fragment[]) {
    if (query.search === undefined || query.search.length === 0) return { books: sql`books` };
    const match = sql`(title_words || author_words) @@ ${tsquery(query.search)}::tsquery`;
    const [probe] = await db<{ n: number }[]>`SELECT count(*)::integer AS n
      FROM (SELECT 1 FROM books WHERE ${match} LIMIT ${FEW_MATCHES + 1}) m`;
    if ((probe?.n ?? 0) <= FEW_MATCHES) {
      return {
        books: sql`(SELECT id, title, author, year FROM books WHERE ${match} OFFSET 0) AS books`,
      };
    }
    conditions.push(match);
    return { books: sql`books` };
  }

  /** One page of a listing, read through `db`: the pool, or a search's transaction. */
  async function readPage(db: Db, query: BookQuery): Promise<BookPage> {
    const conditions: Fragment[] = [];
    const { books } = await searchSource(db, query, conditions);
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
    return readSortedPage(db, query, books, conditions);
  }

  /** A page sorted by s (the field's sort key, or the id again), then the id. */
  async function readSortedPage(db: Db, query: BookQuery, books: Fragment, conditions: Fragment[]) {
    const sort = query.sort ?? "id";
    const { key, cursor } = sortKeys[sort];
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

  return {
    list: (query) =>
      query.search === undefined || query.search.length === 0
        ? readPage(sql, query)
        : limited((tx) => readPage(tx, query)),
    count(filters) {
      const conditions = filterConditions(filters);
      const count = async (db: Db) => {
        const where = conditions.length > 0 ? sql`WHERE ${conditions.reduce(and)}` : sql``;
        const [row] = await db<{ count: string }[]>`SELECT count(*) AS count FROM books ${where}`;
        return Number(row?.count ?? 0);
      };
      if (filters.search === undefined || filters.search.length === 0) return count(sql);
      // Every match is read to count it: under the searches' time limit.
      conditions.push(sql`(title_words || author_words) @@ ${tsquery(filters.search)}::tsquery`);
      return limited(count);
    },
  };
}

/**
 * Each order's sort key, as its index is built, and a cursor's value made comparable to it.
 * Titles and authors compare as lower-case bytes ("C"): the order SQLite's NOCASE gives ASCII.
 */
function sortKeysOf(sql: postgres.Sql): Record<SortField, SortKey> {
  const byText = (column: "title" | "author") => ({
    key: sql`lower(${sql(column)}) COLLATE "C"`,
    cursor: (value: string | number) => sql`lower(${String(value)}) COLLATE "C"`,
  });
  return {
    id: { key: sql`id`, cursor: () => sql`NULL` },
    title: byText("title"),
    author: byText("author"),
    year: { key: sql`year`, cursor: (value) => sql`${Number(value)}::integer` },
  };
}
