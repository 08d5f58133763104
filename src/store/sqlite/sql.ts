// The SQL of listings, searches and counts: one statement per shape, built once.
import type { SQLInputValue } from "node:sqlite";
import { sortKey } from "../../rules/search.js";
import type { BookFilters, BookQuery, SortField } from "../store.js";

/** What shapes a listing statement: its order, whether it starts after a cursor, its filters. */
export interface ListKind {
  sort: SortField;
  descending: boolean;
  cursor: boolean;
  /** A search whose few matching ids are given. */
  few: boolean;
  author: boolean;
  year: boolean;
}

export function listKind(query: BookQuery, ids?: string): ListKind {
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
export function listParameters(query: BookQuery, ids?: string) {
  const kind = listKind(query, ids);
  // Only the parameters the statement names: node:sqlite refuses any other.
  const parameters: Record<string, SQLInputValue> = { limit: query.limit };
  if (kind.cursor || (kind.sort === "id" && !kind.descending)) parameters.after = query.after;
  if (kind.cursor && kind.sort !== "id") parameters.afterKey = cursorKey(kind.sort, query.afterKey);
  if (ids !== undefined) parameters.ids = ids;
  Object.assign(parameters, filterParameters(query));
  return { kind, parameters };
}

/** The parameters of the author and year filters. */
export function filterParameters(filters: BookFilters): Record<string, SQLInputValue> {
  const parameters: Record<string, SQLInputValue> = {};
  if (filters.author !== undefined) {
    parameters.author = filters.author;
    parameters.authorKey = sortKey(filters.author);
  }
  if (filters.year !== undefined) parameters.year = filters.year;
  return parameters;
}

/** A cursor's sort value as the order's column holds it: a title or author as its sort key. */
export function cursorKey(sort: SortField, afterKey: string | number | undefined): SQLInputValue {
  if (afterKey === undefined) return null;
  return sort === "title" || sort === "author" ? sortKey(String(afterKey)) : afterKey;
}

// The column each order reads: titles and authors by their sort keys (rules/search.ts), as
// their indexes are built.
const ORDER_COLUMN: Record<SortField, string> = {
  id: "id",
  title: "title_key",
  author: "author_key",
  year: "year",
};

/** The condition that starts a sorted listing after its cursor. */
function cursorCondition(kind: ListKind, past: string): string {
  return kind.sort === "id"
    ? `id ${past} @after`
    : `(${ORDER_COLUMN[kind.sort]}, id) ${past} (@afterKey, @after)`;
}

/** The conditions of the author and year filters. */
function filterConditions(kind: { author: boolean; year: boolean }): string[] {
  const conditions: string[] = [];
  // The index is on the author's sort key; the second test keeps the match exact.
  if (kind.author) conditions.push("author_key = @authorKey AND author = @author");
  if (kind.year) conditions.push("year = @year");
  return conditions;
}

export function listSql(kind: ListKind): string {
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
  // Sorted by the field's column (or the id again), then the id; `last` is the page's last
  // book, its field (k) the next cursor's key.
  const column = ORDER_COLUMN[kind.sort];
  const [way, back, past] = kind.descending ? ["DESC", "ASC", "<"] : ["ASC", "DESC", ">"];
  if (kind.cursor) conditions.unshift(cursorCondition(kind, past));
  const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
  return `WITH page AS (
      SELECT id, ${kind.sort} AS k, ${column} AS s, ${json} AS json FROM ${books} ${where}
      ORDER BY ${column} ${way}, id ${way} LIMIT @limit),
    last AS (SELECT id, k FROM page ORDER BY s ${back}, id ${back} LIMIT 1)
    SELECT (SELECT coalesce(group_concat(json, ',' ORDER BY s ${way}, id ${way}), '')
        FROM page) AS json,
      (SELECT count(*) FROM page) AS count,
      coalesce((SELECT id FROM last), 0) AS lastId,
      (SELECT ${kind.sort === "id" ? "NULL" : "k"} FROM last) AS lastKey`;
}

/** Counts the books matching a search, an author, a year, or any of them together. */
export function countSql(shape: { search: boolean; author: boolean; year: boolean }): string {
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
export function scanSql(kind: ListKind): string {
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
    ORDER BY ${ORDER_COLUMN[kind.sort]} ${way}, id ${way} LIMIT @window`;
}
