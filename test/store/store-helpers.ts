// What the store's test files share: a book, how to read a page, and the checks that more than
// one store runs.

import assert from "node:assert/strict";
import type { Book } from "../../src/rules/book.js";
import { matchesTerms, searchTerms } from "../../src/rules/search.js";
import type {
  BookPage,
  BookQuery,
  BookStore,
  SortField,
  StoredBook,
} from "../../src/store/store.js";

export const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };
export const booksOf = (page: BookPage): Book[] => JSON.parse(`[${page.json}]`);

/** A book the store answered, as a body carries it: without when it last changed. */
export function asSent(book: StoredBook): Book;
export function asSent(book: StoredBook | undefined): Book | undefined;
export function asSent(book: StoredBook | undefined): Book | undefined {
  if (book === undefined) return undefined;
  const { changedAt: _, ...sent } = book;
  return sent;
}

/** After the event loop's current turn: what the store gathered in it has been handed on. */
export const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Books stored before the search index existed (migration v4). */
export const OLD_SHELF: [string, string, number][] = [
  ["Les Misérables", "Victor Hugo", 1862],
  ["Братья Карамазовы", "Фёдор Достоевский", 1880],
  ["The Hobbit", "J. R. R. Tolkien", 1937],
  ["Åsa-Nisse", "Stig Cederholm", 1944],
  ["海辺のカフカ", "村上春樹", 2002],
];
// Catalogues made by earlier builds: before the search index (v4), and before the sort keys
// and the words of scripts written without spaces (v7).
export const OLD_VERSIONS = [4, 7];

export async function assertOldShelfFound(store: BookStore) {
  const titles = async (q: string) =>
    booksOf(await store.list({ after: 0, limit: 10, search: searchTerms(q) })).map((b) => b.title);
  assert.deepEqual(await titles("miserables"), ["Les Misérables"]);
  assert.deepEqual(await titles("достоевск"), ["Братья Карамазовы"]);
  assert.deepEqual(await titles("tolk hobb"), ["The Hobbit"]);
  assert.deepEqual(await titles("カフカ 春樹"), ["海辺のカフカ"]);
  const byTitle = await store.list({ after: 0, limit: 10, sort: "title" });
  assert.deepEqual(
    booksOf(byTitle).map((b) => b.title),
    ["Åsa-Nisse", "Les Misérables", "The Hobbit", "Братья Карамазовы", "海辺のカフカ"],
  );
  const byYear = await store.list({ after: 0, limit: 10, sort: "year" });
  assert.deepEqual(
    booksOf(byYear).map((b) => b.year),
    [1862, 1880, 1937, 1944, 2002],
  );
  const of1937 = await store.list({ after: 0, limit: 10, year: 1937 });
  assert.deepEqual(
    booksOf(of1937).map((b) => b.title),
    ["The Hobbit"],
  );
  // And books written after the migration too.
  await store.create({ title: "The Silmarillion", author: "J. R. R. Tolkien", year: 1977 });
  assert.deepEqual(await titles("tolk"), ["The Hobbit", "The Silmarillion"]);
}

/**
 * Writes 300 books, then walks every search of several kinds in every order, page by page:
 * each walk gives every match once, in order, whatever pages the store's bounds cut short.
 */
export async function walksEveryMatch(store: BookStore): Promise<void> {
  const books: Book[] = [];
  for (let i = 0; i < 300; i++) {
    const book = await store.create({
      title: `${i % 13 === 0 ? "Common" : "Other"} ${String((i * 7919) % 300).padStart(3, "0")}`,
      author: `${i % 3 === 0 ? "Ann" : "Bob"} ${i % 11}`,
      year: 1900 + ((i * 31) % 50),
    });
    books.push(asSent(book));
  }
  // The titles and authors are ASCII of one case: byte order is the order they sort in.
  const text = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const orders: [SortField, boolean, (a: Book, b: Book) => number][] = [
    ["id", false, (a, b) => a.id - b.id],
    ["id", true, (a, b) => b.id - a.id],
    ["title", false, (a, b) => text(a.title, b.title) || a.id - b.id],
    ["title", true, (a, b) => text(b.title, a.title) || b.id - a.id],
    ["year", false, (a, b) => a.year - b.year || a.id - b.id],
    ["author", true, (a, b) => text(b.author, a.author) || b.id - a.id],
  ];
  let partialPages = 0;
  for (const q of ["common", "ann", "common ann", "oth bob", "bob 7"]) {
    const terms = searchTerms(q);
    const expected = books.filter((b) => matchesTerms(terms, b.title, b.author));
    for (const [sort, descending, compare] of orders) {
      for (const limit of [4, 50]) {
        const seen: Book[] = [];
        let query: BookQuery = { after: 0, limit, sort, descending, search: terms };
        for (let pages = 0; ; pages++) {
          assert.ok(pages < 400, "the walk ends");
          const page = await store.list(query);
          assert.ok(page.count <= limit);
          seen.push(...booksOf(page));
          if (page.partial) partialPages += 1;
          if (!page.partial && page.count < limit) break;
          query = { ...query, after: page.lastId, afterKey: page.lastKey ?? undefined };
        }
        const label = `q=${q} sort=${descending ? "-" : ""}${sort} limit=${limit}`;
        assert.deepEqual(seen, [...expected].sort(compare), label);
      }
    }
  }
  assert.ok(partialPages > 0, "some pages were cut short by the window");
}
