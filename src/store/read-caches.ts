// What a store keeps of what it read: listing pages within a memory budget, and (SQLite) books
// by id. When what is kept may answer is each store's own rule: sqlite/kept-reads.ts and
// postgres/kept-reads.ts.
import type { Book } from "../rules/book.js";
import type { BookPage } from "./store.js";

/** Listing pages by query, within a memory budget. Knows nothing of the database behind it. */
export interface PageCache {
  get(key: string): BookPage | undefined;
  /** Keeps the page, making room by forgetting the oldest pages; a page over the budget is not kept. */
  set(key: string, page: BookPage): void;
  clear(): void;
  /** Pages held. */
  readonly size: number;
  /** What the held pages count against the budget. */
  readonly bytes: number;
}

export interface PageCacheOptions {
  maxBytes: number;
  maxEntries: number;
}

/** The budget of the listing caches: 8 MiB, counted as below. */
export const PAGE_CACHE_BYTES = 8 * 1024 * 1024;
/** Pages at most, whatever their size. */
export const PAGE_CACHE_ENTRIES = 10_000;

// What an entry costs beyond its strings' characters: the Map's slot, the page object and the
// string headers, counted with room to spare over what V8 was seen to use (docs/performance.md).
const ENTRY_OVERHEAD_BYTES = 384;

/**
 * What an entry costs: its key and its page. Characters count two bytes each, V8's wider
 * string form, so the count is an upper bound whatever the text; empty pages count too, so
 * distinct queries that find nothing cannot grow the cache past its budget.
 */
export function pageCost(key: string, page: BookPage): number {
  const lastKey = typeof page.lastKey === "string" ? page.lastKey.length : 0;
  return ENTRY_OVERHEAD_BYTES + 2 * (key.length + page.json.length + lastKey);
}

export function createPageCache(
  options: PageCacheOptions = { maxBytes: PAGE_CACHE_BYTES, maxEntries: PAGE_CACHE_ENTRIES },
): PageCache {
  const { maxBytes, maxEntries } = options;
  // A Map iterates in insertion order, so its first entry is the oldest.
  const pages = new Map<string, { page: BookPage; cost: number }>();
  let bytes = 0;

  const forget = (key: string) => {
    const entry = pages.get(key);
    if (entry === undefined) return;
    pages.delete(key);
    bytes -= entry.cost;
  };

  return {
    get: (key) => pages.get(key)?.page,
    set(key, page) {
      forget(key);
      const cost = pageCost(key, page);
      if (cost > maxBytes || maxEntries < 1) return;
      for (const oldest of pages.keys()) {
        if (bytes + cost <= maxBytes && pages.size < maxEntries) break;
        forget(oldest);
      }
      pages.set(key, { page, cost });
      bytes += cost;
    },
    clear() {
      pages.clear();
      bytes = 0;
    },
    get size() {
      return pages.size;
    },
    get bytes() {
      return bytes;
    },
  };
}

/**
 * Books read by id kept at most: about 2 MB of typical books, 17 MB if every title and author
 * were as long as allowed. Past it, the oldest kept go first.
 */
export const BOOK_CACHE_ENTRIES = 10_000;

/** Books by id, kept until a commit changes them. */
export function createBookCache(maxEntries = BOOK_CACHE_ENTRIES): BookCache {
  const books = new Map<number, Book>();
  return {
    get: (id: number) => books.get(id),
    set(book: Book) {
      if (books.size >= maxEntries) books.delete(books.keys().next().value as number);
      books.set(book.id, book);
    },
    forget: (id: number) => void books.delete(id),
    clear: () => books.clear(),
  };
}

export interface BookCache {
  get(id: number): Book | undefined;
  set(book: Book): void;
  forget(id: number): void;
  clear(): void;
}
