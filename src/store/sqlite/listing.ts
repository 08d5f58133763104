// Listing pages and searches on SQLite: the page a query selects, read from the
// statement of its shape, and kept until the database's version moves.
import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from "node:sqlite";
import type { Book } from "../../rules/book.js";
import { matchesTerms, type SearchTerm } from "../../rules/search.js";
import { type BookPage, type BookQuery, pageKey, searchTimeLeft } from "../store.js";
import type { KeptReads } from "./kept-reads.js";
import { matchExpression } from "./search-index.js";
import { cursorKey, type ListKind, listKind, listParameters, listSql, scanSql } from "./sql.js";

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
  /**
   * The time limit of one request's search, its pages and its exact count (read in the
   * counter's thread, see count.ts) together, in milliseconds (BookQuery.searchStarted): a
   * read that would begin or end past it is refused as too broad, as on PostgreSQL.
   */
  limitMs: number;
}

// Chosen so that neither read holds the event loop for long at a million books: see
// docs/performance.md.
export const SEARCH_BOUNDS: SearchBounds = { fewMatches: 5_000, window: 2_000, limitMs: 2_000 };

export interface Listing {
  list(query: BookQuery): BookPage;
}

/** Reads listing pages, kept in `kept` until the catalogue changes. */
export function createListing(db: DatabaseSync, kept: KeptReads, bounds: SearchBounds): Listing {
  const statementFor = preparedByShape(db);
  const matchesStmt = db.prepare(
    "SELECT rowid AS id FROM books_search WHERE books_search MATCH ? LIMIT ?",
  );

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
    return scanPage(statementFor, bounds, query, query.search, match);
  }

  return {
    list: (query) =>
      kept.page(pageKey(query), () => {
        // A page reads a bounded window in a few milliseconds: checked before it begins.
        if (query.search?.length) searchTimeLeft(query.searchStarted, bounds.limitMs);
        return readPage(query);
      }),
  };
}

type StatementFor = <Shape>(toSql: (shape: Shape) => string, shape: Shape) => StatementSync;

/**
 * Listing, search and count statements (count.ts): one per shape, prepared when first
 * needed, so a request builds no SQL.
 */
export function preparedByShape(db: DatabaseSync): StatementFor {
  const statements = new Map<string, StatementSync>();
  return (toSql, shape) => {
    const key = `${toSql.name} ${JSON.stringify(shape)}`;
    let statement = statements.get(key);
    if (statement === undefined) {
      statement = db.prepare(toSql(shape));
      statements.set(key, statement);
    }
    return statement;
  };
}

/**
 * A search with many matches: books in the listing's order from the cursor, at most
 * `bounds.window` of them, tested here one by one until the page is full. By id the word
 * index gives them (each matches; the filters may still drop some); by a field, the field's
 * index. Reading stops at the page's last book, so a common word costs a page's worth.
 */
function scanPage(
  statementFor: StatementFor,
  bounds: SearchBounds,
  query: BookQuery,
  terms: readonly SearchTerm[],
  match: string,
): BookPage {
  const kind: ListKind = { ...listKind(query), author: false, year: false };
  const parameters: Record<string, SQLInputValue> = { window: bounds.window };
  if (kind.cursor) parameters.after = query.after;
  if (kind.cursor && kind.sort !== "id") parameters.afterKey = cursorKey(kind.sort, query.afterKey);
  if (kind.sort === "id") parameters.match = match;
  const books: Book[] = [];
  let examined = 0;
  let last: Record<string, SQLOutputValue> | undefined;
  for (const row of statementFor(scanSql, kind).iterate(parameters)) {
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
