// Pages reached other than by Next: the last page, the page before one reached so, and the
// page that holds a given book. The listing pages by a cursor, never an offset, so each is
// found by reading the listing in the reverse order from a book, and starting the page
// after the book found there.

import type { Book, BookCatalogueClient, ListQuery, SortOrder } from "book-catalogue";
import { PAGE_SIZE } from "./query.js";

/** A page to show: its query, its number, and how many books the pages before it hold. */
export interface Jump {
  query: ListQuery;
  page: number;
  shownBefore: number;
}

// Finding a book's page reads the books before it: at most this many (a few requests).
const READ_AT_MOST = 10_000;

const reverse = (sort: SortOrder): SortOrder =>
  sort.startsWith("-") ? (sort.slice(1) as SortOrder) : (`-${sort}` as SortOrder);

/** The first page of the query's search and order. */
export function firstPage(query: ListQuery): ListQuery {
  const { q, sort } = query;
  return { limit: PAGE_SIZE, sort: sort ?? "id", ...(q ? { q } : {}) };
}

/** The query of the page that starts after `book`, in the order of `query`. */
function after(query: ListQuery, book: Book): ListQuery {
  const start = firstPage(query);
  const field = start.sort?.replace("-", "") as keyof Book | "id";
  const key = field === "id" ? {} : { afterKey: book[field] };
  return { ...start, after: book.id, ...key };
}

/** Up to `n` books of the listing from `query` on (a search may answer a page short). */
async function take(client: BookCatalogueClient, query: ListQuery, n: number) {
  const books: Book[] = [];
  let next: ListQuery | undefined = query;
  while (next && books.length < n) {
    const page = await client.listPage({ ...next, limit: Math.min(1000, n - books.length) });
    books.push(...page.books);
    next = page.next;
  }
  return books;
}

/** The books before `book` in the order of `query`, nearest first, up to `n`. */
function before(client: BookCatalogueClient, query: ListQuery, book: Book, n: number) {
  const start = firstPage(query);
  return take(client, after({ ...start, sort: reverse(start.sort ?? "id") }, book), n);
}

/** The page `page` (from 1), given the books before its first one, nearest first. */
function pageFrom(query: ListQuery, page: number, earlier: Book[]): Jump {
  const shownBefore = (page - 1) * PAGE_SIZE;
  const cursor = earlier[earlier.length - shownBefore];
  if (page <= 1 || cursor === undefined)
    return { query: firstPage(query), page: 1, shownBefore: 0 };
  return { query: after(query, cursor), page, shownBefore };
}

/**
 * Where the page of `query` is, which starts after its cursor: how many books come before it
 * (the cursor's book among them, if it still exists), and so its number; undefined when more
 * than READ_AT_MOST books come before it.
 */
export async function placeOf(client: BookCatalogueClient, query: ListQuery) {
  const { after: id, afterKey } = query;
  if (id === undefined) return { page: 1, shownBefore: 0 };
  const start = firstPage(query);
  const back = { ...start, sort: reverse(start.sort ?? "id"), after: id };
  const earlier = await take(
    client,
    afterKey === undefined ? back : { ...back, afterKey },
    READ_AT_MOST + 1,
  );
  if (earlier.length > READ_AT_MOST) return undefined;
  const cursor = await client.getBook(id).then(
    () => 1,
    () => 0,
  );
  const shownBefore = earlier.length + cursor;
  return { page: Math.round(shownBefore / PAGE_SIZE) + 1, shownBefore };
}

/** The last of the pages that `total` books fill. */
export async function lastPage(client: BookCatalogueClient, query: ListQuery, total: number) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const onLast = total - (pages - 1) * PAGE_SIZE;
  const start = firstPage(query);
  const last = await take(client, { ...start, sort: reverse(start.sort ?? "id") }, onLast + 1);
  // Counted a moment ago: should books have gone since, the first page is still right.
  if (pages === 1 || last.length <= onLast) return pageFrom(query, 1, []);
  return { query: after(query, last[onLast] as Book), page: pages, shownBefore: total - onLast };
}

/** The page before page `page`, whose first book is `first`. */
export async function pageBefore(
  client: BookCatalogueClient,
  query: ListQuery,
  first: Book,
  page: number,
): Promise<Jump> {
  const earlier = await before(client, query, first, PAGE_SIZE + 1);
  if (earlier.length <= PAGE_SIZE) return pageFrom(query, 1, []);
  const shownBefore = (page - 2) * PAGE_SIZE;
  return { query: after(query, earlier[PAGE_SIZE] as Book), page: page - 1, shownBefore };
}

/**
 * The page that holds `book` in the order of `query`, within its search when the book matches
 * it, else in the whole catalogue; undefined when more than READ_AT_MOST books come before it.
 */
export async function pageOf(
  client: BookCatalogueClient,
  query: ListQuery,
  book: Book,
): Promise<Jump | undefined> {
  const earlier = await before(client, query, book, READ_AT_MOST + 1);
  if (earlier.length > READ_AT_MOST) return undefined;
  if (query.q) {
    const from = earlier[0] ? after(query, earlier[0]) : firstPage(query);
    const [found] = await take(client, from, 1);
    if (found?.id !== book.id) return pageOf(client, { ...query, q: undefined }, book);
  }
  const page = Math.floor(earlier.length / PAGE_SIZE) + 1;
  return pageFrom(query, page, earlier);
}
